//! `SqliteCache`: the node cache in a SQLite file on Python's `SqliteCache` table. Entries
//! outlive the cache that wrote them (a second open of the file hits), expire as Python's
//! do, a row that cannot be read is a miss, and Python and Rust hit each other's entries
//! when their key functions give the same bytes (`tests/sqlite_cache/cache_graph.py`, run
//! with `STATEGRAPH_PYTHON`; skipped with a note without it unless `STATEGRAPH_INTEROP=1`).
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used)]

mod support;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::python::python;

use stategraph::channels::{BinaryOperatorAggregate, Channel, LastValue};
use stategraph::graph::{CompileOptions, NodeOptions};
use stategraph::pregel::cache::{CachePolicy, NodeCache};
use stategraph::pregel::sqlite_cache::{decode_writes, CacheRowError, SqliteCache};
use stategraph::{list, reducers, DynState, RunConfig, StateGraph, Value, END, START};

/// The key Python's test graph uses too: `str(x)`.
fn x_key(input: &Value) -> Vec<u8> {
    let x = input.get("x").and_then(Value::as_i64).unwrap_or(0);
    x.to_string().into_bytes()
}

/// `START -> square -> END` over `x` and a `log` reducer; counts `square`'s calls.
fn squaring(calls: &Arc<AtomicUsize>, policy: CachePolicy) -> StateGraph<DynState> {
    let channels: Vec<(String, Box<dyn Channel>)> = vec![
        ("x".into(), Box::new(LastValue::new())),
        (
            "log".into(),
            Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![]))),
        ),
    ];
    let mut g = StateGraph::<DynState>::with_channels(channels);
    let c = calls.clone();
    g.add_node_with(
        "square",
        move |s: DynState| {
            c.fetch_add(1, Ordering::SeqCst);
            let x = s.get("x").and_then(Value::as_i64).unwrap();
            async move { stategraph::update([("log", list![format!("sq:{}", x * x)])]) }
        },
        NodeOptions::new().cache(policy),
    );
    g.add_edge(START, "square").add_edge("square", END);
    g
}

