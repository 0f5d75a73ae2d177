//! [`SqliteStore`]: the tables, migrations and encodings of langgraph-checkpoint-sqlite
//! 3.1.2's `SqliteStore`, so one file serves a Python and a Rust agent at once.
//!
//! * `store(prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)`: `prefix`
//!   is the namespace joined by `.`, `value` the compact JSON of the object as a BLOB (the
//!   bytes `orjson.dumps` returns, which Python binds as they are), `created_at`/`updated_at` SQLite's `CURRENT_TIMESTAMP`,
//!   `expires_at` the text Python's sqlite3 writes for an aware datetime
//!   (`YYYY-MM-DD HH:MM:SS.ffffff+00:00`), refreshed on read with Python's own SQL.
//!   Migrations are tracked in `store_migrations(v)`, five of them, applied in the same order.
//! * With an index config, `store_vectors(prefix, key, field_name, embedding, …)` (tracked in
//!   `vector_migrations`): `embedding` is the little-endian `f32` array that
//!   `sqlite_vec.serialize_float32` writes. Vector search is an exact cosine scan in Rust
//!   (sqlite-vec is not needed to read or write those rows).
//!
//! Differences from Python, all on the safe side: reads skip expired rows (Python returns
//! them until its sweeper runs); a re-put replaces the item's vectors instead of leaving
//! stale fields; a delete removes its vectors (Python relies on a foreign key cascade that
//! SQLite does not enforce unless asked); searches order ties of the second-resolution
//! `updated_at` by most recent write (`rowid`).

use crate::embed::IndexConfig;
use crate::error::{Result, StoreError};
use crate::exec::{best_score, embed_batch, list_namespaces, rank, to_search_items, Embedded};
use crate::filter;
use crate::item::{Document, Item};
use crate::namespace::Namespace;
use crate::op::{Op, OpResult};
use crate::store::{validate_all, BaseStore};
use crate::time::Timestamp;
use crate::ttl::TtlConfig;
use async_trait::async_trait;
use parking_lot::Mutex;
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The migrations of LangGraph's `SqliteStore`, in order (`store_migrations.v` = index).
pub const MIGRATIONS: [&str; 5] = [
    "
CREATE TABLE IF NOT EXISTS store (
    -- 'prefix' represents the doc's 'namespace'
    prefix text NOT NULL,
    key text NOT NULL,
    value text NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key)
);
",
    "
-- For faster lookups by prefix
CREATE INDEX IF NOT EXISTS store_prefix_idx ON store (prefix);
",
    "
-- Add expires_at column to store table
ALTER TABLE store
ADD COLUMN expires_at TIMESTAMP;
",
    "
-- Add ttl_minutes column to store table
ALTER TABLE store
ADD COLUMN ttl_minutes REAL;
",
    "
-- Add index for efficient TTL sweeping
CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at)
WHERE expires_at IS NOT NULL;
",
];

/// The vector migrations of LangGraph's `SqliteStore` (`vector_migrations.v` = index).
pub const VECTOR_MIGRATIONS: [&str; 1] = ["
CREATE TABLE IF NOT EXISTS store_vectors (
    prefix text NOT NULL,
    key text NOT NULL,
    field_name text NOT NULL,
    embedding BLOB,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE
);
"];

const REFRESH_SQL: &str = "UPDATE store
SET expires_at = DATETIME(CURRENT_TIMESTAMP, '+' || ttl_minutes || ' minutes')
WHERE prefix = ? AND key = ? AND ttl_minutes IS NOT NULL";

/// A store in a SQLite file that LangGraph's `SqliteStore` reads and writes too.
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
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
        Self::from_connection(Connection::open(path)?)
    }

    /// A private in-memory database (tests, scratch).
    pub fn open_in_memory() -> Result<Self> {
        Self::from_connection(Connection::open_in_memory()?)
    }

    /// Wraps an open connection and runs the migrations.
    pub fn from_connection(conn: Connection) -> Result<Self> {
        conn.busy_timeout(Duration::from_secs(10))?;
        migrate(&conn, "store_migrations", &MIGRATIONS)?;
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
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
        conn.busy_timeout(Duration::from_secs(10))?;
        let has_store: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store')",
            [],
            |r| r.get(0),
        )?;
        if !has_store {
            return Err(StoreError::Backend(
                "this database holds no store (no `store` table)".to_owned(),
            ));
        }
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            index: None,
            ttl: None,
            read_only: true,
        })
    }

    /// Enables semantic search (runs the vector migrations).
    pub fn with_index(mut self, index: IndexConfig) -> Result<Self> {
        migrate(&self.conn.lock(), "vector_migrations", &VECTOR_MIGRATIONS)?;
        self.index = Some(index);
        Ok(self)
    }

    /// Sets the TTL config.
    pub fn with_ttl(mut self, ttl: TtlConfig) -> Self {
        self.ttl = Some(ttl);
        self
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || f(&mut conn.lock()))
            .await
            .map_err(|e| StoreError::Backend(format!("the SQLite worker task failed: {e}")))?
    }
}

