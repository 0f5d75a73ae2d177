//! MemorySaver: LangGraph's InMemorySaver layout (`storage`, `writes`, `blobs`).
//!
//! [`MemorySaver`] stores exactly what LangGraph's `InMemorySaver` stores
//! (docs/format.md#memorysaver):
//! each checkpoint serialized without its `channel_values`, its metadata and its parent
//! id; each write as `(task_id, channel, (tag, bytes), task_path)` under
//! `(task_id, idx)`; and each channel value once per `(thread, ns, channel, version)`. A
//! run stored here therefore holds the same `(tag, bytes)` pairs, entry for entry, as the
//! Python saver after the same run (the golden tests check this byte for byte), and
//! [`MemorySaver::storage_snapshot`] and [`MemorySaver::dump`] show them.
//!
//! It implements every operation of [`CheckpointSaver`], the optional ones included, and
//! is the reference the other backends are tested against. All state sits behind one
//! `RwLock` that is never held across an `await` (no method awaits anything); values are
//! serialized before the lock is taken.
//!
//! Fenced (the default, [`MemorySaver::with_fencing`]), it enforces one writer per thread
//! ([`crate::fence`]), checked under the write lock of the call it guards: a `put` behind
//! the head, writes against a checkpoint another run moved past, or a different result
//! for a stored task fail with [`Error::Conflict`] and store nothing. What the loser of a
//! race stored before its first refused call is identical to the winner's or on
//! checkpoints nobody descends from. Unfenced, it stores what `InMemorySaver` stores
//! whatever the order of the calls.

mod delta;
mod dump;
mod layout;
mod maintenance;
mod raw;
mod read;
mod store;

/// Python `repr()`-style rendering of values: [`crate::value::repr`] (values render in the
/// value module), under the path it had here.
pub use crate::value::repr;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use futures::stream::BoxStream;
use parking_lot::RwLock;

use crate::checkpoint::{write_index, Checkpoint, CheckpointTuple};
use crate::config::{validate_config, validate_key, validate_thread_ids, CheckpointConfig};
use crate::error::{Error, Result};
use crate::fence;
use crate::metadata::CheckpointMetadata;
use crate::saver::{Capabilities, CheckpointSaver, ListOptions, PruneStrategy};
use crate::serde::msgpack::DecodeMemo;
use crate::serde::{JsonPlusSerializer, Serializer};
use crate::value::Value;
use crate::version::{ChannelVersion, ChannelVersions};
use crate::version_gen::VersionGenerator;

pub use layout::{BlobEntry, MemoryLayout, StorageEntry, WriteEntry};

use store::{Entry, Namespace, NewBlob, NewWrite, Store, StoredBlob};

/// An in-memory checkpoint saver laid out as LangGraph's `InMemorySaver`.
///
/// ```
/// use stategraph_checkpoint::{CheckpointSaver, MemorySaver};
/// let saver = MemorySaver::new();
/// assert!(saver.capabilities().prune && saver.capabilities().fence);
/// ```
pub struct MemorySaver {
    store: RwLock<Store>,
    serde: Arc<dyn Serializer>,
    /// Long lists recently decoded from blobs ("Decode once", docs/design.md): reading a
    /// non-latest checkpoint or listing history decodes only what a remembered list lacks.
    memo: DecodeMemo,
    versions: VersionGenerator,
    fencing: bool,
    list_page: usize,
}

/// How many tuples a page of [`CheckpointSaver::list_stream`] decodes by default.
pub const DEFAULT_LIST_PAGE: usize = 8;

impl MemorySaver {
    /// An empty saver with [`JsonPlusSerializer`] and random versions.
    #[allow(clippy::default_constructed_unit_structs)] // the serializer may grow options
    pub fn new() -> MemorySaver {
        MemorySaver {
            store: RwLock::new(Store::default()),
            serde: Arc::new(JsonPlusSerializer::default()),
            memo: DecodeMemo::new(),
            versions: VersionGenerator::default(),
            list_page: DEFAULT_LIST_PAGE,
            fencing: true,
        }
    }

    /// Turns the one-writer-per-thread fence ([`crate::fence`]) on (the default) or off
    /// (builder style). Unfenced, the saver stores what LangGraph's `InMemorySaver` stores
    /// whatever the order of the calls, forks included.
    pub fn with_fencing(mut self, fencing: bool) -> MemorySaver {
        self.fencing = fencing;
        self
    }

    /// Whether the fence is on.
    pub fn fencing(&self) -> bool {
        self.fencing
    }

