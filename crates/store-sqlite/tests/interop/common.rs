//! Shared by the SQLite and Postgres interop tests: Rust and Python write items into one
//! database, then each side's answers about every item are compared.

use serde_json::{json, Map, Value};
use stategraph_store::{BaseStore, IndexSpec, ListNamespacesOp, Namespace, PutOp, SearchOp};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The venv Python, or `None` (skip) unless `STATEGRAPH_INTEROP=1` demands it.
pub(crate) fn python() -> Option<PathBuf> {
    let path = std::env::var_os("STATEGRAPH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/langgraph-venv/bin/python")
        });
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("STATEGRAPH_INTEROP").map_or(true, |v| v != "1"),
        "STATEGRAPH_INTEROP=1 but there is no Python at {path:?}"
    );
    println!("note: skipping: no venv Python at {path:?}");
    None
}

/// Runs the Python peer (`write` or `read`); returns its stdout as JSON for `read`.
pub(crate) fn peer(python: &Path, kind: &str, target: &str, mode: &str) -> Value {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../store-sqlite/tests/interop/store_peer.py");
    let out = Command::new(python)
        .arg(script)
        .args([kind, target, mode])
        .output()
        .expect("run the Python peer");
    assert!(
        out.status.success(),
        "python {mode} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    if mode == "read" {
        serde_json::from_slice(&out.stdout).expect("peer prints JSON")
    } else {
        Value::Null
    }
}

fn doc(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("object")
}

/// Rust's items (the Python peer reads them by these addresses).
pub(crate) async fn write_rust_items(store: &dyn BaseStore) {
    let put = |ns: &[&str], key: &str, v: Value, ttl: Option<f64>| PutOp {
        namespace: Namespace::from(ns),
        key: key.into(),
        value: Some(doc(v)),
        index: IndexSpec::Default,
        ttl,
    };
    let items = [
        put(
            &["rs", "docs"],
            "r1",
            json!({"text": "rust ownership borrow and lifetimes", "n": 5,
            "nested": {"ok": true, "tags": ["x", "é"]}, "f": 0.25, "none": null}),
            None,
        ),
        put(
            &["rs", "docs"],
            "r2",
            json!({"text": "gardening in spring", "n": 1}),
            None,
        ),
        put(
            &["rs", "prefs"],
            "theme",
            json!({"text": "light theme", "n": 2}),
            Some(60.0),
        ),
        put(
            &["rs", "docs"],
            "gone",
            json!({"text": "deleted soon", "n": 9}),
            None,
        ),
    ];
    for op in items {
        store.put_op(op).await.expect("rust put");
    }
    store
        .delete(Namespace::from(["rs", "docs"]), "gone")
        .await
        .expect("rust delete");
}

/// What Rust answers to the questions the peer's `read` answers (same JSON shape).
pub(crate) async fn rust_answers(store: &dyn BaseStore, kind: &str) -> Value {
    let mut out = Map::new();
    for (ns, key) in [
        (["rs", "docs"], "r1"),
        (["rs", "docs"], "r2"),
        (["rs", "prefs"], "theme"),
        (["py", "docs"], "p1"),
        (["py", "docs"], "p2"),
        (["py", "prefs"], "theme"),
        (["py", "docs"], "gone"),
    ] {
        let item = store.get(Namespace::from(ns), key).await.expect("get");
        out.insert(
            format!("get/{}/{key}", ns.join("/")),
            item.map_or(
                Value::Null,
                |i| json!({"value": Value::Object(i.value), "updated_at": i.updated_at.to_iso()}),
            ),
        );
    }
    let keys = |f: Value| async move {
        let mut k: Vec<String> = store
            .search(SearchOp::new(Namespace::default()).filter(f).limit(100))
            .await
            .expect("search")
            .into_iter()
            .map(|h| h.item.key)
            .collect();
        k.sort();
        json!(k)
    };
    out.insert("filter/n>=2".into(), keys(json!({"n": {"$gte": 2}})).await);
    // Only Python's SQLite store filters nested values (see store_peer.py).
    if kind == "sqlite" {
        out.insert(
            "filter/nested".into(),
            keys(json!({"nested.ok": true})).await,
        );
    }
    out.insert("filter/eq".into(), keys(json!({"n": 1})).await);
    let ns = |op| async move {
        let l = store.list_namespaces(op).await.expect("list");
        json!(l.into_iter().map(|n| n.0).collect::<Vec<_>>())
    };
    out.insert("namespaces".into(), ns(ListNamespacesOp::default()).await);
    out.insert(
        "namespaces/depth1".into(),
        ns(ListNamespacesOp::default().max_depth(1)).await,
    );
    Value::Object(out)
}

/// Compares the two sides' answers; timestamps by their UTC value (SQLite's Python gives a
/// naive `...T19:49:51`, Postgres an aware one).
pub(crate) fn assert_same(python: &Value, rust: &Value) {
    let (Value::Object(p), Value::Object(r)) = (python, rust) else {
        panic!("answers must be objects");
    };
    for (k, rv) in r {
        let pv = p
            .get(k)
            .unwrap_or_else(|| panic!("python did not answer {k}"));
        if k.starts_with("get/") && !rv.is_null() && !pv.is_null() {
            assert_eq!(pv["value"], rv["value"], "{k}: value");
            let t = |v: &Value| {
                let s = v["updated_at"]
                    .as_str()
                    .expect("updated_at text")
                    .to_owned();
                let s = if s.contains('+') || s.ends_with('Z') {
                    s
                } else {
                    s + "+00:00"
                };
                stategraph_store::Timestamp::parse(&s).expect("timestamp")
            };
            assert_eq!(t(pv), t(rv), "{k}: updated_at");
        } else {
            assert_eq!(pv, rv, "{k}");
        }
    }
}