fn migrate(conn: &Connection, table: &str, migrations: &[&str]) -> Result<()> {
    conn.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS {table} (v INTEGER PRIMARY KEY)"
    ))?;
    let current: Option<i64> = conn
        .query_row(
            &format!("SELECT v FROM {table} ORDER BY v DESC LIMIT 1"),
            [],
            |r| r.get(0),
        )
        .optional()?;
    let start = current.map_or(0, |v| v + 1);
    for (v, sql) in migrations.iter().enumerate().skip(start.max(0) as usize) {
        conn.execute_batch(sql)?;
        conn.execute(&format!("INSERT INTO {table} (v) VALUES (?)"), [v as i64])?;
    }
    Ok(())
}

struct Row {
    prefix: String,
    key: String,
    value: Vec<u8>,
    created_at: String,
    updated_at: String,
    expires_at: Option<String>,
}

impl Row {
    fn live(&self, now: Timestamp) -> Result<bool> {
        match &self.expires_at {
            None => Ok(true),
            Some(t) => Ok(self.ts(t, "expires_at")? > now),
        }
    }

    fn ts(&self, text: &str, what: &str) -> Result<Timestamp> {
        Timestamp::parse(text).ok_or_else(|| self.corrupt(format!("bad {what} {text:?}")))
    }

    fn corrupt(&self, reason: String) -> StoreError {
        StoreError::Corrupt {
            namespace: self.prefix.clone(),
            key: self.key.clone(),
            reason,
        }
    }

    fn into_item(self) -> Result<Item> {
        let value: Document = match serde_json::from_slice(&self.value) {
            Ok(serde_json::Value::Object(m)) => m,
            Ok(_) => return Err(self.corrupt("value is not a JSON object".into())),
            Err(e) => return Err(self.corrupt(format!("value is not JSON: {e}"))),
        };
        Ok(Item {
            created_at: self.ts(&self.created_at, "created_at")?,
            updated_at: self.ts(&self.updated_at, "updated_at")?,
            namespace: Namespace::from_text(&self.prefix),
            key: self.key,
            value,
        })
    }
}

const ROW_COLUMNS: &str = "prefix, key, value, created_at, updated_at, expires_at";

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        prefix: r.get(0)?,
        key: r.get(1)?,
        value: match r.get_ref(2)? {
            // Python binds `orjson.dumps(...)` bytes (a BLOB); text is read too.
            rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => b.to_vec(),
            other => {
                return Err(rusqlite::Error::FromSqlConversionFailure(
                    2,
                    other.data_type(),
                    "value is neither JSON text nor bytes".into(),
                ))
            }
        },
        created_at: r.get(3)?,
        updated_at: r.get(4)?,
        expires_at: r.get(5)?,
    })
}

/// `prefix = ? OR prefix GLOB ?` for a namespace and its descendants, GLOB metacharacters
/// escaped (as LangGraph does: case-sensitive, whole labels only).
fn prefix_condition(prefix: &Namespace) -> Option<(String, String)> {
    if prefix.is_empty() {
        return None;
    }
    let text = prefix.to_text();
    let escaped = text
        .replace('[', "[[]")
        .replace('*', "[*]")
        .replace('?', "[?]");
    Some((text, format!("{escaped}.*")))
}

