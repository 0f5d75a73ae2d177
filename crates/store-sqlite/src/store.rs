//! [`SqliteStore`]: opening (with LangGraph's migrations, or read-only), and the batch, which
//! runs its ops in order in one transaction (`read.rs`, `write.rs`) after embedding them.

use crate::error::{self, Error};
use crate::maintenance::sweep_expired;
use crate::pool::Pool;
use crate::schema::migrate;
use crate::sql::{self, MIGRATIONS, VECTOR_MIGRATIONS};
use crate::{read, write};
use async_trait::async_trait;
use rusqlite::{Connection, Transaction};
use stategraph_store::exec::{embed_batch, validate_all, Embedded};
use stategraph_store::{
    BaseStore, IndexConfig, Op, OpResult, Result, StoreError, Timestamp, TtlConfig,
};
use std::path::Path;

/// A store in a SQLite file that LangGraph's `SqliteStore` reads and writes too.
pub struct SqliteStore {
    pool: Pool,
    index: Option<IndexConfig>,
    ttl: Option<TtlConfig>,
    /// Opened by [`SqliteStore::read_only`]: batches run in a deferred transaction.
    read_only: bool,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("index", &self.index)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the file at `path` and runs the migrations.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_connection(Connection::open(path).map_err(Error::from)?)
    }

    /// A private in-memory database (tests, scratch).
    pub fn open_in_memory() -> Result<Self> {
        Self::from_connection(Connection::open_in_memory().map_err(Error::from)?)
    }

    /// Wraps an open connection and runs the migrations.
    pub fn from_connection(conn: Connection) -> Result<Self> {
        let pool = Pool::new(conn)?;
        pool.now(|conn| migrate(conn, "store_migrations", &MIGRATIONS))?;
        Ok(SqliteStore {
            pool,
            index: None,
            ttl: None,
            read_only: false,
        })
    }

    /// Wraps a connection opened read-only (e.g. with `SQLITE_OPEN_READ_ONLY`) for reading
    /// an existing store: no migration runs, batches take no write lock (a deferred
    /// transaction), and no TTL is refreshed. Fails with [`StoreError::Backend`] when the
    /// database holds no `store` table. Writes through this store fail with the
    /// database's own error.
    pub fn read_only(conn: Connection) -> Result<Self> {
        let pool = Pool::new(conn)?;
        let has_store: bool =
            pool.now(|conn| Ok(conn.query_row(sql::HAS_STORE_TABLE, [], |r| r.get(0))?))?;
        if !has_store {
            return Err(StoreError::Backend(
                "this database holds no store (no `store` table)".to_owned(),
            ));
        }
        Ok(SqliteStore {
            pool,
            index: None,
            ttl: None,
            read_only: true,
        })
    }

    /// Enables semantic search (runs the vector migrations).
    pub fn with_index(mut self, index: IndexConfig) -> Result<Self> {
        self.pool
            .now(|conn| migrate(conn, "vector_migrations", &VECTOR_MIGRATIONS))?;
        self.index = Some(index);
        Ok(self)
    }

    /// Sets the TTL config.
    pub fn with_ttl(mut self, ttl: TtlConfig) -> Self {
        self.ttl = Some(ttl);
        self
    }
}

/// Runs a batch's ops in order inside `tx`, each with what [`embed_batch`] computed for it.
fn run_batch(
    tx: &Transaction<'_>,
    ops: Vec<Op>,
    mut embedded: Embedded,
    vectors_table: bool,
    refresh_on_read: bool,
) -> error::Result<Vec<OpResult>> {
    let mut results = Vec::with_capacity(ops.len());
    for (i, op) in ops.into_iter().enumerate() {
        let now = Timestamp::now();
        let result = match op {
            Op::Get(op) => OpResult::Get(read::get(tx, &op, now, refresh_on_read)?),
            Op::Put(op) => {
                let vectors = embedded.puts.remove(&i).unwrap_or_default();
                write::put(tx, op, vectors, vectors_table, now)?;
                OpResult::Put
            }
            Op::Search(op) => {
                let query = embedded.queries.get(&i).map(Vec::as_slice);
                OpResult::Search(read::search(
                    tx,
                    &op,
                    query,
                    vectors_table,
                    now,
                    refresh_on_read,
                )?)
            }
            Op::ListNamespaces(op) => OpResult::ListNamespaces(read::namespaces(tx, &op, now)?),
        };
        results.push(result);
    }
    Ok(results)
}

#[async_trait]
impl BaseStore for SqliteStore {
    async fn batch(&self, ops: Vec<Op>) -> Result<Vec<OpResult>> {
        validate_all(&ops)?;
        let embedded = embed_batch(self.index.as_ref(), &ops).await?;
        let vectors_table = self.index.is_some();
        let refresh = !self.read_only && self.ttl.as_ref().is_some_and(|c| c.refresh_on_read);
        let behavior = if self.read_only {
            rusqlite::TransactionBehavior::Deferred
        } else {
            rusqlite::TransactionBehavior::Immediate
        };
        self.pool
            .blocking(move |conn| {
                let tx = conn.transaction_with_behavior(behavior)?;
                let results = run_batch(&tx, ops, embedded, vectors_table, refresh)?;
                tx.commit()?;
                Ok(results)
            })
            .await
    }

    fn ttl_config(&self) -> Option<&TtlConfig> {
        self.ttl.as_ref()
    }

    async fn sweep_ttl(&self) -> Result<usize> {
        let vectors_table = self.index.is_some();
        self.pool
            .blocking(move |conn| sweep_expired(conn, vectors_table, Timestamp::now()))
            .await
    }
}
