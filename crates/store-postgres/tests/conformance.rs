//! The store conformance suite on Postgres (one fresh database per behaviour, dropped after),
//! and the Postgres-specific checks.
//!
//! Needs a server: `STATEGRAPH_TEST_POSTGRES_URL` (default
//! `postgresql://postgres@127.0.0.1:5432/postgres`), a role that may create databases.

use async_trait::async_trait;
use stategraph_store::{BaseStore, Op, OpResult, Result, TtlConfig};
use stategraph_store_postgres::PostgresStore;
use std::sync::Arc;

fn admin_url() -> String {
    std::env::var("STATEGRAPH_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".into())
}

/// A store on its own database, dropped (`WITH (FORCE)`) when the store is dropped.
struct TempDbStore {
    inner: PostgresStore,
    db: String,
}

impl Drop for TempDbStore {
    fn drop(&mut self) {
        let db = self.db.clone();
        let dropper = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                let (client, conn) = tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls)
                    .await
                    .expect("admin connection");
                tokio::spawn(conn);
                client
                    .batch_execute(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
                    .await
                    .expect("drop test database");
            });
        });
        let _ = dropper.join();
    }
}

#[async_trait]
impl BaseStore for TempDbStore {
    async fn batch(&self, ops: Vec<Op>) -> Result<Vec<OpResult>> {
        self.inner.batch(ops).await
    }
    fn ttl_config(&self) -> Option<&TtlConfig> {
        self.inner.ttl_config()
    }
    async fn sweep_ttl(&self) -> Result<usize> {
        self.inner.sweep_ttl().await
    }
}

async fn temp_store(ttl: Option<TtlConfig>) -> TempDbStore {
    temp_store_with(ttl, None).await
}

async fn temp_store_with(
    ttl: Option<TtlConfig>,
    index: Option<stategraph_store::IndexConfig>,
) -> TempDbStore {
    let db = format!("sg_store_{}", uuid::Uuid::new_v4().simple());
    let (client, conn) = tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls)
        .await
        .expect("postgres (set STATEGRAPH_TEST_POSTGRES_URL)");
    tokio::spawn(conn);
    client
        .batch_execute(&format!("CREATE DATABASE \"{db}\""))
        .await
        .expect("create test database");
    let mut config: tokio_postgres::Config = admin_url().parse().expect("url");
    config.dbname(&db);
    let url = format!(
        "host={} port={} user={} dbname={db}",
        match &config.get_hosts()[0] {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            #[allow(unreachable_patterns)]
            _ => "127.0.0.1".into(),
        },
        config.get_ports().first().copied().unwrap_or(5432),
        config.get_user().unwrap_or("postgres"),
    );
    let mut inner = PostgresStore::connect(&url, 4).await.expect("connect");
    if let Some(ttl) = ttl {
        inner = inner.with_ttl(ttl);
    }
    if let Some(index) = index {
        inner = inner.with_index(index).await.expect("with_index");
    }
    TempDbStore { inner, db }
}

// Every behaviour but `ttl_refresh_on_read` (its sub-minute TTLs round to 0 in Python's `ttl_minutes int`
// column; `refresh_on_read_in_whole_minutes` below checks refresh on Postgres).
stategraph_store_conformance::store_conformance!(@tests
    |c: stategraph_store_conformance::StoreConfig| async move {
        Arc::new(temp_store_with(c.ttl, c.index).await) as Arc<dyn BaseStore>
    };
    put_get_roundtrip, put_overwrites, delete_removes, namespace_rules,
    search_by_prefix, search_filters, search_pagination, list_namespaces,
    batch_in_order, invalid_batch_changes_nothing, ttl_expires, sweeper_reclaims,
    hostile_filters, hostile_namespaces, concurrent_writers, vector_ranking);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_on_read_in_whole_minutes() {
    use stategraph_store::{IndexSpec, Namespace, PutOp, SearchOp};
    let store = temp_store(Some(TtlConfig::default())).await;
    let ns = Namespace::from(["r"]);
    for key in ["get", "search", "no"] {
        let value = serde_json::json!({"k": key})
            .as_object()
            .cloned()
            .unwrap_or_default();
        store
            .put_op(PutOp {
                namespace: ns.clone(),
                key: key.into(),
                value: Some(value),
                index: IndexSpec::Default,
                ttl: Some(2.0),
            })
            .await
            .expect("put");
    }
    let client = store.inner.pool().get().await.expect("client");
    let remaining = |key: &'static str| {
        let client = &client;
        async move {
            client
                .query_one(
                    "SELECT EXTRACT(EPOCH FROM expires_at - NOW())::float8, ttl_minutes FROM store WHERE key = $1",
                    &[&key],
                )
                .await
                .map(|r| (r.get::<_, f64>(0), r.get::<_, i32>(1)))
                .expect("row")
        }
    };
    assert_eq!(
        remaining("get").await.1,
        2,
        "ttl_minutes stored as Python stores it"
    );
    client
        .execute(
            "UPDATE store SET expires_at = NOW() + interval '10 seconds'",
            &[],
        )
        .await
        .expect("age the rows");
    assert!(store.get(ns.clone(), "get").await.expect("get").is_some());
    let hits = store
        .search(SearchOp::new(ns.clone()).filter(serde_json::json!({"k": "search"})))
        .await
        .expect("search");
    assert_eq!(hits.len(), 1);
    assert!(store
        .get_with(ns.clone(), "no", false)
        .await
        .expect("get")
        .is_some());
    assert!(remaining("get").await.0 > 100.0, "get refreshed to ~120 s");
    assert!(
        remaining("search").await.0 > 100.0,
        "search refreshed to ~120 s"
    );
    assert!(
        remaining("no").await.0 < 11.0,
        "refresh_ttl = false leaves it"
    );
}

