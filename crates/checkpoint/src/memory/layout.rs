//! The raw layout of a [`MemorySaver`](super::MemorySaver) as plain entries, for tests and tools.
//!
//! [`MemoryLayout`] is LangGraph's three `InMemorySaver` dicts flattened into vectors:
//! one [`StorageEntry`] per `storage[thread][ns][id]`, one [`WriteEntry`] per
//! `writes[(thread, ns, id)][(task_id, idx)]`, one [`BlobEntry`] per
//! `blobs[(thread, ns, channel, version)]`, with the serialized `(tag, bytes)` pairs as
//! stored. Entries are grouped by thread and namespace (in first-write order); checkpoints
//! by ascending id; writes and blobs in the order they were first stored.

use crate::serde::Typed;
use crate::version::ChannelVersion;

use super::store::Store;

/// Everything a [`MemorySaver`](super::MemorySaver) stores, entry by entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryLayout {
    /// `storage[thread][ns][checkpoint_id]`.
    pub storage: Vec<StorageEntry>,
    /// `writes[(thread, ns, checkpoint_id)][(task_id, idx)]`.
    pub writes: Vec<WriteEntry>,
    /// `blobs[(thread, ns, channel, version)]`.
    pub blobs: Vec<BlobEntry>,
}

/// One stored checkpoint: `((tag, checkpoint), (tag, metadata), parent_id)`.
#[derive(Clone, Debug, PartialEq)]
pub struct StorageEntry {
    /// The thread.
    pub thread_id: String,
    /// The namespace (`""` at the root).
    pub checkpoint_ns: String,
    /// The checkpoint id.
    pub checkpoint_id: String,
    /// The serialized checkpoint, without `channel_values`.
    pub checkpoint: Typed,
    /// The serialized metadata.
    pub metadata: Typed,
    /// The parent checkpoint's id, if any.
    pub parent_checkpoint_id: Option<String>,
}

/// One stored write: `(task_id, channel, (tag, value), task_path)` under its keys.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteEntry {
    /// The thread.
    pub thread_id: String,
    /// The namespace.
    pub checkpoint_ns: String,
    /// The checkpoint the write belongs to.
    pub checkpoint_id: String,
    /// The task that wrote it.
    pub task_id: String,
    /// Its index: the position in the task's batch, or a reserved negative index.
    pub idx: i64,
    /// The channel written.
    pub channel: String,
    /// The serialized value.
    pub value: Typed,
    /// The task path given to `put_writes`.
    pub task_path: String,
}

/// One stored channel value: `(tag, bytes)` under `(thread, ns, channel, version)`.
#[derive(Clone, Debug, PartialEq)]
pub struct BlobEntry {
    /// The thread.
    pub thread_id: String,
    /// The namespace.
    pub checkpoint_ns: String,
    /// The channel.
    pub channel: String,
    /// The channel's version.
    pub version: ChannelVersion,
    /// The serialized value, or the `("empty", b"")` sentinel.
    pub value: Typed,
}

impl MemoryLayout {
    /// Flattens a store.
    pub(super) fn of(store: &Store) -> MemoryLayout {
        let mut layout = MemoryLayout::default();
        for (thread, data) in &store.threads {
            for (ns, namespace) in &data.namespaces {
                for (id, entry) in &namespace.checkpoints {
                    layout.storage.push(StorageEntry {
                        thread_id: thread.clone(),
                        checkpoint_ns: ns.clone(),
                        checkpoint_id: id.clone(),
                        checkpoint: entry.checkpoint.clone(),
                        metadata: entry.metadata.clone(),
                        parent_checkpoint_id: entry.parent.clone(),
                    });
                }
                for (id, writes) in &namespace.writes {
                    for ((task_id, idx), w) in writes {
                        layout.writes.push(WriteEntry {
                            thread_id: thread.clone(),
                            checkpoint_ns: ns.clone(),
                            checkpoint_id: id.clone(),
                            task_id: task_id.clone(),
                            idx: *idx,
                            channel: w.channel.clone(),
                            value: w.value.to_typed(),
                            task_path: w.task_path.clone(),
                        });
                    }
                }
                for ((channel, version), value) in &namespace.blobs {
                    layout.blobs.push(BlobEntry {
                        thread_id: thread.clone(),
                        checkpoint_ns: ns.clone(),
                        channel: channel.clone(),
                        version: version.clone(),
                        value: value.to_typed(),
                    });
                }
            }
        }
        layout
    }
}
