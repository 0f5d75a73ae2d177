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
//!
//! The files follow the backend template (docs/design.md, "Backend template"): `sql.rs`
//! (every statement), `schema.rs` (migrations), `pool.rs` (the connection), `op.rs` (rows),
//! `query.rs` (the search's conditions), `read.rs`, `write.rs`, `maintenance.rs` (the TTL
//! sweep), and `store.rs` (the store and its batch).

mod error;
mod maintenance;
mod op;
mod pool;
mod query;
mod read;
mod schema;
mod sql;
mod store;
mod write;

pub use sql::{MIGRATIONS, VECTOR_MIGRATIONS};
pub use store::SqliteStore;
