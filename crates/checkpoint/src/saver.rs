//! The saver trait every backend implements, and the options of its operations.
//!
//! Five operations are required (`get_tuple`, `list`, `put`, `put_writes`,
//! `delete_thread`) plus `get_next_version`; `get` is provided on top of `get_tuple`. The
//! extended operations (`delete_for_runs`, `copy_thread`, `prune`) default to
//! [`Error::Unsupported`] and a saver that implements them says so in
//! [`CheckpointSaver::capabilities`]. The trait is object-safe (the engine holds an
//! `Arc<dyn CheckpointSaver>`), so its async methods return boxed futures through
//! `async_trait`.

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use indexmap::IndexMap;

use crate::checkpoint::{Checkpoint, CheckpointTuple};
use crate::config::CheckpointConfig;
use crate::delta::{empty_histories, Collector, DeltaChannelHistory};
use crate::error::{Error, Result};
use crate::in_flight::InFlightSaves;
use crate::metadata::CheckpointMetadata;
use crate::value::Value;
use crate::version::{ChannelVersion, ChannelVersions};

/// The configurable key (value `true`) that marks a `put` as the deliberate start of a new
/// branch from an older checkpoint: a replay ("time travel"), or `update_state` on a
/// checkpoint that is not the thread's head. Savers that refuse a put whose parent is not
/// the head (the Postgres fence) admit such a put. Like every `__`-prefixed key, it never
/// reaches checkpoint metadata.
pub const CONFIG_KEY_BRANCH: &str = "__stategraph_branch";

/// True when `config` marks its put as the start of a deliberate branch.
pub fn starts_branch(config: &CheckpointConfig) -> bool {
    matches!(
        config.configurable.get(CONFIG_KEY_BRANCH),
        Some(Value::Bool(true))
    )
}

/// Options of [`CheckpointSaver::list`].
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// Only checkpoints whose metadata has each of these top-level keys equal to the value,
    /// by the one meaning every saver gives a filter ([`ListOptions::matches`];
    /// docs/format.md#metadata-filters).
    pub filter: Option<IndexMap<String, Value>>,
    /// Only checkpoints whose id is strictly smaller than this config's `checkpoint_id`.
    pub before: Option<CheckpointConfig>,
    /// At most this many, applied after filtering.
    pub limit: Option<usize>,
}

impl ListOptions {
    /// Adds a metadata filter key (builder style).
    pub fn filter(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.filter
            .get_or_insert_with(IndexMap::new)
            .insert(key.into(), value.into());
        self
    }

    /// Sets `before` to a checkpoint id of the same thread (builder style).
    pub fn before(mut self, config: CheckpointConfig) -> Self {
        self.before = Some(config);
        self
    }

    /// Sets the limit (builder style).
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// True when `metadata` matches every key of the filter: the meaning of a filter for
    /// every saver (docs/format.md#metadata-filters), Python's `metadata.get(key) == value`
    /// where Python's in-memory and SQLite savers agree.
    ///
    /// * A value equals the stored one structurally: maps with the same keys and equal
    ///   values, in any order; lists element by element; numbers by value at any depth
    ///   (`1` equals `1.0`). `{}` matches only an empty map, `[1]` only the list `[1]`
    ///   (not containment, as Python's `PostgresSaver` has it).
    /// * `None` matches a key holding `None` and a missing key.
    /// * Booleans are not numbers (`true` does not match `1`, where Python's `True == 1`),
    ///   and strings are not numbers (`"1"` does not match `1`).
    pub fn matches(&self, metadata: &CheckpointMetadata) -> bool {
        self.filter.as_ref().is_none_or(|f| {
            f.iter().all(|(k, want)| match metadata.get(k) {
                Some(got) => filter_equal(&got, want),
                None => matches!(want, Value::Nil),
            })
        })
    }
}

