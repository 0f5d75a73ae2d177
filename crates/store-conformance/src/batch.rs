//! Batches: ops run in order, and an invalid op changes nothing.

use crate::config::{MakeStore, StoreConfig};
use crate::support::*;
use serde_json::json;
use stategraph_store::{IndexSpec, ListNamespacesOp, Op, OpResult, PutOp, SearchOp, StoreError};

/// A batch runs its ops in order and answers in op order.
pub async fn batch_in_order(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    let results = store
        .batch(vec![
            get(&["b"], "k"),
            put(&["b"], "k", Some(json!({"v": 1}))),
            get(&["b"], "k"),
            put(&["b"], "k", Some(json!({"v": 2}))),
            Op::Search(SearchOp::new(ns(&["b"]))),
            Op::ListNamespaces(ListNamespacesOp::default()),
            put(&["b"], "k", None),
            get(&["b"], "k"),
        ])
        .await
        .expect("batch");
    assert_eq!(results.len(), 8);
    assert!(matches!(results[0], OpResult::Get(None)));
    assert!(matches!(results[1], OpResult::Put));
    match &results[2] {
        OpResult::Get(Some(i)) => assert_eq!(i.value, doc(json!({"v": 1}))),
        other => panic!("a get after a put sees it, got {other:?}"),
    }
    match &results[4] {
        OpResult::Search(hits) => {
            assert_eq!(hits.len(), 1);
            assert_eq!(hits[0].value, doc(json!({"v": 2})));
        }
        other => panic!("search result expected, got {other:?}"),
    }
    assert_eq!(results[5], OpResult::ListNamespaces(vec![ns(&["b"])]));
    assert!(matches!(results[7], OpResult::Get(None)));
    assert!(store.get(ns(&["b"]), "k").await.expect("get").is_none());
}

/// A batch holding an invalid op changes nothing.
pub async fn invalid_batch_changes_nothing(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    let err = store
        .batch(vec![
            put(&["ok"], "k", Some(json!({"v": 1}))),
            put(&["bad.label"], "k", Some(json!({"v": 1}))),
        ])
        .await
        .expect_err("invalid batch");
    assert!(matches!(err, StoreError::InvalidNamespace { .. }));
    assert!(store.get(ns(&["ok"]), "k").await.expect("get").is_none());
    let err = store
        .batch(vec![
            put(&["ok"], "k", Some(json!({"v": 1}))),
            Op::Search(SearchOp::new(ns(&["ok"])).filter(json!(3))),
        ])
        .await
        .expect_err("a filter that is not an object");
    assert!(matches!(err, StoreError::InvalidFilter(_)));
    assert!(store.get(ns(&["ok"]), "k").await.expect("get").is_none());
    let bad_ttl = Op::Put(PutOp {
        ttl: Some(-1.0),
        ..PutOp {
            namespace: ns(&["ok"]),
            key: "k".into(),
            value: Some(doc(json!({}))),
            index: IndexSpec::Default,
            ttl: None,
        }
    });
    assert!(matches!(
        store.batch(vec![bad_ttl]).await,
        Err(StoreError::Ttl(_))
    ));
}
