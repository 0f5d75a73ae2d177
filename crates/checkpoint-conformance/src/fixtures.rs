//! Builders of the configs, checkpoints and metadata the behaviours store, and small readers.
//!
//! Conventions, as in LangGraph's suite: every behaviour uses fresh uuid4 threads, tasks
//! and run ids; checkpoint ids come from [`IdGenerator::system`] (UUIDv6, clock sequence
//! `-1`), so a later id is always greater as text and "latest" means "greatest id".
//! Checkpoints are format v4 ([`stategraph_checkpoint::CHECKPOINT_FORMAT`]; LangGraph's
//! suite uses v1) with integer channel versions. The config passed to `put` carries the
//! *parent's* id, and `put` returns the stored config.

use futures::TryStreamExt;
use stategraph_checkpoint::id::{now_ts, IdGenerator};
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, CheckpointTuple, ListOptions, PendingWrite, Value,
};

use crate::Failure;

/// A fresh random (v4) UUID as text: threads, tasks and run ids.
pub fn uuid4() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A fresh checkpoint id, greater as text than every id minted before in this process.
pub fn checkpoint_id() -> String {
    IdGenerator::system().uuid6(-1)
}

/// The config of the root namespace (`""`) of a thread, without a checkpoint id.
pub fn root(thread: &str) -> CheckpointConfig {
    CheckpointConfig::thread(thread)
}

/// The config of a namespace of a thread, without a checkpoint id.
pub fn in_ns(thread: &str, ns: &str) -> CheckpointConfig {
    CheckpointConfig::thread(thread).with_ns(ns)
}

/// Metadata `{source, step, parents: {}}`.
pub fn metadata(source: CheckpointSource, step: i64) -> CheckpointMetadata {
    CheckpointMetadata::new(source, step)
}

/// Metadata `{source: "loop", step, parents: {}}`.
pub fn loop_metadata(step: i64) -> CheckpointMetadata {
    metadata(CheckpointSource::Loop, step)
}

/// A checkpoint to store, with the `new_versions` that go with it.
#[derive(Clone, Debug)]
pub struct NewCheckpoint {
    checkpoint: Checkpoint,
    new_versions: ChannelVersions,
}

impl Default for NewCheckpoint {
    fn default() -> Self {
        NewCheckpoint::new()
    }
}

impl NewCheckpoint {
    /// An empty v4 checkpoint with a fresh id and the current time: no channels, no
    /// `versions_seen`, `updated_channels` null, `new_versions` empty.
    pub fn new() -> NewCheckpoint {
        let checkpoint = Checkpoint::empty(
            checkpoint_id(),
            now_ts(IdGenerator::system().clock().as_ref()),
        );
        NewCheckpoint {
            checkpoint,
            new_versions: ChannelVersions::default(),
        }
    }

    /// A channel whose value is new in this checkpoint: in `channel_values`,
    /// `channel_versions` and `new_versions`.
    pub fn value(mut self, channel: &str, value: impl Into<Value>, version: i64) -> Self {
        self = self.carried(channel, value, version);
        self.new_versions
            .insert(channel.to_owned(), ChannelVersion::Int(version));
        self
    }

    /// A channel unchanged since an earlier checkpoint: in `channel_values` and
    /// `channel_versions`, not in `new_versions` (the saver must find the stored value).
    pub fn carried(mut self, channel: &str, value: impl Into<Value>, version: i64) -> Self {
        self.checkpoint
            .channel_values
            .insert(channel.to_owned(), value.into());
        self.checkpoint
            .channel_versions
            .insert(channel.to_owned(), ChannelVersion::Int(version));
        self
    }

    /// A channel written in this checkpoint whose value is not stored (a DeltaChannel
    /// between snapshots): in `channel_versions` and `new_versions`, not in
    /// `channel_values`.
    pub fn unstored(mut self, channel: &str, version: i64) -> Self {
        self.checkpoint
            .channel_versions
            .insert(channel.to_owned(), ChannelVersion::Int(version));
        self.new_versions
            .insert(channel.to_owned(), ChannelVersion::Int(version));
        self
    }

    /// Records in `versions_seen` that `node` last saw these channel versions.
    pub fn seen(mut self, node: &str, versions: &[(&str, i64)]) -> Self {
        let seen = versions
            .iter()
            .map(|(ch, v)| ((*ch).to_owned(), ChannelVersion::Int(*v)))
            .collect();
        self.checkpoint.versions_seen.insert(node.to_owned(), seen);
        self
    }

    /// The id of this checkpoint.
    pub fn id(&self) -> &str {
        &self.checkpoint.id
    }

    /// The checkpoint as it will be stored.
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.checkpoint
    }

    /// Stores it with `saver.put(config, …)`; `config.checkpoint_id` is the parent's id.
    pub async fn put(
        &self,
        saver: &dyn CheckpointSaver,
        config: &CheckpointConfig,
        metadata: &CheckpointMetadata,
    ) -> Result<CheckpointConfig, Failure> {
        Ok(saver
            .put(config, &self.checkpoint, metadata, &self.new_versions)
            .await?)
    }
}

