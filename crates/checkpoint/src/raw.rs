//! Encoded checkpoints: what a saver stores, as the `(tag, bytes)` pairs a caller made.
//!
//! The [`CheckpointSaver`](crate::CheckpointSaver) methods take and return decoded
//! [`Value`](crate::Value)s, and the saver encodes them with its serializer. A caller that
//! encodes values itself (Python LangGraph's serializer, through the `stategraph` Python
//! package) uses the savers' raw entry points instead (`put_raw`, `put_writes_raw`,
//! `get_tuple_raw`, `list_raw` on [`MemorySaver`](crate::MemorySaver) and the SQLite and
//! Postgres savers): the pairs it hands in are stored as they are, and the pairs read back are
//! handed out as stored, so the saver never decodes a channel value. The raw entry points
//! run the same validation, fence, layout and queries as the trait methods, and a row they
//! write is read by the trait methods (and by Python's savers) like any other.
//!
//! The types here are the read side. A saver reads back exactly what its layout stores:
//! the whole checkpoint in one pair ([`RawState::Whole`], SQLite), the checkpoint without
//! its values plus one pair per channel ([`RawState::Split`], memory), or the checkpoint
//! as JSON with its primitive values inline plus one pair per other channel
//! ([`RawState::Json`], Postgres); and the metadata as JSON text (SQLite, Postgres) or as
//! a pair (memory).

use crate::serde::Typed;

/// One pending write, its value as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct RawWrite {
    /// The task that wrote it.
    pub task_id: String,
    /// The channel written.
    pub channel: String,
    /// The value's `(tag, bytes)`.
    pub value: Typed,
}

/// A checkpoint's state as its saver stores it.
#[derive(Clone, Debug, PartialEq)]
pub enum RawState {
    /// The whole checkpoint, `channel_values` included, in one pair (LangGraph's SQLite
    /// layout).
    Whole(Typed),
    /// The checkpoint without `channel_values` in one pair, and the value of each channel
    /// of its `channel_versions` that has one (LangGraph's in-memory layout; `empty`
    /// sentinels are left out).
    Split {
        /// The checkpoint without `channel_values`.
        checkpoint: Typed,
        /// `(channel, value)` in the order of `channel_versions`; `None` when the saver's
        /// serializer cannot read the checkpoint's `channel_versions` (the caller encoded
        /// it with a serializer of its own, e.g. an encrypting one): the caller decodes
        /// the checkpoint and asks for the values of its versions
        /// ([`MemorySaver::blobs_raw`](crate::MemorySaver::blobs_raw)).
        values: Option<Vec<(String, Typed)>>,
    },
    /// The checkpoint as JSON text with its primitive channel values inline, and the blobs
    /// joined on its `channel_versions` (LangGraph's Postgres layout; `empty` sentinels
    /// are left out). A reader merges the blobs' values over the inline ones.
    Json {
        /// The checkpoint document.
        checkpoint: String,
        /// `(channel, value)` of the joined blobs.
        values: Vec<(String, Typed)>,
    },
}

/// A checkpoint's metadata as its saver stores it.
#[derive(Clone, Debug, PartialEq)]
pub enum RawMetadata {
    /// UTF-8 JSON text (SQLite, Postgres); `None` for a NULL column, read as `{}`.
    Json(Option<Vec<u8>>),
    /// A `(tag, bytes)` pair (memory).
    Typed(Typed),
}

/// A checkpoint tuple as stored: ids, the state and metadata encoded, the writes encoded.
#[derive(Clone, Debug, PartialEq)]
pub struct RawTuple {
    /// The thread.
    pub thread_id: String,
    /// The namespace (`""` at the root).
    pub checkpoint_ns: String,
    /// The checkpoint's id.
    pub checkpoint_id: String,
    /// The parent's id, if it has one.
    pub parent_checkpoint_id: Option<String>,
    /// The checkpoint.
    pub state: RawState,
    /// The metadata.
    pub metadata: RawMetadata,
    /// The pending writes, in read order (`task_path`, `task_id`, `idx`).
    pub pending_writes: Vec<RawWrite>,
}
