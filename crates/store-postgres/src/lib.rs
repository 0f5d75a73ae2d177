//! [`PostgresStore`]: stategraph's store on the tables of langgraph-checkpoint-postgres
//! 3.2.0's `PostgresStore`, so one database serves a Python and a Rust agent at once.
//!
//! * `store(prefix text, key text, value jsonb, created_at timestamptz, updated_at
//!   timestamptz, expires_at timestamptz, ttl_minutes int)`, migrations tracked in
//!   `store_migrations(v)` (the same four, in the same order, so either side may create the
//!   tables). `prefix` is the namespace joined by `.`.
//! * Values are bound as JSON text and cast to `jsonb` by the server; timestamps are read as
//!   exact microseconds since the epoch.
//! * TTL as Python writes it: `expires_at = NOW() + '<ttl*60> seconds'`, `ttl_minutes` an
//!   `int` (so a fractional TTL is refreshed as a whole number of minutes, as in Python),
//!   refreshed on read with `NOW() + ttl_minutes minutes` (when the store has a TTL config
//!   with `refresh_on_read`, as in Python). Expired rows are never returned.
//! * Filters are evaluated in Rust on the decoded values (`stategraph_store::filter`);
//!   SQL only selects by namespace (bound parameters, `LIKE` metacharacters escaped) and
//!   expiry.
//! * Semantic search ([`PostgresStore::with_index`]): when `CREATE EXTENSION vector`
//!   succeeds, the vectors go to LangGraph's own `store_vectors(prefix, key, field_name,
//!   embedding vector(dims), …)` (tracked in `vector_migrations`, with its default HNSW
//!   cosine index), so Python reads them. When pgvector is not installed (Python's
//!   `PostgresStore` cannot index at all then), they go to a table of stategraph's own,
//!   `stategraph_store_vectors`, with `embedding real[]` (a name Python never uses, so a
//!   later pgvector install cannot meet a column of the wrong type). Either way a search with
//!   a query is an exact scan: the vectors under the namespace prefix are fetched and ranked
//!   by cosine similarity in Rust (`stategraph_store::exec::rank`), as on SQLite; without a
//!   filter only the page's values are read (the vectors are scored first).
//!   **Only the `real[]` fallback is tested here** (the machine's Debian has no pgvector
//!   package); the pgvector path is written against Python's migrations but has not run.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use stategraph_store::exec::{
    best_score, embed_batch, list_namespaces, rank, to_search_items, validate_all, Embedded,
};
use stategraph_store::{
    filter, BaseStore, Document, IndexConfig, Item, Namespace, Op, OpResult, Result, StoreError,
    Timestamp, TtlConfig,
};
use std::collections::HashMap;
use tokio_postgres::NoTls;

/// The migrations of LangGraph's `PostgresStore`, in order (`store_migrations.v` = index).
pub const MIGRATIONS: [&str; 4] = [
    "
CREATE TABLE IF NOT EXISTS store (
    -- 'prefix' represents the doc's 'namespace'
    prefix text NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key)
);
",
    "
-- For faster lookups by prefix
CREATE INDEX CONCURRENTLY IF NOT EXISTS store_prefix_idx ON store USING btree (prefix text_pattern_ops);
",
    "
-- Add expires_at column to store table
ALTER TABLE store
ADD COLUMN IF NOT EXISTS expires_at TIMESTAMP WITH TIME ZONE,
ADD COLUMN IF NOT EXISTS ttl_minutes INT;
",
    "
-- Add indexes for efficient TTL sweeping
CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at)
WHERE expires_at IS NOT NULL;
",
];

const LIVE: &str = "(expires_at IS NULL OR expires_at > NOW())";
const COLUMNS: &str = "prefix, key, value::text, \
    (EXTRACT(EPOCH FROM created_at) * 1000000)::bigint, \
    (EXTRACT(EPOCH FROM updated_at) * 1000000)::bigint";
const REFRESH: &str = "UPDATE store SET expires_at = NOW() + (ttl_minutes || ' minutes')::interval
    WHERE prefix = $1 AND key = $2 AND ttl_minutes IS NOT NULL";