/// Stores a checkpoint without channels in `config` and returns the stored config.
pub async fn put_plain(
    saver: &dyn CheckpointSaver,
    config: &CheckpointConfig,
    metadata: &CheckpointMetadata,
) -> Result<CheckpointConfig, Failure> {
    NewCheckpoint::new().put(saver, config, metadata).await
}

/// Stores `n` chained checkpoints without channels in `(thread, ns)`, each the parent of
/// the next, with the metadata `metadata(i)`; returns their stored configs in put order.
pub async fn put_chain(
    saver: &dyn CheckpointSaver,
    thread: &str,
    ns: &str,
    n: usize,
    metadata: impl Fn(usize) -> CheckpointMetadata,
) -> Result<Vec<CheckpointConfig>, Failure> {
    let mut stored = Vec::with_capacity(n);
    let mut parent: Option<String> = None;
    for i in 0..n {
        let cp = NewCheckpoint::new();
        let config = match &parent {
            Some(id) => CheckpointConfig::for_checkpoint(thread, ns, id.as_str()),
            None => in_ns(thread, ns),
        };
        stored.push(cp.put(saver, &config, &metadata(i)).await?);
        parent = Some(cp.id().to_owned());
    }
    Ok(stored)
}

/// The step metadata `{source: "loop", step: i}` for [`put_chain`].
pub fn loop_step(i: usize) -> CheckpointMetadata {
    loop_metadata(i64::try_from(i).unwrap_or(i64::MAX))
}

/// The checkpoint id of a config, or a failure naming what it belongs to.
pub fn id_of<'c>(config: &'c CheckpointConfig, what: &str) -> Result<&'c str, Failure> {
    config
        .checkpoint_id
        .as_deref()
        .ok_or_else(|| Failure::new(format!("{what}: the config has no checkpoint_id")))
}

/// `get_tuple(config)`, failing when it finds nothing.
pub async fn get_existing(
    saver: &dyn CheckpointSaver,
    config: &CheckpointConfig,
) -> Result<CheckpointTuple, Failure> {
    saver.get_tuple(config).await?.ok_or_else(|| {
        Failure::new(format!(
            "get_tuple found nothing for thread {:?}, ns {:?}, checkpoint_id {:?}",
            config.thread_id, config.checkpoint_ns, config.checkpoint_id
        ))
    })
}

/// `list(config, options)` collected, checked against `list_stream` with the same
/// arguments: the two must give equal tuples in the same order (so every list behaviour
/// runs on both paths).
pub async fn list(
    saver: &dyn CheckpointSaver,
    config: &CheckpointConfig,
    options: &ListOptions,
) -> Result<Vec<CheckpointTuple>, Failure> {
    list_any(saver, Some(config), options).await
}

/// [`list`] with an optional config (`None` lists every thread).
pub async fn list_any(
    saver: &dyn CheckpointSaver,
    config: Option<&CheckpointConfig>,
    options: &ListOptions,
) -> Result<Vec<CheckpointTuple>, Failure> {
    let listed = saver.list(config, options).await?;
    let streamed: Vec<CheckpointTuple> = saver
        .list_stream(config.cloned(), options.clone())
        .try_collect()
        .await?;
    if streamed != listed {
        return Err(Failure::new(format!(
            "list_stream differs from list for config {config:?}, options {options:?}: \
             streamed ids {:?}, listed ids {:?}",
            ids(&streamed),
            ids(&listed)
        )));
    }
    Ok(listed)
}

/// The checkpoint ids of tuples, in their order.
pub fn ids(tuples: &[CheckpointTuple]) -> Vec<String> {
    tuples.iter().map(|t| t.checkpoint.id.clone()).collect()
}

/// The ids of stored configs, in their order.
pub fn config_ids(configs: &[CheckpointConfig]) -> Vec<String> {
    configs
        .iter()
        .map(|c| c.checkpoint_id.clone().unwrap_or_default())
        .collect()
}

/// True when a version's integer part (text before the first `.`) is `n`: `1`, `"1"`,
/// `"1.0"` and `"00000000000000000000000000000001.0.5"` all match 1.
pub fn version_is(version: Option<&ChannelVersion>, n: i64) -> bool {
    version.is_some_and(|v| v.integer_part() == n)
}

/// The pending writes of a tuple on one channel.
pub fn writes_on<'t>(tuple: &'t CheckpointTuple, channel: &str) -> Vec<&'t PendingWrite> {
    tuple
        .pending_writes
        .iter()
        .filter(|w| w.channel == channel)
        .collect()
}

/// The `(task_id, channel, value)` triples of a tuple's pending writes, for messages.
pub fn describe_writes(tuple: &CheckpointTuple) -> Vec<(String, String, Value)> {
    tuple
        .pending_writes
        .iter()
        .map(|w| (w.task_id.clone(), w.channel.clone(), w.value.clone()))
        .collect()
}

/// One write `(channel, value)` for `put_writes`.
pub fn write(channel: &str, value: impl Into<Value>) -> (String, Value) {
    (channel.to_owned(), value.into())
}