    /// How many tuples each page of [`CheckpointSaver::list_stream`] decodes under one
    /// read lock (at least 1; default [`DEFAULT_LIST_PAGE`]) (builder style). A stream
    /// holds at most one page; the lock is released between pages.
    pub fn with_list_page(mut self, tuples: usize) -> MemorySaver {
        self.list_page = tuples.max(1);
        self
    }

    /// Uses another serializer, e.g. an `EncryptedSerializer` (builder style).
    pub fn with_serializer(mut self, serde: Arc<dyn Serializer>) -> MemorySaver {
        self.serde = serde;
        // A remembered value depends on the serializer that decoded it.
        self.memo = DecodeMemo::new();
        self
    }

    /// Uses another version generator, e.g. a seeded one (builder style).
    pub fn with_versions(mut self, versions: VersionGenerator) -> MemorySaver {
        self.versions = versions;
        self
    }

    /// The serializer values are stored with.
    pub fn serializer(&self) -> &Arc<dyn Serializer> {
        &self.serde
    }

    /// Everything stored, as plain entries with the raw `(tag, bytes)` pairs.
    pub fn storage_snapshot(&self) -> MemoryLayout {
        MemoryLayout::of(&self.store.read())
    }

    /// The three maps rendered as Python prints them, values decoded, for people to read
    /// (`storage:`, `writes:` and `blobs:` sections in the notation of docs/format.md#memorysaver).
    pub fn dump(&self) -> String {
        dump::dump(&self.store.read(), self.serde.as_ref())
    }
}

impl Default for MemorySaver {
    fn default() -> Self {
        MemorySaver::new()
    }
}

impl fmt::Debug for MemorySaver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let store = self.store.read();
        f.debug_struct("MemorySaver")
            .field("threads", &store.threads.len())
            .field("serde", &self.serde)
            .field("versions", &self.versions)
            .field("fencing", &self.fencing)
            .finish()
    }
}