/// SQL conditions that keep every row `filter` matches and drop most others, so SQLite skips
/// rows without decoding them in Rust (which still applies the exact filter afterwards).
/// Only the simple cases: a top-level key without `.` or `"`, compared with a string or a
/// number by equality or `$eq $gt $gte $lt $lte`. The JSON path and the operand are bound
/// parameters; the only SQL text is chosen here from a fixed set.
fn prefilter(filter: &serde_json::Value, conds: &mut Vec<String>, args: &mut Vec<SqlValue>) {
    use serde_json::Value;
    let Value::Object(f) = filter else { return };
    let operand = |v: &Value| match v {
        Value::String(s) => Some(SqlValue::Text(s.clone())),
        // Beyond 2^53 a float parameter could miss an exact integer: leave those to Rust.
        Value::Number(n) => n
            .as_f64()
            .filter(|x| x.is_finite() && x.abs() < 9.0e15)
            .map(SqlValue::Real),
        _ => None,
    };
    for (key, cond) in f {
        if key.is_empty() || key.contains(['.', '"', '\\']) {
            continue;
        }
        let path = format!("$.\"{key}\"");
        let mut push = |sql_op: &str, v: &Value| {
            if let Some(x) = operand(v) {
                args.push(SqlValue::Text(path.clone()));
                let p = args.len();
                args.push(x);
                conds.push(format!(
                    "json_extract(CAST(value AS TEXT), ?{p}) {sql_op} ?{}",
                    p + 1
                ));
            }
        };
        match cond {
            Value::Object(ops) if ops.keys().any(|k| k.starts_with('$')) => {
                for (op, v) in ops {
                    match op.as_str() {
                        "$eq" => push("=", v),
                        "$gt" => push(">", v),
                        "$gte" => push(">=", v),
                        "$lt" => push("<", v),
                        "$lte" => push("<=", v),
                        _ => {}
                    }
                }
            }
            scalar => push("=", scalar),
        }
    }
}

