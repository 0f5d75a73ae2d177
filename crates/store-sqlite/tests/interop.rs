//! Interop with Python's `SqliteStore` (langgraph-checkpoint-sqlite 3.1.2) on one file:
//! each side writes, each side reads everything, the answers agree.

#[path = "interop/common.rs"]
mod common;

use stategraph_store::{BaseStore, HashEmbedder, IndexConfig, Namespace, SearchOp, TtlConfig};
use stategraph_store_sqlite::SqliteStore;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_and_rust_share_a_sqlite_store() {
    let Some(python) = common::python() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("sg-store-interop-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("store.db");
    let target = path.to_str().expect("utf-8 path");

    // Rust creates the file (tables, migrations, vectors); Python writes into it after.
    let index = IndexConfig::new(64, Arc::new(HashEmbedder { dims: 64 })).fields(["text"]);
    let store = SqliteStore::open(&path)
        .expect("open")
        .with_index(index)
        .expect("vectors")
        .with_ttl(TtlConfig::default());
    common::write_rust_items(&store).await;
    common::peer(&python, "sqlite", target, "write");

    let from_python = common::peer(&python, "sqlite", target, "read");
    let from_rust = common::rust_answers(&store, "sqlite").await;
    common::assert_same(&from_python, &from_rust);
    assert_eq!(
        from_rust["get/py/docs/p1"]["value"]["nested"]["tags"],
        serde_json::json!(["a", "b"])
    );
    assert_eq!(
        from_rust["filter/n>=2"],
        serde_json::json!(["p2", "r1", "theme", "theme"])
    );

    // Rust's vectors, read by Python as sqlite_vec.serialize_float32 bytes, are the
    // embeddings of LangGraph's get_text_at_path texts.
    let vectors = from_python["vectors"].as_object().expect("vectors");
    assert_eq!(vectors.len(), 3, "{vectors:?}");
    for (k, diff) in vectors {
        assert!(diff.as_f64().is_some_and(|d| d < 1e-6), "{k}: {diff}");
    }

    // Semantic search in Rust over both sides' items: Rust's embedded item ranks first,
    // Python's (written without an index) come unscored after the scored ones.
    let hits = store
        .search(
            SearchOp::new(Namespace::default())
                .query("rust ownership borrow")
                .limit(10),
        )
        .await
        .expect("search");
    assert_eq!(hits[0].key, "r1");
    assert!(hits[0].score.is_some_and(|s| s > 0.5));
    assert_eq!(hits.iter().filter(|h| h.score.is_some()).count(), 3);
    assert_eq!(hits.len(), 6);

    // Python's TTL row: Rust reads its expires_at (Python's text form) as live.
    assert!(store
        .get(Namespace::from(["py", "prefs"]), "theme")
        .await
        .expect("get")
        .is_some());
    drop(store);
    let _ = std::fs::remove_dir_all(dir);
}