/// The equality of a metadata filter ([`ListOptions::matches`]): numbers by value, maps
/// whatever their order, both at any depth; everything else structurally.
fn filter_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(_) | Value::UInt(_) | Value::Float(_), _) => numbers_equal(a, b),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| filter_equal(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            let within = |x: &crate::value::Map, y: &crate::value::Map| {
                x.iter()
                    .all(|(k, v)| y.get_value(k).is_some_and(|w| filter_equal(v, w)))
            };
            within(x, y) && within(y, x)
        }
        _ => a == b,
    }
}

/// Python `==` on two numbers (exact, as Python compares `int` with `float`); false when
/// either is not a number.
fn numbers_equal(a: &Value, b: &Value) -> bool {
    fn exact(v: &Value) -> Option<Result<i128, f64>> {
        match *v {
            Value::Int(n) => Some(Ok(i128::from(n))),
            Value::UInt(n) => Some(Ok(i128::from(n))),
            // A whole float within i128 compares as that integer; any other float as a float.
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 1.0e38 => Some(Ok(f as i128)),
            Value::Float(f) => Some(Err(f)),
            _ => None,
        }
    }
    match (exact(a), exact(b)) {
        (Some(Ok(x)), Some(Ok(y))) => x == y,
        (Some(Err(x)), Some(Err(y))) => x == y,
        _ => false,
    }
}

/// How [`CheckpointSaver::prune`] thins a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PruneStrategy {
    /// Keep only the newest checkpoint (with its writes) of each namespace.
    #[default]
    KeepLatest,
    /// Remove every checkpoint and write of the thread.
    Delete,
}

/// Which optional operations a saver implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// [`CheckpointSaver::delete_for_runs`].
    pub delete_for_runs: bool,
    /// [`CheckpointSaver::copy_thread`].
    pub copy_thread: bool,
    /// [`CheckpointSaver::prune`].
    pub prune: bool,
    /// The saver enforces one writer per thread ([`crate::fence`]): a `put` behind the
    /// head, or task writes against a checkpoint another run moved past, fail with
    /// [`Error::Conflict`]. Not an operation, so not part of [`Capabilities::ALL`].
    pub fence: bool,
}

impl Capabilities {
    /// All optional operations (and no fence).
    pub const ALL: Capabilities = Capabilities {
        delete_for_runs: true,
        copy_thread: true,
        prune: true,
        fence: false,
    };
}

/// One save of a batch ([`CheckpointSaver::put_batch`]): the owned arguments of a `put` or a
/// `put_writes`. The engine's background writer queues these in durability `async`.
#[derive(Clone, Debug)]
pub enum SaveOp {
    /// The arguments of [`CheckpointSaver::put`].
    Put {
        /// The parent's config (see `put`).
        config: CheckpointConfig,
        /// The checkpoint, shared with the run that made it (never copied to be queued).
        checkpoint: Arc<Checkpoint>,
        /// Its metadata.
        metadata: CheckpointMetadata,
        /// The channels whose values are new since the parent.
        new_versions: ChannelVersions,
    },
    /// The arguments of [`CheckpointSaver::put_writes`].
    PutWrites {
        /// The config of the checkpoint the task ran from.
        config: CheckpointConfig,
        /// The task's writes, `(channel, value)` in order.
        writes: Vec<(String, Value)>,
        /// The task id.
        task_id: String,
        /// The task path.
        task_path: String,
    },
}

impl SaveOp {
    /// Makes the one call on `saver` this op holds the arguments of: `put` (its answer, the
    /// stored checkpoint's config) or `put_writes` (`None`).
    pub async fn apply<S: CheckpointSaver + ?Sized>(
        &self,
        saver: &S,
    ) -> Result<Option<CheckpointConfig>> {
        match self {
            SaveOp::Put {
                config,
                checkpoint,
                metadata,
                new_versions,
            } => Ok(Some(
                saver
                    .put(config, checkpoint, metadata, new_versions)
                    .await?,
            )),
            SaveOp::PutWrites {
                config,
                writes,
                task_id,
                task_path,
            } => {
                saver.put_writes(config, writes, task_id, task_path).await?;
                Ok(None)
            }
        }
    }
}

