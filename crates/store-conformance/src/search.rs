//! Search by prefix, filters and pages, and namespace listing.

use crate::config::{MakeStore, StoreConfig};
use crate::support::*;
use serde_json::{json, Value};
use stategraph_store::{ListNamespacesOp, SearchOp, StoreError};
use std::sync::Arc;

/// Search matches whole labels of the prefix; the empty prefix matches everything.
pub async fn search_by_prefix(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    for (n, k) in [
        (&["docs", "a"][..], "1"),
        (&["docs", "b"], "2"),
        (&["docsx"], "3"),
        (&["docs"], "4"),
        (&["other", "docs"], "5"),
    ] {
        store
            .put(ns(n), k, doc(json!({"k": k})))
            .await
            .expect("put");
    }
    assert_eq!(
        sorted(keys(&*store, SearchOp::new(ns(&["docs"]))).await),
        vec!["1", "2", "4"]
    );
    assert_eq!(
        keys(&*store, SearchOp::new(ns(&["docs", "b"]))).await,
        vec!["2"]
    );
    assert_eq!(
        keys(&*store, SearchOp::new(ns(&["doc"]))).await,
        Vec::<String>::new()
    );
    assert_eq!(
        keys(&*store, SearchOp::new(ns(&["DOCS"]))).await,
        Vec::<String>::new(),
        "case-sensitive"
    );
    assert_eq!(keys(&*store, SearchOp::new(ns(&[]))).await.len(), 5);
    let hits = store
        .search(SearchOp::new(ns(&["docs", "a"])))
        .await
        .expect("search");
    assert_eq!(hits[0].namespace, ns(&["docs", "a"]));
    assert_eq!(hits[0].score, None, "no query, no score");
}

/// Filters: equality (also nested and on lists), operators, several keys at once.
pub async fn search_filters(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    let items = [
        (
            "a",
            json!({"color": "red", "score": 4.5, "n": 1, "tags": ["x", "y"], "meta": {"lang": "en", "level": 2}, "ok": true}),
        ),
        (
            "b",
            json!({"color": "blue", "score": 3.0, "n": 2, "tags": ["y"], "meta": {"lang": "fr", "level": 5}, "ok": false}),
        ),
        (
            "c",
            json!({"color": "red", "score": 1.0, "n": 3, "meta": {"lang": "en", "level": 9}}),
        ),
    ];
    for (k, v) in items {
        store.put(ns(&["f"]), k, doc(v)).await.expect("put");
    }
    let q = |f: Value| SearchOp::new(ns(&["f"])).filter(f);
    let s = &*store;
    assert_eq!(
        sorted(keys(s, q(json!({"color": "red"}))).await),
        vec!["a", "c"]
    );
    assert_eq!(keys(s, q(json!({"color": "red", "n": 3}))).await, vec!["c"]);
    assert_eq!(keys(s, q(json!({"n": 2.0}))).await, vec!["b"], "1 == 1.0");
    assert_eq!(keys(s, q(json!({"ok": true}))).await, vec!["a"]);
    assert_eq!(keys(s, q(json!({"tags": ["x", "y"]}))).await, vec!["a"]);
    assert_eq!(
        sorted(keys(s, q(json!({"meta": {"lang": "en"}}))).await),
        vec!["a", "c"]
    );
    assert_eq!(
        keys(s, q(json!({"meta.level": 5}))).await,
        vec!["b"],
        "dotted path"
    );
    assert_eq!(
        sorted(keys(s, q(json!({"score": {"$gt": 2}}))).await),
        vec!["a", "b"]
    );
    assert_eq!(keys(s, q(json!({"score": {"$gte": 4.5}}))).await, vec!["a"]);
    assert_eq!(keys(s, q(json!({"score": {"$lt": 3}}))).await, vec!["c"]);
    assert_eq!(
        sorted(keys(s, q(json!({"score": {"$lte": 3}}))).await),
        vec!["b", "c"]
    );
    assert_eq!(
        sorted(keys(s, q(json!({"color": {"$ne": "red"}}))).await),
        vec!["b"]
    );
    assert_eq!(
        keys(s, q(json!({"color": {"$eq": "blue"}}))).await,
        vec!["b"]
    );
    assert_eq!(
        keys(s, q(json!({"n": {"$gt": 1, "$lt": 3}}))).await,
        vec!["b"]
    );
    assert_eq!(
        keys(s, q(json!({"missing": 1}))).await,
        Vec::<String>::new()
    );
    assert_eq!(
        keys(s, q(json!({"color": "green"}))).await,
        Vec::<String>::new()
    );
    let err = store
        .search(q(json!({"color": {"$regex": "r.*"}})))
        .await
        .expect_err("unknown operator");
    assert!(matches!(err, StoreError::InvalidFilter(_)), "{err}");
}

