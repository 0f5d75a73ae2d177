//! A Postgres checkpoint saver whose tables and rows are those of LangGraph's
//! `langgraph-checkpoint-postgres` 3.2.0, so that Python and Rust share one database.
//!
//! ```no_run
//! # async fn demo() -> stategraph_checkpoint::Result<()> {
//! use stategraph_checkpoint::CheckpointSaver;
//! use stategraph_checkpoint_postgres::PostgresSaver;
//!
//! let saver = PostgresSaver::connect("postgresql://postgres@127.0.0.1:5432/postgres").await?;
//! saver.setup().await?; // once per database, as with Python
//! let latest = saver.get_tuple(&stategraph_checkpoint::CheckpointConfig::thread("t1")).await?;
//! # Ok(()) }
//! ```
//!
//! # Design
//!
//! **Same schema, same rows.** [`schema::MIGRATIONS`] are Python's migrations, numbered as
//! Python numbers them in `checkpoint_migrations`, so either side's `setup` accepts a
//! database the other made. A put writes the rows Python writes (docs/format.md#postgres): the
//! checkpoint as JSONB with its *primitive* channel values inline (nil, booleans, numbers,
//! strings: small, and readable with SQL), every other value serialized once per
//! `(thread, namespace, channel, version)` in `checkpoint_blobs` with
//! `ON CONFLICT DO NOTHING`, so a value that did not change between checkpoints is stored
//! once however many checkpoints refer to it. One departure, below: a string longer than
//! [`INLINE_STRING_MAX`] bytes is stored like a non-primitive. Writes go to
//! `checkpoint_writes` with the serializer's `(type, bytes)`. Metadata is JSONB made by LangGraph's
//! `get_checkpoint_metadata` rules (NULs stripped from top-level strings, scalar config keys
//! copied in, the legacy `writes` key dropped). The golden test compares raw rows with a
//! Python run, and the interop tests have each side read what the other wrote.
//!
//! **Pool: deadpool-postgres.** Every statement of this crate is prepared once per
//! connection through deadpool's per-connection statement cache (`prepare_cached`), after
//! which a call costs one Bind/Execute exchange; bb8-postgres has no such cache and would
//! need one kept beside each pooled connection. deadpool's `Pool` is also not generic over
//! the TLS connector, so [`PostgresSaver::from_pool`] takes TLS pools and plain ones alike
//! while [`PostgresSaver::connect`] stays a one-liner without TLS. Both pools sit on
//! tokio-postgres, whose client pipelines requests, which the fence relies on. A quick
//! measurement (release build, local server, the shared 2-core machine, so indicative
//! only): a trivial statement cost 168 µs unprepared and 113 µs from the cache; a put of
//! one inline and one blob value 427 µs unfenced and 536 µs fenced.
//!
//! **One round trip per put.** An unfenced put is a single statement: a data-modifying CTE
//! inserts the blob rows from arrays and the outer statement upserts the checkpoint, so
//! both commit together. A fenced put is that statement behind an advisory lock in a
//! transaction whose four messages are sent before any reply is read. `put_writes` is one
//! statement too, fenced the same way.
//!
//! **Reads that do not move unchanged blobs** ([`cache`]). A blob row never changes
//! once written, and the latest checkpoint of a chat thread refers to a message list the
//! saver wrote or read a moment before. The saver keeps such values decoded with the
//! identity of their row (`xmin`, `ctid`, length); `get_tuple` and the delta history send
//! the identities they hold and the server leaves those blobs out (no detoasting, no
//! transfer, no decoding), in the same single query. A row deleted and written again, by
//! any process, has another identity, so a hit is always the row's current value.
//!
//! **lz4 for large values** ([`ToastCompression`]): each connection sets the session's
//! `default_toast_compression` to lz4 before its first write, when the server has it.
//! Postgres's default, `pglz`, spends most of a large put's server time; readers, Python's
//! included, decompress either.
//!
//! **The fence** ([`fence`]), on by default: several processes may drive one thread, and
//! one writer per thread wins. A put whose parent is no longer the thread's head, and
//! task writes against a checkpoint another run has moved past or that contradict a write
//! another run stored for the same task, fail with
//! [`stategraph_checkpoint::Error::Conflict`] and store nothing, instead of silently
//! forking the thread or mixing two runs' results. Deliberate branches (time travel,
//! `update_state` of an older checkpoint), which the engine marks with
//! [`stategraph_checkpoint::CONFIG_KEY_BRANCH`], are admitted;
//! [`PostgresSaver::with_fencing`]`(false)` stores everything as Python does.
//!
//! **What `Conflict` promises.** The refused call stored nothing. What the losing run
//! stored before its first refused call is either identical to what the winner stored
//! (a task write both runs made alike, which stays once) or on checkpoints nobody
//! descends from. The loser can reload the head and decide what to do.
//!
//! **No wait without end** ([`options`]): opening a connection, waiting for a pooled
//! one and the statements of every call are bounded ([`PostgresOptions`], with defaults;
//! `connect_timeout` in the URL is honoured) and TCP keepalive is on. A server that stops
//! answering gives [`stategraph_checkpoint::Error::Timeout`]; other failures are
//! [`stategraph_checkpoint::Error::Backend`] holding a [`PgError`] whose text names the
//! call, the server's `host:port`, and the SQLSTATE and message the server sent.
//!
//! **Keys.** Thread ids, namespaces, checkpoint ids and task ids longer than
//! [`stategraph_checkpoint::MAX_KEY_BYTES`] or holding a NUL character are refused with
//! [`stategraph_checkpoint::Error::InvalidConfig`] before any statement, as every
//! stategraph saver refuses them.
//!
//! **Safe filters** ([`query`]): each key of `list`'s metadata filter is one equality
//! `metadata -> $k = $v::text::jsonb` with the key and value bound as parameters (the one
//! meaning every stategraph saver gives a filter, docs/format.md#metadata-filters); keys
//! and values never become SQL or JSON-path text.
//!
//! # Where this saver differs from Python's, deliberately
//!
//! * The fence (above). Python has none.
//! * Metadata filters mean equality, as Python's in-memory and SQLite savers read them;
//!   Python's `PostgresSaver` reads them as JSONB containment (`{"nested": {}}` matches
//!   any `nested` map there, only an empty one here).
//! * Keys Postgres cannot index or hold (above) are refused with a typed error; Python
//!   passes them to the server, which refuses them.
//! * A string longer than [`INLINE_STRING_MAX`] (1 KiB) is stored once per version in
//!   `checkpoint_blobs`, not inline in every checkpoint row: a 1 MiB value that never
//!   changes costs 1 MiB once, not 1 MiB per step. Python's reader merges blobs over inline
//!   values, so it reads these rows unchanged. When a thread Python wrote goes on here, the
//!   first put copies such a string from its parent's inline value into a blob, in SQL.
//! * `put_writes` keeps the *last* write of a repeated reserved index in every batch, as
//!   the trait states for every stategraph saver; Python keeps the first when the batch
//!   also holds normal writes.
//! * A float is written with a decimal point at every magnitude (`10000000000000000.0`, not
//!   `1e+16`), so it reads back as a float in both languages; Python's own rows turn floats
//!   of 1e16 and above into integers.
//! * NaN, infinities and strings with a NUL character, which JSONB cannot hold, are stored
//!   as blobs instead of inline; Python's put fails on them. So is `-0.0`, which JSONB
//!   would read back as `0.0` (Python stores it inline and reads `0.0`). In metadata they are refused
//!   with [`stategraph_checkpoint::Error::Encode`], as are bytes and Python objects.
//! * A put with an empty-string parent stores no parent (NULL) where Python stores `''`;
//!   both read back as no parent.
//! * `setup` run by two processes at once does not fail on the version record.
//! * `delete_for_runs` and `copy_thread` exist (Python's saver has neither); `prune` is
//!   Python's.
//! * `list` of a format ≤ 3 checkpoint reads the parent's sends of its own thread and
//!   namespace (Python's `list` looks in the first row's thread only).

mod batch;
pub mod cache;
mod delta;
pub mod error;
pub mod fence;
pub mod inspect;
mod json;
mod layout;
pub mod maintenance;
mod op;
pub mod options;
mod pool;
pub mod query;
mod raw;
mod read;
mod saver;
pub mod schema;
mod sql;
mod write;

pub use cache::{BlobCacheStats, DEFAULT_BLOB_CACHE_BYTES};
pub use error::{db_error, pg_error, PgError};
pub use layout::INLINE_STRING_MAX;
pub use options::{PostgresOptions, ToastCompression, DEFAULT_POOL_SIZE};
pub use pool::build_pool;
pub use saver::{PostgresSaver, DEFAULT_LIST_PAGE_ROWS};
pub use schema::{MIGRATIONS, SCHEMA_VERSION};

/// The pool type [`PostgresSaver::from_pool`] takes, re-exported with its driver.
pub use deadpool_postgres;
