//! The three maps of LangGraph's `InMemorySaver`, grouped by thread and namespace.
//!
//! LangGraph keeps three flat dicts (docs/format.md#memorysaver):
//!
//! ```text
//! storage[thread][ns][checkpoint_id]           = ((tag, checkpoint), (tag, metadata), parent_id)
//! writes[(thread, ns, checkpoint_id)][(task_id, idx)] = (task_id, channel, (tag, value), task_path)
//! blobs[(thread, ns, channel, version)]        = (tag, value)
//! ```
//!
//! Every key of the three starts with `(thread, ns)`, so here they hang under one
//! [`Namespace`] per `(thread, ns)`: deleting, copying or pruning a thread touches only
//! its own entries instead of scanning every key, and a latest-checkpoint lookup is the
//! last key of a `BTreeMap`. The flat view, entry for entry, is rebuilt on demand by
//! [`super::layout`].

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

use indexmap::{Equivalent, IndexMap};

use std::borrow::Cow;

use crate::serde::{SharedBytes, Typed, TAG_EMPTY};
use crate::value::Value;
use crate::version::ChannelVersion;

/// Everything a [`super::MemorySaver`] stores.
#[derive(Clone, Debug, Default)]
pub(super) struct Store {
    /// Threads in the order they were first written.
    pub(super) threads: IndexMap<String, Thread>,
}

/// The namespaces of one thread, in the order they were first written.
#[derive(Clone, Debug, Default)]
pub(super) struct Thread {
    pub(super) namespaces: IndexMap<String, Namespace>,
}

/// Everything stored under one `(thread, ns)`.
#[derive(Clone, Debug, Default)]
pub(super) struct Namespace {
    /// `storage[thread][ns]`: checkpoints by id; ids sort in creation order.
    pub(super) checkpoints: BTreeMap<String, Entry>,
    /// `writes[(thread, ns, id)]` by checkpoint id, in the order first written.
    pub(super) writes: IndexMap<String, TaskWrites>,
    /// `blobs[(thread, ns, channel, version)]` by `(channel, version)`, in insertion order.
    pub(super) blobs: IndexMap<(String, ChannelVersion), StoredBlob>,
    /// The value of the latest blob put for each channel, as given (shared with the
    /// engine), when the serializer round-trips: reading the latest checkpoint then
    /// decodes nothing of a long history. Not part of LangGraph's layout.
    pub(super) decoded: HashMap<String, (ChannelVersion, Value)>,
}

/// One `blobs` value: the `(tag, bytes)` pair, its bytes possibly shared pieces (a long
/// list's successive versions share their common chunks; see [`SharedBytes`]).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StoredBlob {
    pub(super) tag: Cow<'static, str>,
    pub(super) bytes: SharedBytes,
}

impl StoredBlob {
    /// The `("empty", b"")` sentinel.
    pub(super) fn empty() -> StoredBlob {
        StoredBlob {
            tag: TAG_EMPTY.into(),
            bytes: Vec::new().into(),
        }
    }

    /// True for the `empty` sentinel.
    pub(super) fn is_empty_sentinel(&self) -> bool {
        self.tag == TAG_EMPTY
    }

    /// The pair with contiguous bytes, as LangGraph's layout holds it.
    pub(super) fn to_typed(&self) -> Typed {
        Typed::new(self.tag.clone(), self.bytes.to_vec())
    }
}

/// One `storage` value: the checkpoint without `channel_values`, its metadata, its parent.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Entry {
    pub(super) checkpoint: Typed,
    pub(super) metadata: Typed,
    pub(super) parent: Option<String>,
}

/// The writes of one checkpoint, keyed by `(task_id, idx)` in insertion order.
pub(super) type TaskWrites = IndexMap<(String, i64), StoredWrite>;

/// One `writes` value without its task id (which is already the first half of its key).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StoredWrite {
    pub(super) channel: String,
    pub(super) value: StoredBlob,
    pub(super) task_path: String,
}

/// A borrowed `(task_id, idx)` key, so that looking a write up allocates nothing.
#[derive(Debug)]
pub(super) struct WriteKey<'a>(pub(super) &'a str, pub(super) i64);

impl Hash for WriteKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Same as the tuple `(String, i64)`: each field in order.
        self.0.hash(state);
        self.1.hash(state);
    }
}

impl Equivalent<(String, i64)> for WriteKey<'_> {
    fn equivalent(&self, key: &(String, i64)) -> bool {
        self.0 == key.0 && self.1 == key.1
    }
}

