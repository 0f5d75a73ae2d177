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
//!
//! The files follow the backend template (docs/design.md, "Backend template"): `sql.rs`
//! (every statement), `op.rs` (rows, vector kinds), `query.rs` (the search's conditions),
//! `read.rs`, `write.rs`, `schema.rs` (migrations), `maintenance.rs` (the TTL sweep), `inspect.rs` (what
//! the `stategraph` command checks) and `store.rs` (the store and its batch); the pool is the checkpoint saver's
//! (`stategraph_checkpoint_postgres::build_pool`).

pub mod inspect;
mod maintenance;
mod op;
mod query;
mod read;
mod schema;
mod sql;
mod store;
mod write;

pub use op::VectorBackend;
pub use sql::{pgvector_migrations, MIGRATIONS, REAL_ARRAY_TABLE};
pub use store::PostgresStore;