/// Where a store keeps its vectors (see the crate docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorBackend {
    /// LangGraph's `store_vectors` with a pgvector `vector(dims)` column.
    Pgvector,
    /// stategraph's `stategraph_store_vectors` with a `real[]` column (no pgvector).
    RealArray,
}

impl VectorBackend {
    fn table(self) -> &'static str {
        match self {
            VectorBackend::Pgvector => "store_vectors",
            VectorBackend::RealArray => "stategraph_store_vectors",
        }
    }

    /// The embedding column as selected: binary `real[]`, or pgvector's text output.
    fn select(self) -> &'static str {
        match self {
            VectorBackend::Pgvector => "embedding::text",
            VectorBackend::RealArray => "embedding",
        }
    }

    fn cast(self) -> &'static str {
        match self {
            VectorBackend::Pgvector => "vector",
            VectorBackend::RealArray => "real[]",
        }
    }

    /// A vector as the column type's text input.
    fn literal(self, v: &[f32]) -> String {
        let body = v.iter().map(f32::to_string).collect::<Vec<_>>().join(",");
        match self {
            VectorBackend::Pgvector => format!("[{body}]"),
            VectorBackend::RealArray => format!("{{{body}}}"),
        }
    }
}

/// Parses a vector's text output (`[1,2]` from pgvector, `{1,2}` from `real[]`).
fn parse_vector(text: &str) -> Option<Vec<f32>> {
    let body = text
        .trim()
        .strip_prefix(['[', '{'])?
        .strip_suffix([']', '}'])?;
    if body.trim().is_empty() {
        return Some(Vec::new());
    }
    body.split(',').map(|x| x.trim().parse().ok()).collect()
}

/// The vector migrations of LangGraph's `PostgresStore` with its default index config
/// (`vector` type, HNSW, cosine), `{dims}` filled in (`vector_migrations.v` = index).
pub fn pgvector_migrations(dims: usize) -> [String; 3] {
    [
        "
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
        CREATE EXTENSION vector;
    END IF;
END $$;
"
        .to_owned(),
        format!(
            "
CREATE TABLE IF NOT EXISTS store_vectors (
    prefix text NOT NULL,
    key text NOT NULL,
    field_name text NOT NULL,
    embedding vector({dims}),
    created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE
);
"
        ),
        "
CREATE INDEX CONCURRENTLY IF NOT EXISTS store_vectors_embedding_idx ON store_vectors 
    USING hnsw (embedding vector_cosine_ops);
"
        .to_owned(),
    ]
}

/// The table of the `real[]` fallback (created with `IF NOT EXISTS`; not Python's).
pub const REAL_ARRAY_TABLE: &str = "
CREATE TABLE IF NOT EXISTS stategraph_store_vectors (
    prefix text NOT NULL,
    key text NOT NULL,
    field_name text NOT NULL,
    embedding real[],
    created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE
);
";

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

fn backend(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("postgres {what}: {e}"))
}

impl PostgresStore {
    /// Connects to `url` (libpq URL or key=value string, no TLS) with a pool of at most
    /// `pool_size` connections, checks one connection opens, and runs the migrations.
    pub async fn connect(url: &str, pool_size: usize) -> Result<Self> {
        let config: tokio_postgres::Config = url.parse().map_err(|e| backend("url", e))?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| backend("pool", e))?;
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
        client
            .batch_execute("CREATE TABLE IF NOT EXISTS store_migrations (v INTEGER PRIMARY KEY)")
            .await
            .map_err(|e| backend("setup", e))?;
        let row = client
            .query_opt(
                "SELECT v FROM store_migrations ORDER BY v DESC LIMIT 1",
                &[],
            )
            .await
            .map_err(|e| backend("setup", e))?;
        let start = row.map_or(0, |r| r.get::<_, i32>(0) + 1);
        for (v, sql) in MIGRATIONS.iter().enumerate().skip(start.max(0) as usize) {
            client
                .batch_execute(sql)
                .await
                .map_err(|e| backend(&format!("migration {v}"), e))?;
            client
                .execute(
                    "INSERT INTO store_migrations (v) VALUES ($1)",
                    &[&(v as i32)],
                )
                .await
                .map_err(|e| backend("setup", e))?;
        }
        Ok(())
    }
}