#[async_trait]
impl CheckpointSaver for MemorySaver {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        validate_config(config)?;
        read::get_tuple(&self.store.read(), self.serde.as_ref(), &self.memo, config)
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        if let Some(config) = config {
            validate_config(config)?;
        }
        read::list(
            &self.store.read(),
            self.serde.as_ref(),
            &self.memo,
            config,
            options,
        )
    }

    /// Pages of [`MemorySaver::with_list_page`] tuples, each decoded under the read lock
    /// and handed out after it is released; the next page resumes after the last
    /// checkpoint the previous one scanned.
    fn list_stream(
        &self,
        config: Option<CheckpointConfig>,
        options: ListOptions,
    ) -> BoxStream<'_, Result<CheckpointTuple>> {
        crate::list_cursor::stream_pages(config, options, move |mut cursor| {
            let page = read::list_page(
                &self.store.read(),
                self.serde.as_ref(),
                &self.memo,
                &mut cursor,
                self.list_page,
            );
            async move { page.map(|page| (page, cursor)) }
        })
    }

    /// Stores the blob of every `(channel, version)` of `new_versions` (the serialized
    /// value, or `("empty", b"")` when the checkpoint has no value for the channel), then
    /// the checkpoint without `channel_values`, its metadata (through
    /// [`CheckpointMetadata::for_put`]) and the parent id `config.checkpoint_id`. A config
    /// without a namespace stores at the root.
    ///
    /// Fenced (the default), a put whose parent is not the head is refused with
    /// [`Error::Conflict`] and stores nothing, unless it [`crate::starts_branch`] or
    /// re-puts a stored checkpoint with the same parent ([`crate::fence`]).
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        validate_config(config)?;
        validate_key("checkpoint id", &checkpoint.id)?;
        let serde = self.serde.as_ref();
        let keep = serde.round_trips();
        let mut blobs = Vec::with_capacity(new_versions.len());
        for (channel, version) in new_versions {
            let (blob, value) = match checkpoint.channel_values.get(channel) {
                Some(value) => {
                    let (tag, bytes) = serde.dumps_typed_shared(value)?;
                    (StoredBlob { tag, bytes }, keep.then(|| value.clone()))
                }
                None => (StoredBlob::empty(), None),
            };
            blobs.push(NewBlob {
                channel: channel.clone(),
                version: version.clone(),
                blob,
                value,
            });
        }
        let entry = Entry {
            checkpoint: serde.dumps_checkpoint(checkpoint, false)?,
            metadata: serde.dumps_typed(&metadata.for_put(config).to_value())?,
            parent: config.checkpoint_id.clone(),
        };
        let ns = config.ns();
        let mut store = self.store.write();
        if self.fencing {
            let namespace = store.namespace(&config.thread_id, ns);
            let state = fence::PutState {
                head: namespace.and_then(Namespace::head),
                existing_parent: namespace
                    .and_then(|n| n.checkpoints.get(&checkpoint.id))
                    .map(|e| e.parent.as_deref()),
            };
            fence::check_put(config, &checkpoint.id, state)?;
        }
        store.put(&config.thread_id, ns, checkpoint.id.clone(), entry, blobs);
        Ok(CheckpointConfig::for_checkpoint(
            config.thread_id.as_str(),
            ns,
            checkpoint.id.as_str(),
        ))
    }

    /// Stores the writes of one task on `config.checkpoint_id` (which must be set).
    ///
    /// The rule, as LangGraph's `InMemorySaver` applies it write by write
    /// (docs/format.md#pending-writes): a
    /// write gets the index [`write_index`] gives (the fixed negative index of a reserved
    /// channel, else its position in `writes`); if `(task_id, idx)` is already stored and
    /// `idx >= 0` the new write is ignored (first wins); a write at a negative index always
    /// replaces the stored one (last wins), even in a batch that mixes both kinds.
    ///
    /// Fenced (the default), the call is refused with [`Error::Conflict`], storing none of
    /// its writes, when another checkpoint already has `config.checkpoint_id` as its parent
    /// (unless the config [`crate::starts_branch`]), or when a write at a normal index
    /// finds a different write stored at its `(task_id, idx)` ([`crate::fence`]).
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        validate_config(config)?;
        validate_key("task id", task_id)?;
        let checkpoint_id = config
            .checkpoint_id
            .as_deref()
            .ok_or_else(|| Error::InvalidConfig("put_writes needs a checkpoint_id".into()))?;
        if writes.is_empty() {
            // Nothing to store and nothing to fence, as on SQLite and Postgres (and as
            // Python's `InMemorySaver`, whose loop over no writes stores nothing).
            return Ok(());
        }
        let serde = self.serde.as_ref();
        let new_writes = writes
            .iter()
            .enumerate()
            .map(|(i, (channel, value))| {
                let (tag, bytes) = serde.dumps_typed_shared(value)?;
                Ok(NewWrite {
                    idx: write_index(channel, i),
                    channel,
                    value: StoredBlob { tag, bytes },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut store = self.store.write();
        if self.fencing {
            if let Some(namespace) = store.namespace(&config.thread_id, config.ns()) {
                namespace.check_writes(config, checkpoint_id, task_id, &new_writes, serde)?;
            }
        }
        store.put_writes(
            &config.thread_id,
            config.ns(),
            checkpoint_id,
            task_id,
            task_path,
            new_writes,
        );
        Ok(())
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        validate_key("thread id", thread_id)?;
        self.store.write().delete_thread(thread_id);
        Ok(())
    }

    /// Reads the parent chain straight from the store, under one lock.
    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<indexmap::IndexMap<String, crate::delta::DeltaChannelHistory>> {
        validate_config(config)?;
        delta::history(
            &self.store.read(),
            self.serde.as_ref(),
            &self.memo,
            config,
            channels,
        )
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.versions.next(current)
    }

    fn is_in_process(&self) -> bool {
        true
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            fence: self.fencing,
            ..Capabilities::ALL
        }
    }

    /// Deletes the checkpoints whose metadata `run_id` is listed, with their writes and
    /// every blob of their namespace that no remaining checkpoint references; a remaining
    /// checkpoint whose parent was deleted gets no parent.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<()> {
        maintenance::delete_for_runs(&mut self.store.write(), self.serde.as_ref(), run_ids)
    }

    /// Copies the checkpoints, writes and blobs of every namespace of `source` to
    /// `target`, keeping ids. An unknown source copies nothing.
    async fn copy_thread(&self, source: &str, target: &str) -> Result<()> {
        validate_thread_ids([source, target])?;
        self.store.write().copy_thread(source, target);
        Ok(())
    }

    /// `KeepLatest` keeps, per namespace of each listed thread, the newest checkpoint with
    /// its writes and the blobs it references (and, on a thread with DeltaChannels, the
    /// ancestors they are rebuilt from), and removes every other checkpoint, write and
    /// blob (a kept checkpoint's parent link is cleared when its parent was removed);
    /// `Delete` removes the threads entirely. How this differs from Python's
    /// `PostgresSaver.prune`: see `memory/maintenance.rs`.
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        validate_thread_ids(thread_ids.iter().map(String::as_str))?;
        maintenance::prune(
            &mut self.store.write(),
            self.serde.as_ref(),
            thread_ids,
            strategy,
        )
    }
}