/// Pages of a search partition its results.
pub async fn search_pagination(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    for i in 0..7 {
        store
            .put(
                ns(&["p", if i % 2 == 0 { "even" } else { "odd" }]),
                &format!("k{i}"),
                doc(json!({"i": i})),
            )
            .await
            .expect("put");
    }
    let mut seen = Vec::new();
    for offset in (0..8).step_by(3) {
        let page = keys(&*store, SearchOp::new(ns(&["p"])).limit(3).offset(offset)).await;
        assert!(page.len() <= 3);
        seen.extend(page);
    }
    assert_eq!(
        sorted(seen),
        (0..7).map(|i| format!("k{i}")).collect::<Vec<_>>()
    );
    assert!(keys(&*store, SearchOp::new(ns(&["p"])).offset(7))
        .await
        .is_empty());
    assert_eq!(
        keys(&*store, SearchOp::new(ns(&["p"])).limit(0))
            .await
            .len(),
        0
    );
    assert_eq!(
        keys(&*store, SearchOp::new(ns(&["p"])).limit(2))
            .await
            .len(),
        2
    );
    let filtered = keys(
        &*store,
        SearchOp::new(ns(&["p"]))
            .filter(json!({"i": {"$gte": 2}}))
            .limit(2)
            .offset(4),
    )
    .await;
    assert_eq!(filtered.len(), 1, "5 matches, offset 4");
}

/// Listing: sorted, deduplicated, prefix/suffix with `*`, depth, pages.
pub async fn list_namespaces(make: MakeStore<'_>) {
    let store = make(StoreConfig::default()).await;
    let spaces: [&[&str]; 6] = [
        &["users", "alice", "prefs"],
        &["users", "bob", "prefs"],
        &["users", "bob", "facts"],
        &["docs", "2024"],
        &["docs"],
        &["a"],
    ];
    for s in spaces {
        store
            .put(ns(s), "k", doc(json!({"v": 1})))
            .await
            .expect("put");
        store
            .put(ns(s), "k2", doc(json!({"v": 2})))
            .await
            .expect("put");
    }
    let list = |op: ListNamespacesOp| {
        let store = Arc::clone(&store);
        async move {
            store
                .list_namespaces(op)
                .await
                .expect("list")
                .into_iter()
                .map(|n| n.0.join("/"))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        list(ListNamespacesOp::default()).await,
        vec![
            "a",
            "docs",
            "docs/2024",
            "users/alice/prefs",
            "users/bob/facts",
            "users/bob/prefs"
        ]
    );
    assert_eq!(
        list(ListNamespacesOp::default().prefix(ns(&["users"])))
            .await
            .len(),
        3
    );
    assert_eq!(
        list(ListNamespacesOp::default().prefix(ns(&["user"])))
            .await
            .len(),
        0
    );
    assert_eq!(
        list(ListNamespacesOp::default().suffix(ns(&["prefs"]))).await,
        vec!["users/alice/prefs", "users/bob/prefs"]
    );
    assert_eq!(
        list(ListNamespacesOp::default().prefix(ns(&["users", "*", "facts"]))).await,
        vec!["users/bob/facts"]
    );
    assert_eq!(
        list(ListNamespacesOp::default().suffix(ns(&["*", "prefs"]))).await,
        vec!["users/alice/prefs", "users/bob/prefs"]
    );
    assert_eq!(
        list(ListNamespacesOp::default().max_depth(1)).await,
        vec!["a", "docs", "users"]
    );
    assert_eq!(
        list(
            ListNamespacesOp::default()
                .prefix(ns(&["users"]))
                .max_depth(2)
        )
        .await,
        vec!["users/alice", "users/bob"]
    );
    assert_eq!(
        list(ListNamespacesOp::default().limit(2).offset(1)).await,
        vec!["docs", "docs/2024"]
    );
    assert_eq!(
        list(
            ListNamespacesOp::default()
                .prefix(ns(&["users"]))
                .suffix(ns(&["facts"]))
        )
        .await,
        vec!["users/bob/facts"]
    );
}