/// A place checkpoints are stored: in memory, SQLite, Postgres, or a wrapper of one.
#[async_trait]
pub trait CheckpointSaver: Send + Sync {
    /// The checkpoint addressed by `config`: the given `checkpoint_id` in
    /// `(thread_id, checkpoint_ns or "")`, else the one with the greatest id. `None` if
    /// there is none. Required.
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>>;

    /// Checkpoints newest first. `None` lists every thread; a config without
    /// `checkpoint_ns` lists every namespace of its thread; with `checkpoint_id`, only that
    /// one. Required.
    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>>;

    /// [`CheckpointSaver::list`] as a stream: the same tuples in the same order, with the
    /// same filter, `before`, `limit` and namespace rules, produced as the consumer pulls
    /// them. Savers that implement it natively read in bounded pages, so listing a thread
    /// of any length holds a bounded amount of memory (a page, not the history); the
    /// arguments are owned so that the stream borrows nothing but the saver.
    ///
    /// A page is read from one snapshot and the next page resumes after the last
    /// checkpoint read, so checkpoints added while the stream is consumed appear only if
    /// they sort after that point (a newer checkpoint never does: the order is newest
    /// first). Provided: one [`CheckpointSaver::list`] call, streamed out of its `Vec`
    /// (not bounded; every saver of this workspace overrides it).
    fn list_stream(
        &self,
        config: Option<CheckpointConfig>,
        options: ListOptions,
    ) -> BoxStream<'_, Result<CheckpointTuple>> {
        stream::once(async move { self.list(config.as_ref(), &options).await })
            .map_ok(|tuples| stream::iter(tuples.into_iter().map(Ok)))
            .try_flatten()
            .boxed()
    }

    /// Stores a checkpoint. `config.checkpoint_id` is the parent's id (or none);
    /// `new_versions` names the channels whose values are new since the parent. Returns the
    /// config of the stored checkpoint. Re-putting an id replaces it. A saver that fences
    /// concurrent writers must admit a put that [`starts_branch`]. Required.
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig>;

    /// Stores the writes of one task against the checkpoint `config.checkpoint_id`.
    ///
    /// Indexes follow LangGraph (docs/format.md#pending-writes): a reserved channel gets its fixed
    /// negative
    /// index ([`crate::WRITES_IDX_MAP`]), any other its position in `writes`. The rule for
    /// a repeated `(task_id, index)`, the same in every stategraph saver: a write at a
    /// reserved index replaces the stored one (last wins); a write at a normal index is
    /// ignored (first wins). Required.
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()>;

    /// Removes every checkpoint, write and blob of a thread, in every namespace. Deleting
    /// an unknown thread is not an error. Required.
    async fn delete_thread(&self, thread_id: &str) -> Result<()>;

    /// The version that follows `current` for a channel (docs/format.md#channel-versions).
    /// Required.
    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion;

    /// Applies `ops` in order, as if each were its own `put` / `put_writes` call: the stored
    /// rows are the same. A saver may commit the whole batch at once (group commit: one
    /// transaction, one `fsync`). Stops at the first error; what the ops before it stored
    /// stays stored unless the saver documents that a batch is all-or-nothing. Provided: one
    /// call per op.
    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        put_each(self, ops).await
    }

    /// The histories of the DeltaChannels `channels` at the checkpoint `config` addresses
    /// (docs/format.md#deltachannel): for each, the value stored by its nearest ancestor (the seed)
    /// and the
    /// channel's writes since then, oldest first. Provided: walks `get_tuple` and
    /// `parent_config` ([`history_by_walk`]); savers with direct storage
    /// access read the chain in one query.
    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        history_by_walk(self, config, channels).await
    }

    /// The checkpoint addressed by `config`, without its tuple. Provided.
    async fn get(&self, config: &CheckpointConfig) -> Result<Option<Checkpoint>> {
        Ok(self.get_tuple(config).await?.map(|t| t.checkpoint))
    }

    /// True when saving does no I/O (the saver keeps everything in this process). The
    /// engine then saves inline even in durability `async`, where a background task would
    /// only add copies and wake-ups. Provided: false.
    fn is_in_process(&self) -> bool {
        false
    }

    /// The registry of saves this saver instance was handed by cancelled runs and has not
    /// stored yet ([`crate::in_flight`]). A saver that returns one makes its reads
    /// (`get_tuple`, `list`, `list_stream`, `get_delta_channel_history`) and its
    /// thread-wide changes (`delete_thread`, `copy_thread`, `prune`) wait for the
    /// thread's holds ([`InFlightSaves::settled`]), so a read after a cancelled run is never
    /// older than what that run handed over; the engine takes its holds here. A wrapper
    /// forwards its inner saver's. Provided: none (the engine then waits in its own reads
    /// only: `get_state`, `get_state_history`).
    fn in_flight_saves(&self) -> Option<&InFlightSaves> {
        None
    }

    /// Which optional operations this saver implements. Provided: none.
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    /// Deletes every checkpoint (with its writes), in any thread and namespace, whose
    /// metadata `run_id` is listed. Optional.
    async fn delete_for_runs(&self, _run_ids: &[String]) -> Result<()> {
        Err(Error::Unsupported("delete_for_runs"))
    }

    /// Copies every checkpoint, write and value of thread `source` to thread `target`,
    /// keeping ids, namespaces and order. Optional.
    async fn copy_thread(&self, _source: &str, _target: &str) -> Result<()> {
        Err(Error::Unsupported("copy_thread"))
    }

    /// Thins the listed threads by `strategy`; other threads are untouched. Optional.
    async fn prune(&self, _thread_ids: &[String], _strategy: PruneStrategy) -> Result<()> {
        Err(Error::Unsupported("prune"))
    }
}

