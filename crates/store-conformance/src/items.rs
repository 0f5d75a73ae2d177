//! Items one at a time: put, get, overwrite, delete, and LangGraph's namespace rules.

use crate::config::{MakeStore, StoreConfig};
use crate::support::*;
use serde_json::json;
use stategraph_store::{ListNamespacesOp, Namespace, SearchOp, StoreError};

/// A put is read back with its namespace, key, nested value and timestamps.
pub async fn put_get_roundtrip(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    let value = doc(
        json!({"name": "Ada", "n": 1, "f": 2.5, "ok": true, "none": null,
        "nested": {"list": [1, "two", {"three": 3}], "é": "ü"}}),
    );
    store
        .put(ns(&["users", "1"]), "profile", value.clone())
        .await
        .expect("put");
    let item = store
        .get(ns(&["users", "1"]), "profile")
        .await
        .expect("get")
        .expect("the item just put");
    assert_eq!(item.value, value, "value round trip");
    assert_eq!(item.namespace, ns(&["users", "1"]));
    assert_eq!(item.key, "profile");
    assert!(item.created_at <= item.updated_at);
    assert!(store
        .get(ns(&["users", "1"]), "other")
        .await
        .expect("get")
        .is_none());
    assert!(store
        .get(ns(&["users", "2"]), "profile")
        .await
        .expect("get")
        .is_none());
    assert!(store
        .get(ns(&["users"]), "profile")
        .await
        .expect("get")
        .is_none());
}

/// A second put replaces the value.
pub async fn put_overwrites(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    store
        .put(ns(&["a"]), "k", doc(json!({"v": 1})))
        .await
        .expect("put");
    let first = store
        .get(ns(&["a"]), "k")
        .await
        .expect("get")
        .expect("item");
    store
        .put(ns(&["a"]), "k", doc(json!({"w": 2})))
        .await
        .expect("put");
    let second = store
        .get(ns(&["a"]), "k")
        .await
        .expect("get")
        .expect("item");
    assert_eq!(second.value, doc(json!({"w": 2})), "the old keys are gone");
    assert!(second.updated_at >= first.updated_at);
    assert_eq!(keys(&*store, SearchOp::new(ns(&["a"]))).await, vec!["k"]);
}

/// Delete removes an item; deleting a missing one is fine.
pub async fn delete_removes(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    store
        .put(ns(&["a"]), "k", doc(json!({"v": 1})))
        .await
        .expect("put");
    store
        .put(ns(&["a"]), "k2", doc(json!({"v": 2})))
        .await
        .expect("put");
    store.delete(ns(&["a"]), "k").await.expect("delete");
    assert!(store.get(ns(&["a"]), "k").await.expect("get").is_none());
    assert!(
        store.get(ns(&["a"]), "k2").await.expect("get").is_some(),
        "siblings stay"
    );
    store
        .delete(ns(&["a"]), "missing")
        .await
        .expect("deleting nothing");
    store
        .delete(ns(&["zz"]), "missing")
        .await
        .expect("deleting nothing");
    store.delete(ns(&["a"]), "k2").await.expect("delete");
    let left = store
        .list_namespaces(ListNamespacesOp::default())
        .await
        .expect("list");
    assert!(
        left.is_empty(),
        "an emptied namespace is not listed: {left:?}"
    );
}

/// LangGraph's label rules: no empty namespace or label, no `.`, no NUL, no `langgraph` root.
pub async fn namespace_rules(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    for bad in [
        vec![],
        vec![""],
        vec!["a", ""],
        vec!["a.b"],
        vec!["a\0b"],
        vec!["langgraph"],
    ] {
        let err = store
            .put(Namespace::from(bad.clone()), "k", doc(json!({"v": 1})))
            .await
            .expect_err("an invalid namespace must be refused");
        assert!(
            matches!(err, StoreError::InvalidNamespace { .. }),
            "{bad:?}: {err}"
        );
    }
    for bad in [vec!["a.b"], vec![""]] {
        assert!(
            store.get(Namespace::from(bad.clone()), "k").await.is_err(),
            "get {bad:?}"
        );
        assert!(
            store
                .search(SearchOp::new(Namespace::from(bad.clone())))
                .await
                .is_err(),
            "search {bad:?}"
        );
        assert!(
            store
                .list_namespaces(ListNamespacesOp::default().prefix(Namespace::from(bad.clone())))
                .await
                .is_err(),
            "list {bad:?}"
        );
    }
    assert!(store
        .get(ns(&["langgraph"]), "k")
        .await
        .expect("reading is allowed")
        .is_none());
    let all = store
        .list_namespaces(ListNamespacesOp::default())
        .await
        .expect("list");
    assert!(all.is_empty(), "nothing was written: {all:?}");
}
