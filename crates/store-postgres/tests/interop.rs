//! Interop with Python's `PostgresStore` (langgraph-checkpoint-postgres 3.2.0) on one
//! database: each side writes, each side reads everything, the answers agree.

#[path = "../../store-sqlite/tests/interop/common.rs"]
mod common;

use stategraph_store::{BaseStore, Namespace, TtlConfig};
use stategraph_store_postgres::PostgresStore;

fn admin_url() -> String {
    std::env::var("STATEGRAPH_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".into())
}

/// Drops the test database even when an assertion fails.
struct DropDb(String);

impl Drop for DropDb {
    fn drop(&mut self) {
        let db = self.0.clone();
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                if let Ok((c, conn)) =
                    tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls).await
                {
                    tokio::spawn(conn);
                    let _ = c
                        .batch_execute(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
                        .await;
                }
            });
        })
        .join();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_and_rust_share_a_postgres_store() {
    let Some(python) = common::python() else {
        return;
    };
    let db = format!("sg_store_interop_{}", uuid::Uuid::new_v4().simple());
    let (admin, conn) = tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls)
        .await
        .expect("postgres");
    tokio::spawn(conn);
    admin
        .batch_execute(&format!("CREATE DATABASE \"{db}\""))
        .await
        .expect("create database");
    let _cleanup = DropDb(db.clone());
    let url = {
        let base = admin_url();
        let (head, _) = base.rsplit_once('/').expect("url with a database");
        format!("{head}/{db}")
    };

    // Python creates the tables this time; Rust runs its (idempotent) setup after.
    common::peer(&python, "postgres", &url, "write");
    let store = PostgresStore::connect(&url, 2)
        .await
        .expect("connect")
        .with_ttl(TtlConfig::default());
    common::write_rust_items(&store).await;

    let from_python = common::peer(&python, "postgres", &url, "read");
    let from_rust = common::rust_answers(&store, "postgres").await;
    common::assert_same(&from_python, &from_rust);
    assert_eq!(
        from_rust["filter/n>=2"],
        serde_json::json!(["p2", "r1", "theme", "theme"])
    );
    assert!(store
        .get(Namespace::from(["py", "prefs"]), "theme")
        .await
        .expect("get")
        .is_some());
}

/// Without pgvector Python's `PostgresStore` runs without an index: it reads the items a
/// Rust store with an index wrote, and its delete also removes their vectors (the fallback
/// table's foreign key cascades), so Rust's vector search never returns a deleted item.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_reads_and_deletes_items_rust_indexed() {
    use stategraph_store::{HashEmbedder, IndexConfig, SearchOp};
    use std::sync::Arc;
    let Some(python) = common::python() else {
        return;
    };
    let db = format!("sg_store_vec_interop_{}", uuid::Uuid::new_v4().simple());
    let (admin, conn) = tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls)
        .await
        .expect("postgres");
    tokio::spawn(conn);
    admin
        .batch_execute(&format!("CREATE DATABASE \"{db}\""))
        .await
        .expect("create database");
    let _cleanup = DropDb(db.clone());
    let url = {
        let base = admin_url();
        let (head, _) = base.rsplit_once('/').expect("url with a database");
        format!("{head}/{db}")
    };
    let index = IndexConfig::new(16, Arc::new(HashEmbedder { dims: 16 })).fields(["text"]);
    let store = PostgresStore::connect(&url, 2)
        .await
        .expect("connect")
        .with_index(index)
        .await
        .expect("index");
    let ns = Namespace::from(["mem", "u1"]);
    for (key, text) in [
        ("a", "likes tea"),
        ("b", "likes coffee"),
        ("c", "hates rain"),
    ] {
        let value = serde_json::json!({ "text": text });
        store
            .put(
                ns.clone(),
                key,
                value.as_object().cloned().unwrap_or_default(),
            )
            .await
            .expect("put");
    }
    let script = r#"
import json, sys
from langgraph.store.postgres import PostgresStore
with PostgresStore.from_conn_string(sys.argv[1]) as s:
    s.setup()
    got = {i.key: i.value for i in s.search(("mem",), limit=10)}
    s.delete(("mem", "u1"), "b")
    print(json.dumps(got, sort_keys=True))
"#;
    let out = std::process::Command::new(&python)
        .args(["-c", script, &url])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        seen,
        serde_json::json!({"a": {"text": "likes tea"}, "b": {"text": "likes coffee"},
                           "c": {"text": "hates rain"}})
    );
    let hits = store
        .search(SearchOp::new(ns.clone()).query("likes coffee"))
        .await
        .expect("search");
    let keys: Vec<&str> = hits.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(!keys.contains(&"b"), "Python's delete is seen: {keys:?}");
    assert!(hits.iter().all(|h| h.score.is_some()));
    let table = match store.vector_backend() {
        Some(stategraph_store_postgres::VectorBackend::Pgvector) => "store_vectors",
        _ => "stategraph_store_vectors",
    };
    let client = store.pool().get().await.expect("client");
    let left: i64 = client
        .query_one(
            &format!("SELECT count(*) FROM {table} WHERE key = 'b'"),
            &[],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(left, 0, "the delete cascaded to the vectors");
}
