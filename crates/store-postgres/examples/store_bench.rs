//! Store figures beside Python's, in one run: put, get, filtered search and vector search
//! over 10 000 items on memory, SQLite and Postgres.
//!
//! `cargo run --release -p stategraph-store-postgres --example store_bench`
//! (env: `STATEGRAPH_PYTHON` = the pinned LangGraph venv's python for Python's column,
//! `STATEGRAPH_TEST_POSTGRES_URL` for the server; `STORE_BENCH_N` to change the size).

use serde_json::json;
use stategraph_store::{BaseStore, HashEmbedder, InMemoryStore, IndexConfig, Namespace, SearchOp};
use stategraph_store_postgres::PostgresStore;
use stategraph_store_sqlite::SqliteStore;
use std::sync::Arc;
use std::time::Instant;

const GETS: usize = 2000;
const SEARCHES: usize = 50;

fn value(i: usize) -> serde_json::Map<String, serde_json::Value> {
    let words = [
        "rust", "python", "garden", "music", "tea", "travel", "code", "books",
    ];
    let text = format!(
        "{} {} note {i}",
        words[i % words.len()],
        words[(i / 8) % words.len()]
    );
    json!({"text": text, "n": i, "group": i % 10, "nested": {"k": i % 100}})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn ns(i: usize) -> Namespace {
    Namespace::from(vec!["bench".to_owned(), format!("g{}", i % 10)])
}

/// Microseconds per op of each phase: put, get, filtered search, vector search.
async fn run(store: &dyn BaseStore, n: usize, vectors: bool) -> Vec<Option<f64>> {
    let t = Instant::now();
    for i in 0..n {
        store
            .put(ns(i), &format!("k{i}"), value(i))
            .await
            .expect("put");
    }
    let put = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let t = Instant::now();
    for j in 0..GETS {
        let i = (j * 7919) % n;
        let got = store.get(ns(i), &format!("k{i}")).await.expect("get");
        assert!(got.is_some());
    }
    let get = t.elapsed().as_secs_f64() * 1e6 / GETS as f64;
    let t = Instant::now();
    for j in 0..SEARCHES {
        let hits = store
            .search(
                SearchOp::new(["bench"])
                    .filter(json!({"n": {"$gte": n - 10 - j}, "group": (n - 1 - j) % 10}))
                    .limit(10),
            )
            .await
            .expect("search");
        assert!(!hits.is_empty());
    }
    let filtered = t.elapsed().as_secs_f64() * 1e6 / SEARCHES as f64;
    let vector = if vectors {
        let t = Instant::now();
        for j in 0..SEARCHES {
            let q = ["rust garden", "python music", "tea travel", "books code"][j % 4];
            let hits = store
                .search(SearchOp::new(["bench"]).query(q).limit(10))
                .await
                .expect("vector search");
            assert!(hits[0].score.is_some());
        }
        Some(t.elapsed().as_secs_f64() * 1e6 / SEARCHES as f64)
    } else {
        None
    };
    vec![Some(put), Some(get), Some(filtered), vector]
}

fn index() -> IndexConfig {
    IndexConfig::new(64, Arc::new(HashEmbedder { dims: 64 })).fields(["text"])
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("STORE_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    // `STORE_BENCH_BACKENDS=postgres` (comma-separated: memory, sqlite, postgres) runs
    // only those Rust rows; all three by default.
    let only = std::env::var("STORE_BENCH_BACKENDS").ok();
    let wanted = |name: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|b| b == name))
    };
    let mut rows: Vec<(String, Vec<Option<f64>>)> = Vec::new();

    if wanted("memory") {
        let mem = InMemoryStore::new().with_index(index());
        rows.push(("rust memory".into(), run(&mem, n, true).await));
    }

    let dir = std::env::temp_dir().join(format!("sg-store-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    if wanted("sqlite") {
        let sqlite = SqliteStore::open(dir.join("rust.db"))
            .expect("open")
            .with_index(index())
            .expect("vectors");
        rows.push(("rust sqlite".into(), run(&sqlite, n, true).await));
    }

    let admin = std::env::var("STATEGRAPH_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".into());
    let db = format!("sg_store_bench_{}", std::process::id());
    let pg_url = admin.rsplit_once('/').map(|(h, _)| format!("{h}/{db}"));
    let admin_client = match tokio_postgres::connect(&admin, tokio_postgres::NoTls).await {
        Ok((c, conn)) => {
            tokio::spawn(conn);
            Some(c)
        }
        Err(e) => {
            eprintln!("no postgres ({e}): skipping its rows");
            None
        }
    };
    if let (Some(c), Some(url), true) = (&admin_client, &pg_url, wanted("postgres")) {
        c.batch_execute(&format!("CREATE DATABASE {db}"))
            .await
            .expect("create db");
        let pg = PostgresStore::connect(url, 4)
            .await
            .expect("connect")
            .with_index(index())
            .await
            .expect("vectors");
        let name = format!("rust postgres ({:?})", pg.vector_backend());
        rows.push((name, run(&pg, n, true).await));
        drop(pg);
    }

    if let Ok(python) = std::env::var("STATEGRAPH_PYTHON") {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/store_bench.py");
        let out = std::process::Command::new(python)
            .args([
                script,
                &n.to_string(),
                dir.join("python.db").to_str().unwrap_or(""),
            ])
            .args(pg_url.as_deref().filter(|_| admin_client.is_some()))
            .output()
            .expect("run python");
        if !out.status.success() {
            eprintln!("python failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        let parsed: Vec<(String, Vec<Option<f64>>)> =
            serde_json::from_slice(&out.stdout).unwrap_or_default();
        rows.extend(parsed);
    }
    if let Some(c) = &admin_client {
        let _ = c
            .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
            .await;
    }
    let _ = std::fs::remove_dir_all(&dir);

    println!("{n} items; µs per op (get: {GETS} random keys; searches: {SEARCHES}, limit 10)");
    println!("| backend | put | get | filtered search | vector search |");
    println!("|---|---:|---:|---:|---:|");
    for (name, cols) in rows {
        let cells: Vec<String> = cols
            .iter()
            .map(|c| c.map_or("n/a".into(), |v| format!("{v:.0}")))
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
}
