//! TTL: expiry on every read, the sweeper, refresh on read.

use crate::config::{MakeStore, StoreConfig};
use crate::support::*;
use serde_json::json;
use stategraph_store::{IndexSpec, ListNamespacesOp, PutOp, SearchOp, TtlConfig};
use std::sync::Arc;
use std::time::Duration;

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
    let sweeper =
        stategraph_store::ttl::spawn_sweeper(Arc::clone(&store), Some(Duration::from_millis(100)));
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
