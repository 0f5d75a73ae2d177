//! The behaviours every store backend must show, as a macro each backend's tests expand.
//!
//! ```ignore
//! stategraph_store::store_conformance!(|config: StoreConfig| async move {
//!     let store: Arc<dyn BaseStore> = Arc::new(MyStore::new(config));
//!     store
//! });
//! ```
//!
//! expands to one `#[test]` per behaviour (`conformance::put_get_roundtrip`, …), each on a
//! fresh store built by the closure from a [`StoreConfig`] (the index and TTL config that
//! behaviour needs). They follow LangGraph's own store tests: put/get/delete, search with
//! filters and pagination, namespace listing, TTL, batch ordering, vector ranking, plus
//! namespace validation, hostile filters and namespaces, and concurrent writers.
//! Behaviours panic with a message naming what broke.

use crate::{
    BaseStore, Document, HashEmbedder, IndexConfig, IndexSpec, ListNamespacesOp, Namespace, Op,
    OpResult, PutOp, SearchOp, StoreError, TtlConfig,
};
use serde_json::{json, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

#[doc(hidden)]
pub use tokio as __tokio;

/// What a behaviour needs of the store it is given.
#[derive(Debug, Clone, Default)]
pub struct StoreConfig {
    /// Semantic search config (the vector behaviours).
    pub index: Option<IndexConfig>,
    /// TTL config (the TTL behaviours).
    pub ttl: Option<TtlConfig>,
}

/// Builds a fresh store for a config.
pub type MakeStore<'a> =
    &'a (dyn Fn(StoreConfig) -> Pin<Box<dyn Future<Output = Arc<dyn BaseStore>> + Send>> + Sync);

/// Expands to one test per behaviour; see the [module docs](self).
#[macro_export]
macro_rules! store_conformance {
    ($make:expr) => {
        $crate::store_conformance!(@tests $make;
            put_get_roundtrip, put_overwrites, delete_removes, namespace_rules,
            search_by_prefix, search_filters, search_pagination, list_namespaces,
            batch_in_order, invalid_batch_changes_nothing, ttl_expires, ttl_refresh_on_read,
            sweeper_reclaims,
            vector_ranking, hostile_filters, hostile_namespaces, concurrent_writers);
    };
    (@tests $make:expr; $($name:ident),*) => {
        mod conformance {
            $(
                #[test]
                fn $name() {
                    let rt = $crate::conformance::__tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(2)
                        .enable_all()
                        .build()
                        .expect("tokio runtime");
                    rt.block_on(async {
                        let make = |c: $crate::conformance::StoreConfig| {
                            Box::pin((super::make_store_for_conformance())(c))
                                as ::std::pin::Pin<Box<dyn ::std::future::Future<
                                    Output = ::std::sync::Arc<dyn $crate::BaseStore>> + Send>>
                        };
                        $crate::conformance::$name(&make).await
                    });
                }
            )*
        }
        #[allow(clippy::redundant_closure)]
        fn make_store_for_conformance() -> impl Fn($crate::conformance::StoreConfig)
            -> ::std::pin::Pin<Box<dyn ::std::future::Future<
                Output = ::std::sync::Arc<dyn $crate::BaseStore>> + Send>> {
            let make = $make;
            move |c| Box::pin(make(c))
        }
    };
}

fn doc(v: Value) -> Document {
    match v {
        Value::Object(m) => m,
        other => panic!("test value must be an object, got {other}"),
    }
}

fn ns(labels: &[&str]) -> Namespace {
    Namespace::from(labels)
}

async fn keys(store: &dyn BaseStore, op: SearchOp) -> Vec<String> {
    store
        .search(op)
        .await
        .expect("search")
        .into_iter()
        .map(|i| i.item.key)
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

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

fn put(n: &[&str], k: &str, v: Option<Value>) -> Op {
    Op::Put(PutOp {
        namespace: ns(n),
        key: k.into(),
        value: v.map(doc),
        index: IndexSpec::Default,
        ttl: None,
    })
}

fn get(n: &[&str], k: &str) -> Op {
    Op::Get(crate::GetOp {
        namespace: ns(n),
        key: k.into(),
        refresh_ttl: true,
    })
}

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

fn ttl_put(n: &[&str], k: &str, minutes: Option<f64>) -> PutOp {
    PutOp {
        namespace: ns(n),
        key: k.into(),
        value: Some(doc(json!({"k": k}))),
        index: IndexSpec::Default,
        ttl: minutes,
    }
}

/// An expired item is never returned (get, search, listing) and the sweeper deletes it;
/// the store's default TTL applies to puts without one.
pub async fn ttl_expires(make: MakeStore<'_>) {
    let ttl = TtlConfig {
        refresh_on_read: true,
        default_ttl: Some(0.005),
        sweep_interval_minutes: None,
    };
    let store = make(StoreConfig {
        index: None,
        ttl: Some(ttl),
    })
    .await;
    store
        .put_op(ttl_put(&["t", "short"], "a", Some(0.005)))
        .await
        .expect("put");
    store
        .put(ns(&["t", "default"]), "b", doc(json!({"k": "b"})))
        .await
        .expect("put");
    store
        .put_op(ttl_put(&["t", "long"], "c", Some(60.0)))
        .await
        .expect("put");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        store
            .get(ns(&["t", "short"]), "a")
            .await
            .expect("get")
            .is_none(),
        "expired get"
    );
    assert!(
        store
            .get(ns(&["t", "default"]), "b")
            .await
            .expect("get")
            .is_none(),
        "default ttl"
    );
    assert_eq!(keys(&*store, SearchOp::new(ns(&["t"]))).await, vec!["c"]);
    let listed = store
        .list_namespaces(ListNamespacesOp::default())
        .await
        .expect("list");
    assert_eq!(listed, vec![ns(&["t", "long"])]);
    assert_eq!(store.sweep_ttl().await.expect("sweep"), 2);
    assert_eq!(store.sweep_ttl().await.expect("sweep"), 0);
    assert!(store
        .get(ns(&["t", "long"]), "c")
        .await
        .expect("get")
        .is_some());
}

/// The sweeper task deletes expired items on its own; dropping the store's last owner ends
/// it.
pub async fn sweeper_reclaims(make: MakeStore<'_>) {
    let store = make(StoreConfig {
        index: None,
        ttl: Some(TtlConfig::default()),
    })
    .await;
    store
        .put_op(ttl_put(&["s"], "a", Some(0.002)))
        .await
        .expect("put");
    store
        .put_op(ttl_put(&["s"], "b", Some(60.0)))
        .await
        .expect("put");
    let sweeper = crate::ttl::spawn_sweeper(Arc::clone(&store), Some(Duration::from_millis(100)));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        store.sweep_ttl().await.expect("sweep"),
        0,
        "the sweeper already deleted it"
    );
    assert!(store.get(ns(&["s"]), "b").await.expect("get").is_some());
    drop(store);
    tokio::time::timeout(Duration::from_secs(5), sweeper)
        .await
        .expect("the sweeper stops when the store is gone")
        .expect("sweeper task");
}

