//! The rows a saver's `inspect` module hands to tools that read a database below the
//! [`CheckpointSaver`](crate::CheckpointSaver) API (the `stategraph` command's `threads`,
//! `stats`, `verify`, `maintain`): per-namespace counts and sizes, stored writes with their
//! index and task path, and every encoded value. Each SQL saver fills them from its own
//! tables (`stategraph_checkpoint_sqlite::inspect`, `stategraph_checkpoint_postgres::inspect`),
//! so the tool keeps no SQL of its own.

/// One thread and namespace, as a saver's `inspect::namespaces` counts it.
#[derive(Debug, Clone)]
pub struct NsRow {
    /// The thread id.
    pub thread_id: String,
    /// The namespace.
    pub ns: String,
    /// How many checkpoints.
    pub checkpoints: i64,
    /// The greatest checkpoint id.
    pub latest: String,
    /// Bytes of checkpoint and metadata rows.
    pub bytes: i64,
}

/// One stored write, as the tables hold it (value still encoded).
#[derive(Debug, Clone)]
pub struct RawWrite {
    /// The task id.
    pub task_id: String,
    /// The task path.
    pub task_path: String,
    /// The index (negative for reserved channels).
    pub idx: i64,
    /// The channel.
    pub channel: String,
    /// The serializer tag.
    pub tag: String,
    /// The encoded value.
    pub bytes: Vec<u8>,
}

/// One encoded value of any table, for `verify`.
#[derive(Debug)]
pub struct RawValue {
    /// Where the row is (table and key), for the report.
    pub location: String,
    /// The serializer tag (`"json"` for Postgres JSONB columns, given as text).
    pub tag: String,
    /// The encoded value.
    pub bytes: Vec<u8>,
}