fn to_item(row: &tokio_postgres::Row) -> Result<Item> {
    let prefix: String = row.get(0);
    let key: String = row.get(1);
    let text: String = row.get(2);
    let corrupt = |reason: String| StoreError::Corrupt {
        namespace: prefix.clone(),
        key: key.clone(),
        reason,
    };
    let value: Document = match serde_json::from_str(&text) {
        Ok(serde_json::Value::Object(m)) => m,
        Ok(_) => return Err(corrupt("value is not a JSON object".into())),
        Err(e) => return Err(corrupt(format!("value is not JSON: {e}"))),
    };
    let created: Option<i64> = row.get(3);
    let updated: Option<i64> = row.get(4);
    Ok(Item {
        namespace: Namespace::from_text(&prefix),
        key,
        value,
        created_at: Timestamp(created.unwrap_or(0)),
        updated_at: Timestamp(updated.unwrap_or(0)),
    })
}

type Param = Box<dyn tokio_postgres::types::ToSql + Sync + Send>;

/// SQL conditions that keep every row `filter` matches and drop most others, so the server
/// sends only likely matches (Rust still applies the exact filter). Only the simple cases:
/// a top-level key without `.`, compared with a string or a number by equality or
/// `$eq $gt $gte $lt $lte`. Key and operand are bound parameters; the SQL text is chosen here
/// from a fixed set. Comparisons are guarded by `jsonb_typeof` inside `CASE` (so a cast never
/// sees the wrong type) and strings compare bytewise (`COLLATE "C"`), as Rust compares them.
fn prefilter(filter: &serde_json::Value, conds: &mut Vec<String>, args: &mut Vec<Param>) {
    use serde_json::Value;
    let Value::Object(f) = filter else { return };
    for (key, cond) in f {
        if key.is_empty() || key.contains('.') {
            continue;
        }
        let mut push = |op: &str, v: &Value| {
            let (kind, operand): (&str, Param) = match v {
                Value::String(s) => ("string", Box::new(s.clone())),
                // Beyond 2^53 float and exact comparisons may disagree: leave those to Rust.
                Value::Number(n) => match n.as_f64() {
                    Some(x) if x.is_finite() && x.abs() < 9.0e15 => ("number", Box::new(x)),
                    _ => return,
                },
                _ => return,
            };
            args.push(Box::new(key.clone()));
            let k = args.len();
            args.push(operand);
            let o = k + 1;
            let cmp = match (op, kind) {
                ("=", "string") => format!("value->(${k}::text) = to_jsonb(${o}::text)"),
                ("=", _) => format!("value->(${k}::text) = to_jsonb(${o}::float8)"),
                (_, "string") => format!(
                    "CASE WHEN jsonb_typeof(value->(${k}::text)) = 'string' \
                     THEN (value->>(${k}::text)) COLLATE \"C\" {op} ${o}::text ELSE false END"
                ),
                _ => format!(
                    "CASE WHEN jsonb_typeof(value->(${k}::text)) = 'number' \
                     THEN (value->>(${k}::text))::float8 {op} ${o}::float8 ELSE false END"
                ),
            };
            conds.push(cmp);
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

fn like_prefix(prefix: &Namespace) -> (String, String) {
    let text = prefix.to_text();
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    (text, format!("{escaped}.%"))
}

/// A search with a query and no filter, without reading every value: the live items'
/// vectors are scored first (rows in the natural order, so ties keep it), then only the
/// page's values are fetched, and unembedded items fill up to `limit` (as
/// `stategraph_store::exec::rank` orders them).
async fn search_by_vectors<C: GenericClient + Sync>(
    tx: &C,
    op: &stategraph_store::SearchOp,
    query: &[f32],
    kind: VectorBackend,
) -> Result<Vec<stategraph_store::SearchItem>> {
    let db = |e: tokio_postgres::Error| backend("query", e);
    let mut args: Vec<String> = Vec::new();
    let mut cond = String::new();
    if !op.namespace_prefix.is_empty() {
        let (exact, like) = like_prefix(&op.namespace_prefix);
        args = vec![exact, like];
        cond = " AND (s.prefix = $1 OR s.prefix LIKE $2)".into();
    }
    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
        .iter()
        .map(|a| a as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect();
    let rows = tx
        .query(
            &format!(
                "SELECT s.prefix, s.key, v.{} FROM store s JOIN {} v \
                 ON v.prefix = s.prefix AND v.key = s.key \
                 WHERE {LIVE}{cond} ORDER BY s.updated_at DESC, s.prefix, s.key",
                kind.select(),
                kind.table()
            ),
            &refs,
        )
        .await
        .map_err(db)?;
    // An item's rows are adjacent (same updated_at, prefix, key): keep its best score.
    let mut scored: Vec<((String, String), Option<f64>)> = Vec::new();
    for r in &rows {
        let id: (String, String) = (r.get(0), r.get(1));
        let v = match kind {
            VectorBackend::RealArray => r.get::<_, Option<Vec<f32>>>(2),
            VectorBackend::Pgvector => r.get::<_, Option<&str>>(2).and_then(parse_vector),
        };
        let score = v.and_then(|v| best_score(query, [v.as_slice()]));
        match scored.last_mut() {
            Some((last, best)) if *last == id => {
                if let Some(s) = score {
                    *best = Some(best.map_or(s, |b: f64| b.max(s)));
                }
            }
            _ => scored.push((id, score)),
        }
    }
    // An item whose only vectors are unreadable counts as unembedded (as in `run`).
    let (scored, broken): (Vec<_>, Vec<_>) = scored.into_iter().partition(|(_, s)| s.is_some());
    let page = rank(scored, true, op.offset, op.limit);
    let (prefixes, keys): (Vec<String>, Vec<String>) = page
        .iter()
        .map(|((p, k), _)| (p.clone(), k.clone()))
        .unzip();
    let mut by_id: HashMap<(String, String), Item> = HashMap::new();
    if !page.is_empty() {
        for r in tx
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM store WHERE {LIVE} AND (prefix, key) IN \
                     (SELECT * FROM unnest($1::text[], $2::text[]))"
                ),
                &[&prefixes, &keys],
            )
            .await
            .map_err(db)?
        {
            let item = to_item(&r)?;
            by_id.insert((item.namespace.to_text(), item.key.clone()), item);
        }
    }
    let mut out: Vec<(Item, Option<f64>)> = page
        .into_iter()
        .filter_map(|(id, score)| by_id.remove(&id).map(|item| (item, score)))
        .collect();
    let room = op.limit.saturating_sub(out.len());
    if room > 0 {
        let broken_prefixes: Vec<String> = broken.iter().map(|((p, _), _)| p.clone()).collect();
        let broken_keys: Vec<String> = broken.iter().map(|((_, k), _)| k.clone()).collect();
        let mut args: Vec<Box<dyn tokio_postgres::types::ToSql + Sync + Send>> = vec![
            Box::new(broken_prefixes),
            Box::new(broken_keys),
            Box::new(room as i64),
        ];
        let mut cond = String::new();
        if !op.namespace_prefix.is_empty() {
            let (exact, like) = like_prefix(&op.namespace_prefix);
            args.push(Box::new(exact));
            args.push(Box::new(like));
            cond = " AND (s.prefix = $4 OR s.prefix LIKE $5)".into();
        }
        let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
            .iter()
            .map(|a| a.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let rows = tx
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM store s WHERE {LIVE}{cond} AND \
                     (NOT EXISTS (SELECT 1 FROM {} v WHERE v.prefix = s.prefix AND v.key = s.key) \
                      OR (s.prefix, s.key) IN (SELECT * FROM unnest($1::text[], $2::text[]))) \
                     ORDER BY s.updated_at DESC, s.prefix, s.key LIMIT $3",
                    kind.table()
                ),
                &refs,
            )
            .await
            .map_err(db)?;
        for r in &rows {
            out.push((to_item(r)?, None));
        }
    }
    Ok(to_search_items(out))
}

async fn run<C: GenericClient + Sync>(
    tx: &C,
    ops: Vec<Op>,
    mut embedded: Embedded,
    vectors: Option<VectorBackend>,
    refresh_on_read: bool,
) -> Result<Vec<OpResult>> {
    let db = |e: tokio_postgres::Error| backend("query", e);
    let mut results = Vec::with_capacity(ops.len());
    for (i, op) in ops.into_iter().enumerate() {
        let result = match op {
            Op::Get(op) => {
                let prefix = op.namespace.to_text();
                if op.refresh_ttl && refresh_on_read {
                    tx.execute(&format!("{REFRESH} AND {LIVE}"), &[&prefix, &op.key])
                        .await
                        .map_err(db)?;
                }
                let row = tx
                    .query_opt(
                        &format!(
                            "SELECT {COLUMNS} FROM store WHERE prefix = $1 AND key = $2 AND {LIVE}"
                        ),
                        &[&prefix, &op.key],
                    )
                    .await
                    .map_err(db)?;
                OpResult::Get(row.as_ref().map(to_item).transpose()?)
            }
            Op::Put(op) => {
                let prefix = op.namespace.to_text();
                if let Some(kind) = vectors {
                    // A re-put replaces the item's vectors (no stale fields survive).
                    tx.execute(
                        &format!(
                            "DELETE FROM {} WHERE prefix = $1 AND key = $2",
                            kind.table()
                        ),
                        &[&prefix, &op.key],
                    )
                    .await
                    .map_err(db)?;
                }
                match op.value {
                    None => {
                        tx.execute(
                            "DELETE FROM store WHERE prefix = $1 AND key = $2",
                            &[&prefix, &op.key],
                        )
                        .await
                        .map_err(db)?;
                    }
                    Some(value) => {
                        let text = serde_json::to_string(&value).map_err(|e| backend("json", e))?;
                        let interval = op.ttl.map(|t| format!("{} seconds", t * 60.0));
                        tx.execute(
                            "INSERT INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)
                             VALUES ($1, $2, $3::text::jsonb, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP,
                                     NOW() + $4::text::interval, $5::float8::int)
                             ON CONFLICT (prefix, key) DO UPDATE
                             SET value = EXCLUDED.value,
                                 updated_at = CURRENT_TIMESTAMP,
                                 expires_at = EXCLUDED.expires_at,
                                 ttl_minutes = EXCLUDED.ttl_minutes",
                            &[&prefix, &op.key, &text, &interval, &op.ttl],
                        )
                        .await
                        .map_err(db)?;
                        if let Some(kind) = vectors {
                            for (field, v) in embedded.puts.remove(&i).unwrap_or_default() {
                                tx.execute(
                                    &format!(
                                        "INSERT INTO {} (prefix, key, field_name, embedding)
                                         VALUES ($1, $2, $3, $4::text::{})",
                                        kind.table(),
                                        kind.cast()
                                    ),
                                    &[&prefix, &op.key, &field, &kind.literal(&v)],
                                )
                                .await
                                .map_err(db)?;
                            }
                        }
                    }
                }
                OpResult::Put
            }
            Op::Search(op) => {
                let query = embedded.queries.get(&i).map(Vec::as_slice);
                if let (Some(q), Some(kind), None) = (query, vectors, &op.filter) {
                    let found = search_by_vectors(tx, &op, q, kind).await?;
                    if op.refresh_ttl && refresh_on_read {
                        for hit in &found {
                            tx.execute(REFRESH, &[&hit.namespace.to_text(), &hit.key])
                                .await
                                .map_err(db)?;
                        }
                    }
                    results.push(OpResult::Search(found));
                    continue;
                }
                let mut found_vectors: HashMap<(String, String), Vec<Vec<f32>>> = HashMap::new();
                if let (Some(_), Some(kind)) = (query, vectors) {
                    let (sql, args): (String, Vec<String>) = if op.namespace_prefix.is_empty() {
                        (
                            format!(
                                "SELECT prefix, key, {} FROM {}",
                                kind.select(),
                                kind.table()
                            ),
                            Vec::new(),
                        )
                    } else {
                        let (exact, like) = like_prefix(&op.namespace_prefix);
                        (
                            format!(
                                "SELECT prefix, key, {} FROM {} \
                                 WHERE prefix = $1 OR prefix LIKE $2",
                                kind.select(),
                                kind.table()
                            ),
                            vec![exact, like],
                        )
                    };
                    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
                        .iter()
                        .map(|a| a as &(dyn tokio_postgres::types::ToSql + Sync))
                        .collect();
                    for r in tx.query(&sql, &refs).await.map_err(db)? {
                        let v = match kind {
                            // `real[]` arrives in binary, no text to parse.
                            VectorBackend::RealArray => r.get::<_, Option<Vec<f32>>>(2),
                            VectorBackend::Pgvector => {
                                r.get::<_, Option<&str>>(2).and_then(parse_vector)
                            }
                        };
                        if let Some(v) = v {
                            found_vectors
                                .entry((r.get(0), r.get(1)))
                                .or_default()
                                .push(v);
                        }
                    }
                }
                let mut conds = vec![LIVE.to_owned()];
                let mut args: Vec<Param> = Vec::new();
                if !op.namespace_prefix.is_empty() {
                    let (exact, like) = like_prefix(&op.namespace_prefix);
                    args.push(Box::new(exact));
                    args.push(Box::new(like));
                    conds.push("(prefix = $1 OR prefix LIKE $2)".into());
                }
                if let Some(f) = &op.filter {
                    prefilter(f, &mut conds, &mut args);
                }
                let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = args
                    .iter()
                    .map(|a| a.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
                    .collect();
                let rows = tx
                    .query(
                        &format!(
                            "SELECT {COLUMNS} FROM store WHERE {} ORDER BY updated_at DESC, prefix, key",
                            conds.join(" AND ")
                        ),
                        &refs,
                    )
                    .await
                .map_err(db)?;
                let mut candidates = Vec::new();
                for row in &rows {
                    let item = to_item(row)?;
                    if op
                        .filter
                        .as_ref()
                        .is_some_and(|f| !filter::matches(&item.value, f))
                    {
                        continue;
                    }
                    let score = query.and_then(|q| {
                        let vs = found_vectors
                            .get(&(item.namespace.to_text(), item.key.clone()))
                            .map(Vec::as_slice)
                            .unwrap_or_default();
                        best_score(q, vs.iter().map(Vec::as_slice))
                    });
                    candidates.push((item, score));
                }
                let found = to_search_items(rank(candidates, query.is_some(), op.offset, op.limit));
                if op.refresh_ttl && refresh_on_read {
                    for hit in &found {
                        tx.execute(REFRESH, &[&hit.namespace.to_text(), &hit.key])
                            .await
                            .map_err(db)?;
                    }
                }
                OpResult::Search(found)
            }
            Op::ListNamespaces(op) => {
                let rows = tx
                    .query(
                        &format!("SELECT DISTINCT prefix FROM store WHERE {LIVE}"),
                        &[],
                    )
                    .await
                    .map_err(db)?;
                let all = rows
                    .iter()
                    .map(|r| Namespace::from_text(r.get::<_, &str>(0)));
                OpResult::ListNamespaces(list_namespaces(all, &op))
            }
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
        let n = client
            .execute(
                "DELETE FROM store WHERE expires_at IS NOT NULL AND expires_at < NOW()",
                &[],
            )
            .await
            .map_err(|e| backend("sweep", e))?;
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_literals_read_back_exactly() {
        let v = [0.1f32, -2.5, 1e-7, 3.4e38, 0.0];
        for kind in [VectorBackend::Pgvector, VectorBackend::RealArray] {
            assert_eq!(parse_vector(&kind.literal(&v)).as_deref(), Some(&v[..]));
        }
        assert_eq!(parse_vector("{1, 2}"), Some(vec![1.0, 2.0]));
        assert_eq!(parse_vector("[]"), Some(vec![]));
        assert_eq!(parse_vector("1,2"), None, "no brackets");
        assert_eq!(parse_vector("[1,x]"), None, "not a number");
    }
}