/// Applies `ops` one call per op (`put` / `put_writes`), stopping at the first error: the
/// provided [`CheckpointSaver::put_batch`], for savers whose own batch falls back to it.
pub async fn put_each<S: CheckpointSaver + ?Sized>(saver: &S, ops: &[SaveOp]) -> Result<()> {
    for op in ops {
        op.apply(saver).await?;
    }
    Ok(())
}

/// The histories of `channels` at the checkpoint `config` addresses, by walking
/// `get_tuple` and `parent_config`, each ancestor read once for all channels. What
/// [`CheckpointSaver::get_delta_channel_history`] does unless a saver reads its storage
/// directly. Every requested channel gets an entry (empty when the target is unknown).
pub async fn history_by_walk<S: CheckpointSaver + ?Sized>(
    saver: &S,
    config: &CheckpointConfig,
    channels: &[String],
) -> Result<IndexMap<String, DeltaChannelHistory>> {
    let mut out = empty_histories(channels);
    if channels.is_empty() {
        return Ok(out);
    }
    let mut collector = Collector::new(channels);
    let mut cursor = match saver.get_tuple(config).await? {
        Some(t) => t.parent_config,
        None => None,
    };
    let mut visited: HashSet<String> = HashSet::new();
    while let Some(cfg) = cursor {
        if collector.done() {
            break;
        }
        let Some(t) = saver.get_tuple(&cfg).await? else {
            break;
        };
        // A re-put id can make a chain loop; stop at the first repeat.
        if !visited.insert(t.checkpoint.id.clone()) {
            break;
        }
        let mut values = t.checkpoint.channel_values;
        collector.visit(t.pending_writes, |c| values.swap_remove(c));
        cursor = t.parent_config;
    }
    collector.finish(&mut out);
    Ok(out)
}
