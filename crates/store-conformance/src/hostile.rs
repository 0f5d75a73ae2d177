//! Hostile input (filters, namespaces, keys) and concurrent writers.

use crate::config::{MakeStore, StoreConfig};
use crate::support::*;
use serde_json::{json, Value};
use stategraph_store::{ListNamespacesOp, SearchOp, StoreError};
use std::sync::Arc;

/// Hostile filter keys and values (CVE-2025-8709's SQL through keys, JSON-path tricks)
/// find nothing and change nothing.
pub async fn hostile_filters(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    store
        .put(ns(&["h"]), "k", doc(json!({"a": 1, "secret": "s"})))
        .await
        .expect("put");
    store
        .put(ns(&["other"]), "k", doc(json!({"a": 1})))
        .await
        .expect("put");
    let payloads = [
        "a') = 1 OR 1=1 --",
        "a') IS NOT NULL OR ('1'='1",
        "a'); DROP TABLE store; --",
        "a\") OR 1=1 --",
        "$.secret",
        "a'||(SELECT value FROM store)||'",
        "a[0]",
        "a\"]",
        "*",
        "a' OR json_extract(value, '$.secret') = 's",
        "x') UNION SELECT prefix, key, value, created_at, updated_at, expires_at, ttl_minutes, NULL FROM store --",
    ];
    for key in payloads {
        for value in [json!(1), json!("s"), json!({"$ne": 0}), json!(null)] {
            let mut f = serde_json::Map::new();
            f.insert(key.to_owned(), value.clone());
            let hits = store
                .search(SearchOp::new(ns(&["h"])).filter(Value::Object(f)))
                .await;
            match hits {
                Ok(hits) => {
                    let leak = hits.iter().any(|h| h.namespace != ns(&["h"]));
                    assert!(!leak, "{key:?}: a hit outside the prefix");
                    if !matches!(value, Value::Object(_) | Value::Null) {
                        assert!(hits.is_empty(), "{key:?} = {value}: matched {hits:?}");
                    }
                }
                Err(e) => assert!(matches!(e, StoreError::InvalidFilter(_)), "{key:?}: {e}"),
            }
        }
    }
    let value_payload = json!({"a": "1 OR 1=1", "secret": "' OR '1'='1"});
    assert!(
        keys(&*store, SearchOp::new(ns(&["h"])).filter(value_payload))
            .await
            .is_empty()
    );
    assert_eq!(
        keys(&*store, SearchOp::new(ns(&[]))).await.len(),
        2,
        "nothing changed"
    );
    assert_eq!(
        store
            .get(ns(&["h"]), "k")
            .await
            .expect("get")
            .expect("item")
            .value,
        doc(json!({"a": 1, "secret": "s"}))
    );
}

/// Namespaces and keys with SQL, GLOB and LIKE metacharacters are plain labels.
pub async fn hostile_namespaces(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    let labels = [
        "x'; DROP TABLE store; --",
        "a*",
        "a?",
        "a[b]",
        "a%",
        "a_",
        "ab",
        "a\\",
        "é",
        "*",
    ];
    for l in labels {
        store
            .put(ns(&[l]), l, doc(json!({"l": l})))
            .await
            .expect("put");
        store
            .put(ns(&[l, "child"]), l, doc(json!({"l": l})))
            .await
            .expect("put");
    }
    for l in labels {
        let item = store.get(ns(&[l]), l).await.expect("get").expect("item");
        assert_eq!(item.value["l"], json!(l));
        let hits = store.search(SearchOp::new(ns(&[l]))).await.expect("search");
        assert_eq!(
            hits.len(),
            2,
            "{l:?} matches itself and its child only: {hits:?}"
        );
        assert!(hits.iter().all(|h| h.namespace.0[0] == l));
        let listed = store
            .list_namespaces(ListNamespacesOp::default().prefix(ns(&[l])))
            .await
            .expect("list");
        // In a listing pattern a whole `*` label is LangGraph's wildcard (one label).
        let expected = if l == "*" { 2 * labels.len() } else { 2 };
        assert_eq!(listed.len(), expected, "{l:?}: {listed:?}");
    }
    let n = store
        .list_namespaces(ListNamespacesOp::default().limit(1000))
        .await
        .expect("list");
    assert_eq!(n.len(), 2 * labels.len());
}

/// Concurrent writers through one shared store all land.
pub async fn concurrent_writers(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    let mut tasks = Vec::new();
    for t in 0..8 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            for i in 0..10 {
                store
                    .put(
                        ns(&["c", &format!("t{t}")]),
                        &format!("k{i}"),
                        doc(json!({"t": t, "i": i})),
                    )
                    .await
                    .expect("put");
            }
        }));
    }
    for t in tasks {
        t.await.expect("writer task");
    }
    assert_eq!(
        keys(&*store, SearchOp::new(ns(&["c"])).limit(1000))
            .await
            .len(),
        80
    );
    assert_eq!(
        store
            .list_namespaces(ListNamespacesOp::default())
            .await
            .expect("list")
            .len(),
        8
    );
}