/// Reads refresh the expiry of what they return, unless asked not to.
pub async fn ttl_refresh_on_read(make: MakeStore<'_>) {
    let ttl = TtlConfig::default();
    let store = make(StoreConfig {
        index: None,
        ttl: Some(ttl),
    })
    .await;
    // 6 s TTLs; reads at ~3.5 s; checks at ~7 s (SQLite refreshes with second resolution).
    store
        .put_op(ttl_put(&["r"], "get", Some(0.1)))
        .await
        .expect("put");
    store
        .put_op(ttl_put(&["r"], "search", Some(0.1)))
        .await
        .expect("put");
    store
        .put_op(ttl_put(&["r"], "norefresh", Some(0.1)))
        .await
        .expect("put");
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert!(store.get(ns(&["r"]), "get").await.expect("get").is_some());
    let hits = store
        .search(SearchOp::new(ns(&["r"])).filter(json!({"k": "search"})))
        .await
        .expect("search");
    assert_eq!(hits.len(), 1);
    assert!(store
        .get_with(ns(&["r"]), "norefresh", false)
        .await
        .expect("get")
        .is_some());
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert!(
        store
            .get_with(ns(&["r"]), "get", false)
            .await
            .expect("get")
            .is_some(),
        "refreshed by get"
    );
    assert!(
        store
            .get_with(ns(&["r"]), "search", false)
            .await
            .expect("get")
            .is_some(),
        "refreshed by search"
    );
    assert!(
        store
            .get_with(ns(&["r"]), "norefresh", false)
            .await
            .expect("get")
            .is_none(),
        "not refreshed"
    );
}

/// Vector search ranks by cosine similarity (best field wins), honours per-put index
/// paths and `index = false`, and fills up with unembedded items.
pub async fn vector_ranking(make: MakeStore<'_>) {
    let index = IndexConfig::new(64, Arc::new(HashEmbedder { dims: 64 })).fields(["text"]);
    let store = make(StoreConfig {
        index: Some(index),
        ttl: None,
    })
    .await;
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