/// A borrowed `(channel, version)` key, so that loading a blob allocates nothing.
#[derive(Debug)]
pub(super) struct BlobKey<'a>(pub(super) &'a str, pub(super) &'a ChannelVersion);

impl Hash for BlobKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Same as the tuple `(String, ChannelVersion)`: each field in order.
        self.0.hash(state);
        self.1.hash(state);
    }
}

impl Equivalent<(String, ChannelVersion)> for BlobKey<'_> {
    fn equivalent(&self, key: &(String, ChannelVersion)) -> bool {
        self.0 == key.0 && *self.1 == key.1
    }
}

/// One blob ready to be stored: the serialized value and, when the serializer
/// round-trips, the value itself.
pub(super) struct NewBlob {
    pub(super) channel: String,
    pub(super) version: ChannelVersion,
    pub(super) blob: StoredBlob,
    pub(super) value: Option<Value>,
}

/// One write ready to be stored: the serialized value and the index it gets.
pub(super) struct NewWrite<'a> {
    pub(super) idx: i64,
    pub(super) channel: &'a str,
    pub(super) value: StoredBlob,
}

impl Store {
    /// The namespace `(thread, ns)`, if anything was ever stored there.
    pub(super) fn namespace(&self, thread: &str, ns: &str) -> Option<&Namespace> {
        self.threads.get(thread)?.namespaces.get(ns)
    }

    /// The namespace `(thread, ns)`, created empty if missing.
    pub(super) fn namespace_mut(&mut self, thread: &str, ns: &str) -> &mut Namespace {
        if !self.threads.contains_key(thread) {
            self.threads.insert(thread.to_owned(), Thread::default());
        }
        let namespaces = &mut self.threads[thread].namespaces;
        if !namespaces.contains_key(ns) {
            namespaces.insert(ns.to_owned(), Namespace::default());
        }
        &mut namespaces[ns]
    }

    /// Stores a checkpoint entry and its new blobs (already serialized); re-putting an id
    /// replaces the entry, as a dict update does.
    pub(super) fn put(
        &mut self,
        thread: &str,
        ns: &str,
        id: String,
        entry: Entry,
        blobs: Vec<NewBlob>,
    ) {
        let namespace = self.namespace_mut(thread, ns);
        for NewBlob {
            channel,
            version,
            blob,
            value,
        } in blobs
        {
            match value {
                Some(value) => {
                    namespace
                        .decoded
                        .insert(channel.clone(), (version.clone(), value));
                }
                None => {
                    namespace.decoded.remove(&channel);
                }
            }
            namespace.blobs.insert((channel, version), blob);
        }
        namespace.checkpoints.insert(id, entry);
    }

    /// Stores the writes of one task by the rule of [`super::MemorySaver`]'s `put_writes`:
    /// an existing `(task_id, idx)` with `idx >= 0` is kept (first wins); a negative index
    /// always replaces (last wins). A replaced write keeps its place in insertion order.
    pub(super) fn put_writes(
        &mut self,
        thread: &str,
        ns: &str,
        checkpoint_id: &str,
        task_id: &str,
        task_path: &str,
        writes: Vec<NewWrite<'_>>,
    ) {
        let namespace = self.namespace_mut(thread, ns);
        if !namespace.writes.contains_key(checkpoint_id) {
            namespace
                .writes
                .insert(checkpoint_id.to_owned(), TaskWrites::new());
        }
        let stored = &mut namespace.writes[checkpoint_id];
        for write in writes {
            let stored_write = StoredWrite {
                channel: write.channel.to_owned(),
                value: write.value,
                task_path: task_path.to_owned(),
            };
            match stored.get_mut(&WriteKey(task_id, write.idx)) {
                Some(_) if write.idx >= 0 => {}
                Some(existing) => *existing = stored_write,
                None => {
                    stored.insert((task_id.to_owned(), write.idx), stored_write);
                }
            }
        }
    }

    /// Removes a thread with every checkpoint, write and blob of all its namespaces.
    pub(super) fn delete_thread(&mut self, thread: &str) {
        self.threads.shift_remove(thread);
    }

