//! [`PostgresStore`]: connecting (through the checkpoint saver's pool builder), setup and
//! semantic search's tables, and the batch, which runs its ops in order in one transaction
//! (`read.rs`, `write.rs`) after embedding them.

use crate::maintenance::sweep_expired;
use crate::op::{backend, VectorBackend};
use crate::schema::migrate;
use crate::sql::{pgvector_migrations, REAL_ARRAY_TABLE};
use crate::{read, write};
use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Pool};
use stategraph_checkpoint_postgres::{build_pool, PostgresOptions};
use stategraph_store::exec::{embed_batch, validate_all, Embedded};
use stategraph_store::{BaseStore, IndexConfig, Op, OpResult, Result, TtlConfig};

/// A store in Postgres that LangGraph's `PostgresStore` reads and writes too.
pub struct PostgresStore {
    pool: Pool,
    ttl: Option<TtlConfig>,
    index: Option<(IndexConfig, VectorBackend)>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("ttl", &self.ttl)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to `url` (libpq URL or key=value string, no TLS) with a pool of at most
    /// `pool_size` connections and the saver's default bounds, checks one connection
    /// opens, and runs the migrations.
    pub async fn connect(url: &str, pool_size: usize) -> Result<Self> {
        Self::connect_with(url, &PostgresOptions::default().with_pool_size(pool_size)).await
    }

    /// Connects as [`connect`](Self::connect) does, with the pool the checkpoint saver
    /// builds ([`build_pool`]: size, connect and wait timeouts, TCP keepalive of
    /// `options`).
    pub async fn connect_with(url: &str, options: &PostgresOptions) -> Result<Self> {
        let pool = build_pool(url, options).map_err(|e| backend("pool", e))?;
        let store = Self::from_pool(pool);
        store.setup().await?;
        Ok(store)
    }

    /// A store over an existing pool (TLS, hooks, other settings). Call
    /// [`setup`](Self::setup) once before use.
    pub fn from_pool(pool: Pool) -> Self {
        PostgresStore {
            pool,
            ttl: None,
            index: None,
        }
    }

    /// Enables semantic search: uses pgvector when `CREATE EXTENSION vector` succeeds (or
    /// the extension is already there), else the `real[]` fallback; creates the vector
    /// table. Call after [`setup`](Self::setup) (`connect` runs it).
    pub async fn with_index(mut self, index: IndexConfig) -> Result<Self> {
        let client = self.pool.get().await.map_err(|e| backend("connect", e))?;
        let has_vector = client
            .batch_execute("CREATE EXTENSION IF NOT EXISTS vector")
            .await
            .is_ok();
        let kind = if has_vector {
            client
                .batch_execute(
                    "CREATE TABLE IF NOT EXISTS vector_migrations (v INTEGER PRIMARY KEY)",
                )
                .await
                .map_err(|e| backend("setup", e))?;
            let row = client
                .query_opt(
                    "SELECT v FROM vector_migrations ORDER BY v DESC LIMIT 1",
                    &[],
                )
                .await
                .map_err(|e| backend("setup", e))?;
            let start = row.map_or(0, |r| r.get::<_, i32>(0) + 1);
            for (v, sql) in pgvector_migrations(index.dims)
                .iter()
                .enumerate()
                .skip(start.max(0) as usize)
            {
                client
                    .batch_execute(sql)
                    .await
                    .map_err(|e| backend(&format!("vector migration {v}"), e))?;
                client
                    .execute(
                        "INSERT INTO vector_migrations (v) VALUES ($1)",
                        &[&(v as i32)],
                    )
                    .await
                    .map_err(|e| backend("setup", e))?;
            }
            VectorBackend::Pgvector
        } else {
            client
                .batch_execute(REAL_ARRAY_TABLE)
                .await
                .map_err(|e| backend("setup", e))?;
            VectorBackend::RealArray
        };
        self.index = Some((index, kind));
        Ok(self)
    }

    /// Where the vectors are kept (`None` without an index config).
    pub fn vector_backend(&self) -> Option<VectorBackend> {
        self.index.as_ref().map(|(_, k)| *k)
    }

    /// Sets the TTL config.
    pub fn with_ttl(mut self, ttl: TtlConfig) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// The pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Creates the tables and applies missing migrations (idempotent; each migration runs
    /// outside a transaction, as `CREATE INDEX CONCURRENTLY` requires).
    pub async fn setup(&self) -> Result<()> {
        let client = self.pool.get().await.map_err(|e| backend("connect", e))?;
        migrate(&client).await
    }
}

/// Runs a batch's ops in order inside `tx`, each with what [`embed_batch`] computed for it.
async fn run<C: GenericClient + Sync>(
    tx: &C,
    ops: Vec<Op>,
    mut embedded: Embedded,
    vectors: Option<VectorBackend>,
    refresh_on_read: bool,
) -> Result<Vec<OpResult>> {
    let mut results = Vec::with_capacity(ops.len());
    for (i, op) in ops.into_iter().enumerate() {
        let result = match op {
            Op::Get(op) => OpResult::Get(read::get(tx, &op, refresh_on_read).await?),
            Op::Put(op) => {
                let fields = embedded.puts.remove(&i).unwrap_or_default();
                write::put(tx, op, fields, vectors).await?;
                OpResult::Put
            }
            Op::Search(op) => {
                let query = embedded.queries.get(&i).map(Vec::as_slice);
                OpResult::Search(read::search(tx, &op, query, vectors, refresh_on_read).await?)
            }
            Op::ListNamespaces(op) => OpResult::ListNamespaces(read::namespaces(tx, &op).await?),
        };
        results.push(result);
    }
    Ok(results)
}

#[async_trait]
impl BaseStore for PostgresStore {
    async fn batch(&self, ops: Vec<Op>) -> Result<Vec<OpResult>> {
        validate_all(&ops)?;
        // Embeddings are computed before a connection or transaction is taken.
        let embedded = embed_batch(self.index.as_ref().map(|(c, _)| c), &ops).await?;
        let vectors = self.vector_backend();
        let refresh = self.ttl.as_ref().is_some_and(|c| c.refresh_on_read);
        let mut client = self.pool.get().await.map_err(|e| backend("connect", e))?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| backend("begin", e))?;
        let results = run(&tx, ops, embedded, vectors, refresh).await?;
        tx.commit().await.map_err(|e| backend("commit", e))?;
        Ok(results)
    }

    fn ttl_config(&self) -> Option<&TtlConfig> {
        self.ttl.as_ref()
    }

    async fn sweep_ttl(&self) -> Result<usize> {
        let client = self.pool.get().await.map_err(|e| backend("connect", e))?;
        sweep_expired(&client).await
    }
}
