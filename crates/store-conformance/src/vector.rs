//! Vector search: cosine ranking, per-put index paths, unembedded items.

use crate::config::{MakeStore, StoreConfig};
use crate::support::*;
use serde_json::json;
use stategraph_store::{BaseStore, HashEmbedder, IndexConfig, IndexSpec, PutOp, SearchOp};
use std::sync::Arc;

/// Vector search ranks by cosine similarity (best field wins), honours per-put index
/// paths and `index = false`, and fills up with unembedded items.
pub async fn vector_ranking(make: MakeStore<'_>) {
    let index = IndexConfig::new(64, Arc::new(HashEmbedder { dims: 64 })).fields(["text"]);
    let store = make(StoreConfig {
        index: Some(index),
        ttl: None,
    })
    .await;
    put_ranked_docs(store.as_ref()).await;
    let hits = store
        .search(
            SearchOp::new(ns(&["docs"]))
                .query("rust ownership borrow")
                .limit(10),
        )
        .await
        .expect("search");
    let order: Vec<&str> = hits.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(order.len(), 5, "{order:?}");
    assert!(
        order[..2].contains(&"rust") && order[..2].contains(&"titled"),
        "{order:?}"
    );
    assert_eq!(order[4], "hidden", "unembedded items come last, unscored");
    assert_eq!(hits[4].score, None);
    let scores: Vec<f64> = hits[..4].iter().map(|h| h.score.expect("scored")).collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "descending: {scores:?}"
    );
    assert!(scores[0] > 0.5 && scores[3] < scores[0]);
    let top = store
        .search(
            SearchOp::new(ns(&["docs"]))
                .query("python scripting")
                .limit(1),
        )
        .await
        .expect("search");
    assert_eq!(top[0].key, "python");
    let page = store
        .search(
            SearchOp::new(ns(&["docs"]))
                .query("rust ownership borrow")
                .limit(2)
                .offset(2),
        )
        .await
        .expect("search");
    assert_eq!(
        page.iter().map(|h| h.key.clone()).collect::<Vec<_>>(),
        vec![order[2], order[3]]
    );
    let filtered = store
        .search(
            SearchOp::new(ns(&["docs"]))
                .query("programming")
                .filter(json!({"text": {"$ne": "cats purr and sleep all day"}}))
                .limit(1),
        )
        .await
        .expect("search");
    assert_ne!(filtered[0].key, "cats");
    store
        .put(
            ns(&["docs"]),
            "rust",
            doc(json!({"text": "gardening tips"})),
        )
        .await
        .expect("re-put");
    let again = store
        .search(
            SearchOp::new(ns(&["docs"]))
                .query("rust ownership borrow")
                .limit(1),
        )
        .await
        .expect("search");
    assert_eq!(again[0].key, "titled", "a re-put replaces the old vectors");
}

/// The documents [`vector_ranking`] searches: three embedded by `text`, one by its
/// `title` only, one not embedded at all.
async fn put_ranked_docs(store: &dyn BaseStore) {
    let docs = [
        ("cats", json!({"text": "cats purr and sleep all day"})),
        (
            "rust",
            json!({"text": "rust programming language ownership borrow"}),
        ),
        (
            "python",
            json!({"text": "python programming language scripting"}),
        ),
    ];
    for (k, v) in docs {
        store.put(ns(&["docs"]), k, doc(v)).await.expect("put");
    }
    store
        .put_op(PutOp {
            namespace: ns(&["docs"]),
            key: "titled".into(),
            value: Some(doc(
                json!({"text": "unrelated words", "title": "ownership borrow checker"}),
            )),
            index: IndexSpec::Paths(vec!["title".into()]),
            ttl: None,
        })
        .await
        .expect("put");
    store
        .put_op(PutOp {
            namespace: ns(&["docs"]),
            key: "hidden".into(),
            value: Some(doc(json!({"text": "rust ownership borrow"}))),
            index: IndexSpec::Disabled,
            ttl: None,
        })
        .await
        .expect("put");
}
