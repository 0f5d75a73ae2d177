//! Every statement the SQLite store runs, as named constants (LangGraph's `SqliteStore` keeps
//! its own the same way), and the few built from a fixed set of parts (the search's `WHERE`,
//! the migration tables' names). The files that run SQL take it from here.

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

/// Refreshes an item's expiry from its `ttl_minutes` (Python's own SQL).
pub(crate) const REFRESH_TTL: &str = "UPDATE store
SET expires_at = DATETIME(CURRENT_TIMESTAMP, '+' || ttl_minutes || ' minutes')
WHERE prefix = ? AND key = ? AND ttl_minutes IS NOT NULL";

/// Whether the database holds a `store` table (a read-only open checks it).
pub(crate) const HAS_STORE_TABLE: &str =
    "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store')";

/// The columns [`crate::op::Row`] reads, in its order.
pub(crate) const ROW_COLUMNS: &str = "prefix, key, value, created_at, updated_at, expires_at";

/// One item by namespace and key ([`ROW_COLUMNS`]).
pub(crate) const SELECT_ITEM: &str = "SELECT prefix, key, value, created_at, updated_at, expires_at FROM store WHERE prefix = ? AND key = ?";

/// Deletes one item.
pub(crate) const DELETE_ITEM: &str = "DELETE FROM store WHERE prefix = ? AND key = ?";

/// Deletes one item's vectors.
pub(crate) const DELETE_VECTORS: &str = "DELETE FROM store_vectors WHERE prefix = ? AND key = ?";

/// Writes one item (value as a BLOB of compact JSON, timestamps SQLite's).
pub(crate) const UPSERT_ITEM: &str = "INSERT OR REPLACE INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)
                             VALUES (?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, ?, ?)";

/// Writes one field's embedding.
pub(crate) const UPSERT_VECTOR: &str = "INSERT OR REPLACE INTO store_vectors (prefix, key, field_name, embedding, created_at, updated_at)
                                 VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)";

/// Every namespace with an expiry of one of its items (listing filters the live ones).
pub(crate) const SELECT_NAMESPACES: &str = "SELECT DISTINCT prefix, expires_at FROM store";

/// Every item that has an expiry (the sweep picks the expired ones).
pub(crate) const SELECT_EXPIRING: &str =
    "SELECT prefix, key, expires_at FROM store WHERE expires_at IS NOT NULL";

/// The search's prefix condition: `?1` the namespace's text, `?2` its escaped GLOB.
pub(crate) const PREFIX_CONDITION: &str = "(prefix = ?1 OR prefix GLOB ?2)";

/// [`PREFIX_CONDITION`] as a whole `WHERE` clause.
pub(crate) const WHERE_PREFIX: &str = "WHERE (prefix = ?1 OR prefix GLOB ?2)";

/// The search's candidate vectors, under `where_sql` (empty, or [`WHERE_PREFIX`]).
pub(crate) fn select_vectors(where_sql: &str) -> String {
    format!("SELECT prefix, key, embedding FROM store_vectors {where_sql}")
}

/// The search's candidate items, newest first, under `where_all` (built by `query.rs`
/// from a fixed set of conditions whose operands are bound parameters).
pub(crate) fn select_items(where_all: &str) -> String {
    format!("SELECT {ROW_COLUMNS} FROM store {where_all} ORDER BY updated_at DESC, rowid DESC")
}

/// Creates a migration table (`store_migrations` or `vector_migrations`, fixed names).
pub(crate) fn create_migration_table(table: &str) -> String {
    format!("CREATE TABLE IF NOT EXISTS {table} (v INTEGER PRIMARY KEY)")
}

/// The newest migration applied.
pub(crate) fn select_migration(table: &str) -> String {
    format!("SELECT v FROM {table} ORDER BY v DESC LIMIT 1")
}

/// Records one applied migration.
pub(crate) fn insert_migration(table: &str) -> String {
    format!("INSERT INTO {table} (v) VALUES (?)")
}
