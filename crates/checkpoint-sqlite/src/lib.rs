//! A SQLite checkpoint saver whose files LangGraph's `SqliteSaver` reads and writes.
//!
//! [`SqliteSaver`] implements every operation of [`CheckpointSaver`], the optional
//! `delete_for_runs`, `copy_thread` and `prune` included, on the two tables of
//! `langgraph-checkpoint-sqlite` 3.1.2. A thread written here opens in Python's saver and a
//! thread written there opens here, row for row.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use stategraph_checkpoint::{CheckpointConfig, CheckpointSaver};
//! use stategraph_checkpoint_sqlite::SqliteSaver;
//!
//! let path = std::env::temp_dir().join(format!("doc-{}.sqlite", std::process::id()));
//! let saver = SqliteSaver::open(&path)?;
//! assert!(saver.list(None, &Default::default()).await?.is_empty());
//! # drop(saver);
//! # let _ = std::fs::remove_file(&path);
//! # Ok::<(), stategraph_checkpoint::Error>(())
//! # }).unwrap();
//! ```
//!
//! # Design
//!
//! * **rusqlite, bundled.** A synchronous driver with SQLite compiled in: every build has
//!   the same SQLite (JSON functions included), whatever the system has, and no async
//!   driver machinery is needed for a database that lives in the same process. Each
//!   operation hops to tokio's blocking pool (`spawn_blocking`), so the async threads never
//!   wait on disk or on a lock; outside a tokio runtime it runs inline.
//! * **One writer, several readers, WAL.** Opening a file switches it to WAL mode (as
//!   Python's setup does; the mode is stored in the file). All writes go through one
//!   connection, each operation in one `BEGIN IMMEDIATE` transaction: `put` is one
//!   statement, `put_writes` stores its whole batch atomically, `delete_thread`, `prune`,
//!   `copy_thread` and `delete_for_runs` apply fully or not at all. Reads use separate
//!   connections opened with `PRAGMA query_only`, so `get_tuple` and `list` can never take
//!   the write lock; each read is one snapshot (a checkpoint and its writes agree), and in
//!   WAL mode readers and the writer do not wait for each other. `busy_timeout` makes any
//!   connection wait, rather than fail, for a lock held by another process. An in-memory
//!   database has one connection, shared by reads and writes.
//! * **Values inline.** As in LangGraph's SQLite saver, the checkpoint blob is the whole
//!   checkpoint, `channel_values` included (docs/format.md#sqlite); there is no blob table and
//!   `new_versions` is not needed.
//!   A row of 1 MiB or more is written in place (`zeroblob`, then incremental blob I/O), so
//!   storing a large value does not hold extra copies of its encoding.
//! * **Repeated reads without a query.** Decoded checkpoints are cached, and a `get_tuple`
//!   whose snapshot provably equals an earlier read's (`PRAGMA data_version`: any commit by
//!   any connection or process changes it) answers from that read without touching a row.
//! * **Metadata as Python's JSON.** Metadata is stored as the UTF-8 bytes of
//!   `json.dumps(metadata, ensure_ascii=False)` in a BLOB column, byte for byte as Python
//!   writes it ([`json`]). Bytes and extension objects cannot be metadata (Python raises
//!   on them too).
//! * **Filters never touch the SQL text.** Keys and values of a `list` filter are bound
//!   parameters, matched against the top-level labels of the metadata with `json_each`
//!   (see the `query` module), so any string is a valid key and names exactly that key.
//!
//! # One writer per thread
//!
//! Fenced (the default, [`SqliteSaver::with_fencing`]), the saver refuses with
//! [`Error::Conflict`] a `put` whose parent is no longer the head of its
//! `(thread, namespace)`, and a `put_writes` against a checkpoint another run has moved
//! past or holding a different result for a task whose result is stored (the rule of
//! [`stategraph_checkpoint::fence`]). Replays and `update_state` of an older checkpoint,
//! which the engine marks as deliberate branches, a re-put of the same checkpoint and an
//! identical repeat of a task's writes pass. The check reads the rows inside the write's
//! own `BEGIN IMMEDIATE` transaction, which holds SQLite's write lock from its start, so it
//! holds across connections and processes sharing the file, Python's included (only
//! fenced writers are refused; they are checked against every row).
//!
//! What a [`Error::Conflict`] promises: the refused call stored nothing. What the loser
//! stored before its first refused call is either identical to the winner's (the same
//! task's same writes) or on checkpoints nobody descends from; the winner's rows are never
//! changed, and the thread never forks. The loser can reload the head and decide.
//!
//! # Group commit and durability
//!
//! [`CheckpointSaver::put_batch`] runs the queued saves of a run (durability `async`) in
//! one transaction, in order: the rows are those of one call per op, at the cost of one
//! commit. Each op is fenced as its own call; when one is refused the ops before it are
//! committed (they are the run's own earlier saves) and its `Conflict` returned.
//! [`SqliteSaver::with_synchronous`] picks how a commit reaches the disk:
//! [`Synchronous::Full`] (the default, as Python's saver) survives a power cut;
//! [`Synchronous::Normal`] survives a crash of the process but may lose the last commits
//! on a power cut (the file stays consistent).
//!
//! # Compatibility with LangGraph
//!
//! Same DDL (docs/format.md#sqlite, with the `task_path` migration), same columns and storage
//! classes,
//! same checkpoint, metadata and write bytes, same ordering of `list` (newest id first) and
//! of pending writes (`task_path`, `task_id`, `idx`). Where this saver deliberately
//! differs, it follows the [`CheckpointSaver`] contract shared by every stategraph saver:
//!
//! * `put_writes` decides replace-or-keep per write (reserved index: last wins; normal
//!   index: first wins). Python decides per batch, so a repeated reserved write in a batch
//!   that also has normal writes is ignored there and replaces here.
//! * A `list` filter names top-level keys only: `{"a.b": 1}` is the key `a.b`, where
//!   Python reads it as a path into `a`. Any key is accepted (Python refuses keys outside
//!   `[a-zA-Z0-9_.-]`). Filter values compare by type as well: `1` and `1.0` match each
//!   other, but not `true` (Python's `json_extract` reads `true` as `1`); the string `"1"`
//!   does not match `1`. Maps and lists compare by equality (docs/format.md#metadata-filters):
//!   `{"a": 1, "b": 2}` matches `{"b": 2, "a": 1.0}`, where Python compares their JSON
//!   text. `None` matches a `null` and a missing key, as in Python.
//! * `list` without a namespace orders equal ids by thread and namespace (Python leaves
//!   that order to SQLite).
//! * A `before` config without a checkpoint id bounds nothing (Python compares with NULL
//!   and lists nothing).
//! * Read-only databases are not supported: opening creates or migrates the tables.
//! * Fenced, the calls of a lost race fail with `Conflict` (see above), where Python's
//!   saver stores a fork.

mod batch;
mod cache;
mod delta;
mod dump;
mod error;
mod fence;
pub mod inspect;
pub mod json;
mod maintenance;
mod op;
mod options;
mod pool;
mod query;
mod raw;
mod read;
pub mod read_only;
mod saver;
mod schema;
mod sql;
mod write;

/// The SQLite driver, for callers of [`read_only::connect`].
pub use cache::DEFAULT_READ_CACHE_BYTES;
pub use error::SqliteError;
pub use options::Synchronous;
pub use rusqlite;
pub use saver::{SqliteSaver, DEFAULT_LIST_PAGE_ROWS, LIST_PAGE_BYTES};
pub use stategraph_checkpoint::{CheckpointSaver, Error, Result};