    /// Copies every namespace of `source` into `target`, keeping ids; entries already in
    /// `target` under the same keys are replaced. An unknown source copies nothing.
    pub(super) fn copy_thread(&mut self, source: &str, target: &str) {
        if source == target {
            return;
        }
        let Some(from) = self.threads.get(source).cloned() else {
            return;
        };
        for (ns, from_ns) in from.namespaces {
            let to_ns = self.namespace_mut(target, &ns);
            if to_ns.checkpoints.is_empty() && to_ns.writes.is_empty() && to_ns.blobs.is_empty() {
                *to_ns = from_ns;
                continue;
            }
            to_ns.checkpoints.extend(from_ns.checkpoints);
            to_ns.blobs.extend(from_ns.blobs);
            // The kept values are a cache: after a merge, keep only the copied ones.
            to_ns.decoded = from_ns.decoded;
            for (id, writes) in from_ns.writes {
                match to_ns.writes.get_mut(&id) {
                    Some(existing) => existing.extend(writes),
                    None => {
                        to_ns.writes.insert(id, writes);
                    }
                }
            }
        }
    }
}

impl Namespace {
    /// The greatest checkpoint id, if any.
    pub(super) fn head(&self) -> Option<&str> {
        self.checkpoints.keys().next_back().map(String::as_str)
    }

    /// Applies the write fence ([`crate::fence`]) to a `put_writes` of `task_id` against
    /// `checkpoint_id`: rule (a), a stored child of the checkpoint (children have greater
    /// ids), then rule (b) for each write at a normal index whose key is stored.
    pub(super) fn check_writes(
        &self,
        config: &crate::CheckpointConfig,
        checkpoint_id: &str,
        task_id: &str,
        writes: &[NewWrite<'_>],
        serde: &dyn crate::serde::Serializer,
    ) -> crate::Result<()> {
        use std::ops::Bound::{Excluded, Unbounded};
        let has_child = self
            .checkpoints
            .range::<str, _>((Excluded(checkpoint_id), Unbounded))
            .any(|(_, e)| e.parent.as_deref() == Some(checkpoint_id));
        crate::fence::check_writes_target(config, has_child)?;
        let Some(stored) = self.writes.get(checkpoint_id) else {
            return Ok(());
        };
        for w in writes.iter().filter(|w| w.idx >= 0) {
            if let Some(old) = stored.get(&WriteKey(task_id, w.idx)) {
                // A repeat is rare: contiguous copies of both sides are cheap enough here.
                let (old_value, new_value) = (old.value.to_typed(), w.value.to_typed());
                let old = crate::fence::StoredWrite {
                    channel: &old.channel,
                    tag: &old_value.tag,
                    bytes: &old_value.bytes,
                };
                crate::fence::check_repeated_write(
                    config,
                    task_id,
                    w.idx,
                    (w.channel, &new_value),
                    old,
                    serde,
                )?;
            }
        }
        Ok(())
    }

    /// The non-empty blob stored for `channel` at `version`.
    pub(super) fn blob(&self, channel: &str, version: &ChannelVersion) -> Option<&StoredBlob> {
        self.blobs
            .get(&BlobKey(channel, version))
            .filter(|b| !b.is_empty_sentinel())
    }

    /// The value stored for `channel` at `version`: the kept value when it is the
    /// latest one put, else the blob decoded through `memo` (a long list that starts as a
    /// recently decoded one decodes only its new elements). `None` when nothing (or
    /// `empty`) is stored.
    pub(super) fn value(
        &self,
        serde: &dyn crate::serde::Serializer,
        memo: &crate::serde::msgpack::DecodeMemo,
        channel: &str,
        version: &ChannelVersion,
    ) -> crate::error::Result<Option<Value>> {
        let Some(blob) = self.blob(channel, version) else {
            return Ok(None);
        };
        if let Some((v, value)) = self.decoded.get(channel) {
            if v == version {
                return Ok(Some(value.clone()));
            }
        }
        serde
            .loads_typed_with_memo(&blob.tag, &blob.bytes.contiguous(), memo)
            .map(Some)
    }

    /// The writes of a checkpoint in read order: by `(task_path, task_id, idx)`.
    pub(super) fn ordered_writes(&self, checkpoint_id: &str) -> Vec<(&str, i64, &StoredWrite)> {
        let Some(stored) = self.writes.get(checkpoint_id) else {
            return Vec::new();
        };
        let mut out: Vec<(&str, i64, &StoredWrite)> = stored
            .iter()
            .map(|((task, idx), w)| (task.as_str(), *idx, w))
            .collect();
        out.sort_unstable_by(|a, b| {
            (a.2.task_path.as_str(), a.0, a.1).cmp(&(b.2.task_path.as_str(), b.0, b.1))
        });
        out
    }
}