/// Runs the graph once on `x` with a fresh open of the cache file; returns the log.
async fn run(calls: &Arc<AtomicUsize>, x: i64, cache: SqliteCache) -> Vec<String> {
    let policy = CachePolicy::default()
        .key(x_key)
        .ttl(Duration::from_secs(3600));
    let graph = squaring(calls, policy)
        .compile_with(CompileOptions::new().cache(cache.shared()))
        .unwrap();
    let out = graph
        .invoke(stategraph::update([("x", x)]), &RunConfig::default())
        .await
        .unwrap();
    out.get("log")
        .and_then(Value::as_list)
        .map(|l| {
            l.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn temp_file() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "stategraph-cache-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("cache.db")
}

fn sql(file: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(file).unwrap()
}

#[tokio::test]
async fn a_second_open_of_the_file_hits_the_first_ones_entries() {
    let file = temp_file();
    let calls = Arc::new(AtomicUsize::new(0));
    assert_eq!(
        run(&calls, 3, SqliteCache::open(&file).unwrap()).await,
        ["sq:9"]
    );
    assert_eq!(
        run(&calls, 3, SqliteCache::open(&file).unwrap()).await,
        ["sq:9"]
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the second run read the file"
    );
    assert_eq!(
        run(&calls, 4, SqliteCache::open(&file).unwrap()).await,
        ["sq:16"]
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2, "another input is a miss");

    // The row as Python writes it: its namespace, the hex digest of the key bytes, an
    // expiry an hour ahead, a msgpack deque of [channel, value] pairs.
    let (ns, key, expiry, encoding, val): (String, String, f64, String, Vec<u8>) = sql(&file)
        .query_row(
            "SELECT ns, key, expiry, encoding, val FROM cache WHERE key = ?1",
            [SqliteCache::key_column(
                &CachePolicy::default()
                    .key(x_key)
                    .key_of("square", &stategraph::map! {"x" => 3}),
            )],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(ns, "__pregel_ns_writes,__dynamic__,square");
    assert_eq!(key.len(), 32);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(
        expiry > now + 3000.0 && expiry <= now + 3600.0,
        "{expiry} vs {now}"
    );
    assert_eq!(encoding, "msgpack");
    assert_eq!(
        hex::encode(&val),
        "c71f0093ab636f6c6c656374696f6e73a564657175659192a36c6f6791a473713a39",
        "Python's bytes for deque([('log', ['sq:9'])])"
    );
}

#[test]
fn the_key_column_is_pythons_xxh3_128_hexdigest() {
    // Python: xxhash.xxh3_128_hexdigest(b"abc")
    let key = CachePolicy::default()
        .key(|_| b"abc".to_vec())
        .key_of("n", &Value::Nil);
    assert_eq!(
        SqliteCache::key_column(&key),
        "06b05ab6733a618578af5f94892f3950"
    );
    let cache = SqliteCache::open(temp_file())
        .unwrap()
        .identifier("n", "app.nodes.n");
    assert_eq!(cache.namespace("n"), "__pregel_ns_writes,app.nodes.n,n");
}

#[tokio::test]
async fn an_expired_entry_is_a_miss_and_is_deleted() {
    let file = temp_file();
    let calls = Arc::new(AtomicUsize::new(0));
    run(&calls, 3, SqliteCache::open(&file).unwrap()).await;
    // Python's test: expired once now > expiry.
    sql(&file)
        .execute("UPDATE cache SET expiry = 1.0", [])
        .unwrap();
    let cache = SqliteCache::open(&file).unwrap();
    let key = CachePolicy::default()
        .key(x_key)
        .key_of("square", &stategraph::map! {"x" => 3});
    assert_eq!(cache.get(&key), None);
    let rows: i64 = sql(&file)
        .query_row("SELECT count(*) FROM cache", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0, "the stale row is purged when read");
    assert_eq!(run(&calls, 3, cache).await, ["sq:9"]);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[test]
fn a_short_ttl_entry_expires_and_no_ttl_never_does() {
    let cache = SqliteCache::open(temp_file()).unwrap();
    let key = CachePolicy::default().key_of("n", &Value::from(1));
    let forever = CachePolicy::default().key_of("n", &Value::from(2));
    let writes = vec![("log".to_owned(), list!["a"])];
    cache.set(key.clone(), writes.clone(), Some(Duration::from_millis(1)));
    cache.set(forever.clone(), writes.clone(), None);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(cache.get(&key), None);
    assert_eq!(cache.get(&forever), Some(writes));
    cache.clear(Some("n"));
    assert_eq!(cache.get(&forever), None);
}

#[tokio::test]
async fn a_corrupted_row_is_a_miss_and_the_node_runs() {
    let file = temp_file();
    let calls = Arc::new(AtomicUsize::new(0));
    for (encoding, val) in [
        ("msgpack", vec![0xc1u8]),
        ("pickle", vec![0x80, 0x05]),
        ("msgpack", vec![0x07]),
    ] {
        run(&calls, 3, SqliteCache::open(&file).unwrap()).await;
        sql(&file)
            .execute(
                "UPDATE cache SET encoding = ?1, val = ?2",
                rusqlite::params![encoding, val],
            )
            .unwrap();
        let before = calls.load(Ordering::SeqCst);
        assert_eq!(
            run(&calls, 3, SqliteCache::open(&file).unwrap()).await,
            ["sq:9"]
        );
        assert_eq!(
            calls.load(Ordering::SeqCst),
            before + 1,
            "{encoding} {val:?}"
        );
    }
    assert!(matches!(
        decode_writes("msgpack", &[0xc1]),
        Err(CacheRowError::Decode(_))
    ));
    assert!(matches!(
        decode_writes("json", b"[]"),
        Err(CacheRowError::Encoding(_))
    ));
    assert!(matches!(
        decode_writes("msgpack", &[0x07]),
        Err(CacheRowError::Shape)
    ));
    // A list of pairs whose channel is not a string.
    assert!(matches!(
        decode_writes("msgpack", &[0x91, 0x92, 0x01, 0x02]),
        Err(CacheRowError::Shape)
    ));
}

#[test]
fn a_file_that_is_not_sqlite_is_a_typed_error() {
    let file = temp_file();
    std::fs::write(
        &file,
        b"this is not a database, just some bytes long enough",
    )
    .unwrap();
    assert!(SqliteCache::open(&file).is_err());
}

/// Python's run of its graph on `x`: `(log, calls)`.
fn python_run(python: &Path, file: &Path, x: i64) -> (Vec<String>, u64) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sqlite_cache/cache_graph.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(file)
        .arg(x.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = v["log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    (log, v["calls"].as_u64().unwrap())
}

/// The cache as Python's graph names its node (`square` of the script, run as `__main__`).
fn as_python(file: &Path) -> SqliteCache {
    SqliteCache::open(file)
        .unwrap()
        .identifier("square", "__main__.square")
}

#[tokio::test]
async fn rust_hits_an_entry_python_wrote() {
    let Some(python) = python() else { return };
    let file = temp_file();
    assert_eq!(python_run(&python, &file, 3), (vec!["sq:9".to_owned()], 1));
    let calls = Arc::new(AtomicUsize::new(0));
    assert_eq!(run(&calls, 3, as_python(&file)).await, ["sq:9"]);
    assert_eq!(calls.load(Ordering::SeqCst), 0, "Python's entry was used");
    // Without Python's identifier the namespace differs: a miss.
    assert_eq!(
        run(&calls, 3, SqliteCache::open(&file).unwrap()).await,
        ["sq:9"]
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn python_hits_an_entry_rust_wrote() {
    let Some(python) = python() else { return };
    let file = temp_file();
    let calls = Arc::new(AtomicUsize::new(0));
    assert_eq!(run(&calls, 4, as_python(&file)).await, ["sq:16"]);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        python_run(&python, &file, 4),
        (vec!["sq:16".to_owned()], 0),
        "Rust's entry was used"
    );
    assert_eq!(
        python_run(&python, &file, 5),
        (vec!["sq:25".to_owned()], 1),
        "another input is a miss"
    );
}