fn decode_vector(blob: &[u8]) -> Option<Vec<f32>> {
    if !blob.len().is_multiple_of(4) {
        return None;
    }
    Some(
        blob.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

fn encode_vector(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn run_batch(
    tx: &Transaction<'_>,
    ops: Vec<Op>,
    mut embedded: Embedded,
    vectors_table: bool,
    refresh_on_read: bool,
) -> Result<Vec<OpResult>> {
    let mut results = Vec::with_capacity(ops.len());
    for (i, op) in ops.into_iter().enumerate() {
        let now = Timestamp::now();
        let result = match op {
            Op::Get(op) => {
                let prefix = op.namespace.to_text();
                let row = tx
                    .prepare_cached(&format!(
                        "SELECT {ROW_COLUMNS} FROM store WHERE prefix = ? AND key = ?"
                    ))?
                    .query_row(params![prefix, op.key], read_row)
                    .optional()?;
                match row {
                    Some(row) if row.live(now)? => {
                        if op.refresh_ttl && refresh_on_read {
                            tx.prepare_cached(REFRESH_SQL)?
                                .execute(params![prefix, op.key])?;
                        }
                        OpResult::Get(Some(row.into_item()?))
                    }
                    _ => OpResult::Get(None),
                }
            }
            Op::Put(op) => {
                let prefix = op.namespace.to_text();
                if vectors_table {
                    tx.prepare_cached("DELETE FROM store_vectors WHERE prefix = ? AND key = ?")?
                        .execute(params![prefix, op.key])?;
                }
                match op.value {
                    None => {
                        tx.prepare_cached("DELETE FROM store WHERE prefix = ? AND key = ?")?
                            .execute(params![prefix, op.key])?;
                    }
                    Some(value) => {
                        // Bytes, as Python binds `orjson.dumps(value)`: a BLOB of compact JSON.
                        let text = serde_json::to_vec(&value)
                            .map_err(|e| StoreError::Backend(e.to_string()))?;
                        let expires = op.ttl.map(|t| now.plus_minutes(t).to_sqlite_micros());
                        tx.prepare_cached(
                            "INSERT OR REPLACE INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)
                             VALUES (?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, ?, ?)",
                        )?
                        .execute(params![prefix, op.key, text, expires, op.ttl])?;
                        for (field, v) in embedded.puts.remove(&i).unwrap_or_default() {
                            tx.prepare_cached(
                                "INSERT OR REPLACE INTO store_vectors (prefix, key, field_name, embedding, created_at, updated_at)
                                 VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)",
                            )?
                            .execute(params![prefix, op.key, field, encode_vector(&v)])?;
                        }
                    }
                }
                OpResult::Put
            }
            Op::Search(op) => {
                let query = embedded.queries.get(&i).map(Vec::as_slice);
                let cond = prefix_condition(&op.namespace_prefix);
                let where_sql = if cond.is_some() {
                    "WHERE (prefix = ?1 OR prefix GLOB ?2)"
                } else {
                    ""
                };
                let args: Vec<String> = cond.map(|(a, b)| vec![a, b]).unwrap_or_default();
                let mut vectors: HashMap<(String, String), Vec<Vec<f32>>> = HashMap::new();
                if query.is_some() && vectors_table {
                    let mut stmt = tx.prepare_cached(&format!(
                        "SELECT prefix, key, embedding FROM store_vectors {where_sql}"
                    ))?;
                    let mut rows = stmt.query(rusqlite::params_from_iter(&args))?;
                    while let Some(r) = rows.next()? {
                        let blob: Option<Vec<u8>> = r.get(2)?;
                        if let Some(v) = blob.as_deref().and_then(decode_vector) {
                            vectors.entry((r.get(0)?, r.get(1)?)).or_default().push(v);
                        }
                    }
                }
                // Without a query the page can stop early; with one every candidate counts.
                let stop = match (query, op.offset.checked_add(op.limit)) {
                    (None, Some(n)) => n,
                    _ => usize::MAX,
                };
                let mut candidates = Vec::new();
                {
                    let mut sql_args: Vec<SqlValue> =
                        args.iter().cloned().map(SqlValue::Text).collect();
                    let mut conds: Vec<String> = Vec::new();
                    if !where_sql.is_empty() {
                        conds.push("(prefix = ?1 OR prefix GLOB ?2)".into());
                    }
                    if let Some(f) = &op.filter {
                        prefilter(f, &mut conds, &mut sql_args);
                    }
                    let where_all = if conds.is_empty() {
                        String::new()
                    } else {
                        format!("WHERE {}", conds.join(" AND "))
                    };
                    let mut stmt = tx.prepare_cached(&format!(
                        "SELECT {ROW_COLUMNS} FROM store {where_all} ORDER BY updated_at DESC, rowid DESC"
                    ))?;
                    let mut rows = stmt.query(rusqlite::params_from_iter(&sql_args))?;
                    while let Some(r) = rows.next()? {
                        if candidates.len() >= stop {
                            break;
                        }
                        let row = read_row(r)?;
                        if !row.live(now)? {
                            continue;
                        }
                        let vs = vectors
                            .remove(&(row.prefix.clone(), row.key.clone()))
                            .unwrap_or_default();
                        let item = row.into_item()?;
                        if op
                            .filter
                            .as_ref()
                            .is_some_and(|f| !filter::matches(&item.value, f))
                        {
                            continue;
                        }
                        let score = query.and_then(|q| best_score(q, vs.iter().map(Vec::as_slice)));
                        candidates.push((item, score));
                    }
                }
                let found = to_search_items(rank(candidates, query.is_some(), op.offset, op.limit));
                if op.refresh_ttl && refresh_on_read {
                    let mut stmt = tx.prepare_cached(REFRESH_SQL)?;
                    for hit in &found {
                        stmt.execute(params![hit.namespace.to_text(), hit.key])?;
                    }
                }
                OpResult::Search(found)
            }
            Op::ListNamespaces(op) => {
                let mut stmt =
                    tx.prepare_cached("SELECT DISTINCT prefix, expires_at FROM store")?;
                let mut rows = stmt.query([])?;
                let mut live = Vec::new();
                while let Some(r) = rows.next()? {
                    let prefix: String = r.get(0)?;
                    let expires: Option<String> = r.get(1)?;
                    let alive =
                        expires.is_none_or(|t| Timestamp::parse(&t).is_none_or(|t| t > now));
                    if alive {
                        live.push(prefix);
                    }
                }
                live.sort();
                live.dedup();
                let all = live.iter().map(|p| Namespace::from_text(p));
                OpResult::ListNamespaces(list_namespaces(all, &op))
            }
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
        self.blocking(move |conn| {
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
        self.blocking(move |conn| {
            let now = Timestamp::now();
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let mut expired = Vec::new();
            {
                let mut stmt = tx.prepare(
                    "SELECT prefix, key, expires_at FROM store WHERE expires_at IS NOT NULL",
                )?;
                let mut rows = stmt.query([])?;
                while let Some(r) = rows.next()? {
                    let t: String = r.get(2)?;
                    if Timestamp::parse(&t).is_some_and(|t| t <= now) {
                        expired.push((r.get::<_, String>(0)?, r.get::<_, String>(1)?));
                    }
                }
            }
            for (prefix, key) in &expired {
                tx.execute(
                    "DELETE FROM store WHERE prefix = ? AND key = ?",
                    params![prefix, key],
                )?;
                if vectors_table {
                    tx.execute(
                        "DELETE FROM store_vectors WHERE prefix = ? AND key = ?",
                        params![prefix, key],
                    )?;
                }
            }
            tx.commit()?;
            Ok(expired.len())
        })
        .await
    }
}