/// The vectors land in the backend `with_index` reports, one row per embedded field, and
/// delete, re-put without index and the TTL sweeper leave no vector behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_follow_their_items() {
    use stategraph_store::{HashEmbedder, IndexConfig, IndexSpec, Namespace, PutOp};
    let index = IndexConfig::new(16, Arc::new(HashEmbedder { dims: 16 })).fields(["a", "b"]);
    let store = temp_store_with(None, Some(index)).await;
    let kind = store.inner.vector_backend().expect("an index config");
    let table = match kind {
        stategraph_store_postgres::VectorBackend::Pgvector => "store_vectors",
        stategraph_store_postgres::VectorBackend::RealArray => "stategraph_store_vectors",
    };
    let ns = Namespace::from(["v"]);
    let put = |key: &'static str, index: IndexSpec, ttl: Option<f64>| PutOp {
        namespace: ns.clone(),
        key: key.into(),
        value: serde_json::json!({"a": "apple", "b": "banana"})
            .as_object()
            .cloned(),
        index,
        ttl,
    };
    let client = store.inner.pool().get().await.expect("client");
    let count = |key: &'static str| {
        let client = &client;
        async move {
            client
                .query_one(
                    &format!("SELECT count(*) FROM {table} WHERE key = $1"),
                    &[&key],
                )
                .await
                .map(|r| r.get::<_, i64>(0))
                .expect("count")
        }
    };
    store
        .put_op(put("x", IndexSpec::Default, None))
        .await
        .expect("put");
    assert_eq!(count("x").await, 2, "one vector per embedded field");
    let dims: i64 = client
        .query_one(
            &format!("SELECT count(*) FROM (SELECT unnest(embedding::real[]) FROM {table} WHERE key = 'x' LIMIT 1) s"),
            &[],
        )
        .await
        .map(|r| r.get(0))
        .expect("dims");
    assert!(dims > 0, "the embedding is stored");
    store
        .put_op(put("x", IndexSpec::Disabled, None))
        .await
        .expect("re-put");
    assert_eq!(
        count("x").await,
        0,
        "a re-put without index drops the vectors"
    );
    store
        .put_op(put("y", IndexSpec::Default, None))
        .await
        .expect("put");
    store.delete(ns.clone(), "y").await.expect("delete");
    assert_eq!(count("y").await, 0, "a delete drops the vectors");
    store
        .put_op(put("z", IndexSpec::Default, Some(1.0)))
        .await
        .expect("put");
    client
        .execute(
            "UPDATE store SET expires_at = NOW() - interval '1 second' WHERE key = 'z'",
            &[],
        )
        .await
        .expect("expire");
    assert_eq!(store.sweep_ttl().await.expect("sweep"), 1);
    assert_eq!(count("z").await, 0, "the sweeper drops the vectors");
}

/// A query without a filter takes the vectors-first path (only the page's values are
/// read); with a filter that keeps everything (`{}`) it takes the general path. Both give
/// the same items, scores and order, for every page, prefix and mix of embedded,
/// unembedded and expired items.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_first_search_agrees_with_the_general_path() {
    use stategraph_store::{HashEmbedder, IndexConfig, IndexSpec, Namespace, PutOp, SearchOp};
    let index = IndexConfig::new(16, Arc::new(HashEmbedder { dims: 16 })).fields(["a", "b"]);
    let store = temp_store_with(None, Some(index)).await;
    let words = ["red", "green", "blue", "cyan", "teal", "navy", "rose"];
    for i in 0..24usize {
        let ns = Namespace::from(["p", if i % 3 == 0 { "x" } else { "y" }]);
        let index = match i % 5 {
            0 => IndexSpec::Disabled,
            1 => IndexSpec::Paths(vec!["b".into()]),
            _ => IndexSpec::Default,
        };
        let value = serde_json::json!({"a": words[i % 7], "b": words[(i * 3) % 7], "i": i});
        store
            .put_op(PutOp {
                namespace: ns,
                key: format!("k{i}"),
                value: value.as_object().cloned(),
                index,
                ttl: if i == 7 || i == 10 { Some(5.0) } else { None },
            })
            .await
            .expect("put");
    }
    let client = store.inner.pool().get().await.expect("client");
    client
        .execute(
            "UPDATE store SET expires_at = NOW() - interval '1 second' WHERE key = 'k7'",
            &[],
        )
        .await
        .expect("expire one");
    let mut checked = 0;
    for prefix in [Namespace::from(["p"]), Namespace::from(["p", "x"])] {
        for (offset, limit) in [(0, 5), (0, 30), (3, 4), (14, 10), (40, 5)] {
            for q in ["green", "teal navy"] {
                let op = SearchOp {
                    namespace_prefix: prefix.clone(),
                    filter: None,
                    limit,
                    offset,
                    query: Some(q.into()),
                    refresh_ttl: false,
                };
                let fast = store.search(op.clone()).await.expect("fast");
                let general = store
                    .search(SearchOp {
                        filter: Some(serde_json::json!({})),
                        ..op
                    })
                    .await
                    .expect("general");
                let view = |hits: &[stategraph_store::SearchItem]| {
                    hits.iter()
                        .map(|h| (h.key.clone(), h.score.map(|s| (s * 1e9).round() as i64)))
                        .collect::<Vec<_>>()
                };
                assert_eq!(
                    view(&fast),
                    view(&general),
                    "{prefix:?} {offset} {limit} {q}"
                );
                assert!(
                    fast.iter().all(|h| h.key != "k7"),
                    "expired items stay hidden"
                );
                checked += fast.len();
            }
        }
    }
    assert!(checked > 50, "the pages are not all empty ({checked})");
}
