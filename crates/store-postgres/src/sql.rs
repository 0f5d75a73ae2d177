//! Every statement the Postgres store runs, as named constants (LangGraph's `PostgresStore`
//! keeps its own the same way), and the few that take a vector table's name (one of two
//! fixed names, [`crate::op::VectorBackend::table`]). The files that run SQL take it from here.

use crate::op::VectorBackend;

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

/// Whether a row is live (not expired).
pub(crate) const LIVE: &str = "(expires_at IS NULL OR expires_at > NOW())";
/// The columns [`crate::op::to_item`] reads, in its order.
pub(crate) const COLUMNS: &str = "prefix, key, value::text, \
    (EXTRACT(EPOCH FROM created_at) * 1000000)::bigint, \
    (EXTRACT(EPOCH FROM updated_at) * 1000000)::bigint";
/// Refreshes an item's expiry from its `ttl_minutes` (Python's own SQL).
pub(crate) const REFRESH: &str =
    "UPDATE store SET expires_at = NOW() + (ttl_minutes || ' minutes')::interval
    WHERE prefix = $1 AND key = $2 AND ttl_minutes IS NOT NULL";
/// [`REFRESH`] of a live item only (a get).
pub(crate) const REFRESH_LIVE: &str = "UPDATE store SET expires_at = NOW() + (ttl_minutes || ' minutes')::interval
    WHERE prefix = $1 AND key = $2 AND ttl_minutes IS NOT NULL AND (expires_at IS NULL OR expires_at > NOW())";
/// One live item ([`COLUMNS`]).
pub(crate) const SELECT_ITEM: &str = "SELECT prefix, key, value::text, \
    (EXTRACT(EPOCH FROM created_at) * 1000000)::bigint, \
    (EXTRACT(EPOCH FROM updated_at) * 1000000)::bigint FROM store WHERE prefix = $1 AND key = $2 AND (expires_at IS NULL OR expires_at > NOW())";
/// Deletes one item.
pub(crate) const DELETE_ITEM: &str = "DELETE FROM store WHERE prefix = $1 AND key = $2";
/// Writes one item (value as JSON text cast by the server, TTL as Python writes it).
pub(crate) const UPSERT_ITEM: &str =
    "INSERT INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)
                             VALUES ($1, $2, $3::text::jsonb, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP,
                                     NOW() + $4::text::interval, $5::float8::int)
                             ON CONFLICT (prefix, key) DO UPDATE
                             SET value = EXCLUDED.value,
                                 updated_at = CURRENT_TIMESTAMP,
                                 expires_at = EXCLUDED.expires_at,
                                 ttl_minutes = EXCLUDED.ttl_minutes";
/// The namespaces holding a live item.
pub(crate) const SELECT_NAMESPACES: &str =
    "SELECT DISTINCT prefix FROM store WHERE (expires_at IS NULL OR expires_at > NOW())";
/// Deletes every expired item.
pub(crate) const SWEEP: &str =
    "DELETE FROM store WHERE expires_at IS NOT NULL AND expires_at < NOW()";
/// Creates the migration table.
pub(crate) const CREATE_MIGRATIONS: &str =
    "CREATE TABLE IF NOT EXISTS store_migrations (v INTEGER PRIMARY KEY)";
/// The newest migration applied.
pub(crate) const SELECT_MIGRATION: &str = "SELECT v FROM store_migrations ORDER BY v DESC LIMIT 1";
/// Records one applied migration.
pub(crate) const INSERT_MIGRATION: &str = "INSERT INTO store_migrations (v) VALUES ($1)";

/// The search's candidate items under `conds` (a fixed set, operands bound), newest first.
pub(crate) fn select_items(conds: &str) -> String {
    format!("SELECT {COLUMNS} FROM store WHERE {conds} ORDER BY updated_at DESC, prefix, key")
}

/// Deletes one item's vectors.
pub(crate) fn delete_vectors(kind: VectorBackend) -> String {
    format!(
        "DELETE FROM {} WHERE prefix = $1 AND key = $2",
        kind.table()
    )
}

/// Writes one field's embedding.
pub(crate) fn insert_vector(kind: VectorBackend) -> String {
    format!(
        "INSERT INTO {} (prefix, key, field_name, embedding)
                                         VALUES ($1, $2, $3, $4::text::{})",
        kind.table(),
        kind.cast()
    )
}

/// The vectors of every item, or (`under_prefix`) of those under `$1`/`$2`.
pub(crate) fn select_vectors(kind: VectorBackend, under_prefix: bool) -> String {
    if under_prefix {
        format!(
            "SELECT prefix, key, {} FROM {} \
             WHERE prefix = $1 OR prefix LIKE $2",
            kind.select(),
            kind.table()
        )
    } else {
        format!(
            "SELECT prefix, key, {} FROM {}",
            kind.select(),
            kind.table()
        )
    }
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

/// Whether the database holds the `store` table.
pub(crate) const HAS_STORE_TABLE: &str = "SELECT to_regclass('store') IS NOT NULL";

/// A vector search's scoring pass: every live item's vectors under `cond` (empty, or the
/// prefix condition on `$1`/`$2`), an item's rows adjacent, newest first.
pub(crate) fn select_live_vectors(kind: VectorBackend, cond: &str) -> String {
    format!(
        "SELECT s.prefix, s.key, v.{} FROM store s JOIN {} v \
         ON v.prefix = s.prefix AND v.key = s.key \
         WHERE {LIVE}{cond} ORDER BY s.updated_at DESC, s.prefix, s.key",
        kind.select(),
        kind.table()
    )
}

/// A vector search's page: the live items of the listed `($1[i], $2[i])` keys.
pub(crate) fn select_listed_items() -> String {
    format!(
        "SELECT {COLUMNS} FROM store WHERE {LIVE} AND (prefix, key) IN \
         (SELECT * FROM unnest($1::text[], $2::text[]))"
    )
}

/// A vector search's filling: up to `$3` live items under `cond` (empty, or the prefix
/// condition on `$4`/`$5`) without vectors or among the listed `($1[i], $2[i])`.
pub(crate) fn select_unembedded(kind: VectorBackend, cond: &str) -> String {
    format!(
        "SELECT {COLUMNS} FROM store s WHERE {LIVE}{cond} AND \
         (NOT EXISTS (SELECT 1 FROM {} v WHERE v.prefix = s.prefix AND v.key = s.key) \
          OR (s.prefix, s.key) IN (SELECT * FROM unnest($1::text[], $2::text[]))) \
         ORDER BY s.updated_at DESC, s.prefix, s.key LIMIT $3",
        kind.table()
    )
}
