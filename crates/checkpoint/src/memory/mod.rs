//! MemorySaver: LangGraph's InMemorySaver layout (`storage`, `writes`, `blobs`).
//!
//! [`MemorySaver`] stores exactly what LangGraph's `InMemorySaver` stores (spec §10.3):
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

mod delta;
mod dump;
mod layout;
mod maintenance;
mod read;
pub mod repr;
mod store;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::RwLock;

use crate::checkpoint::{write_index, Checkpoint, CheckpointTuple};
use crate::config::{validate_config, validate_key, validate_thread_ids, CheckpointConfig};
use crate::error::{Error, Result};
use crate::metadata::CheckpointMetadata;
use crate::saver::{Capabilities, CheckpointSaver, ListOptions, PruneStrategy};
use crate::serde::{JsonPlusSerializer, Serializer, Typed};
use crate::value::Value;
use crate::version::{ChannelVersion, ChannelVersions};
use crate::version_gen::VersionGenerator;

pub use layout::{BlobEntry, MemoryLayout, StorageEntry, WriteEntry};

use store::{Entry, NewWrite, Store};

/// An in-memory checkpoint saver laid out as LangGraph's `InMemorySaver`.
///
/// ```
/// use stategraph_checkpoint::{CheckpointSaver, MemorySaver};
/// let saver = MemorySaver::new();
/// assert_eq!(saver.capabilities(), stategraph_checkpoint::Capabilities::ALL);
/// ```
pub struct MemorySaver {
    store: RwLock<Store>,
    serde: Arc<dyn Serializer>,
    versions: VersionGenerator,
}

impl MemorySaver {
    /// An empty saver with [`JsonPlusSerializer`] and random versions.
    #[allow(clippy::default_constructed_unit_structs)] // the serializer may grow options
    pub fn new() -> MemorySaver {
        MemorySaver {
            store: RwLock::new(Store::default()),
            serde: Arc::new(JsonPlusSerializer::default()),
            versions: VersionGenerator::default(),
        }
    }

    /// Uses another serializer, e.g. an `EncryptedSerializer` (builder style).
    pub fn with_serializer(mut self, serde: Arc<dyn Serializer>) -> MemorySaver {
        self.serde = serde;
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
    /// (`storage:`, `writes:` and `blobs:` sections in the notation of spec §10.3).
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
            .finish()
    }
}

#[async_trait]
impl CheckpointSaver for MemorySaver {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        validate_config(config)?;
        read::get_tuple(&self.store.read(), self.serde.as_ref(), config)
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        if let Some(config) = config {
            validate_config(config)?;
        }
        read::list(&self.store.read(), self.serde.as_ref(), config, options)
    }

    /// Stores the blob of every `(channel, version)` of `new_versions` (the serialized
    /// value, or `("empty", b"")` when the checkpoint has no value for the channel), then
    /// the checkpoint without `channel_values`, its metadata (through
    /// [`CheckpointMetadata::for_put`]) and the parent id `config.checkpoint_id`. A config
    /// without a namespace stores at the root.
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
        let mut blobs = Vec::with_capacity(new_versions.len());
        for (channel, version) in new_versions {
            let blob = match checkpoint.channel_values.get(channel) {
                Some(value) => serde.dumps_typed(value)?,
                None => Typed::empty(),
            };
            blobs.push((channel.clone(), version.clone(), blob));
        }
        let entry = Entry {
            checkpoint: serde.dumps_checkpoint(checkpoint, false)?,
            metadata: serde.dumps_typed(&metadata.for_put(config).to_value())?,
            parent: config.checkpoint_id.clone(),
        };
        let ns = config.ns();
        self.store
            .write()
            .put(&config.thread_id, ns, checkpoint.id.clone(), entry, blobs);
        Ok(CheckpointConfig::for_checkpoint(
            config.thread_id.as_str(),
            ns,
            checkpoint.id.as_str(),
        ))
    }

    /// Stores the writes of one task on `config.checkpoint_id` (which must be set).
    ///
    /// The rule, as LangGraph's `InMemorySaver` applies it write by write (spec §7.2): a
    /// write gets the index [`write_index`] gives (the fixed negative index of a reserved
    /// channel, else its position in `writes`); if `(task_id, idx)` is already stored and
    /// `idx >= 0` the new write is ignored (first wins); a write at a negative index always
    /// replaces the stored one (last wins), even in a batch that mixes both kinds.
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
        let serde = self.serde.as_ref();
        let new_writes = writes
            .iter()
            .enumerate()
            .map(|(i, (channel, value))| {
                Ok(NewWrite {
                    idx: write_index(channel, i),
                    channel,
                    value: serde.dumps_typed(value)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.store.write().put_writes(
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
        delta::history(&self.store.read(), self.serde.as_ref(), config, channels)
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.versions.next(current)
    }

    fn is_in_process(&self) -> bool {
        true
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ALL
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
    /// its writes and the blobs it references, and removes every other checkpoint, write
    /// and blob (the kept checkpoint's parent link is cleared when its parent was removed);
    /// `Delete` removes the threads entirely.
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
