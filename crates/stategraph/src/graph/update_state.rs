//! Changing a thread's state outside a run: `update_state` and `bulk_update_state`
//! (docs/runtime.md#state-api). Each superstep of updates runs the nodes' writers on the
//! state it addresses, stores their writes on that checkpoint and saves one checkpoint of
//! source `update` after it; `update_state` is one superstep of one update.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

use indexmap::IndexMap;
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, CheckpointTuple, Value,
};

use super::compiled::CompiledGraph;
use super::node::{NodeContext, NodeOutput};
use super::read_state::not_found;
use super::state_api::thread_of;
use super::update_forms::{infer_as_node, Special};
use crate::channels::Channels;
use crate::config::AsRunConfig;
use crate::error::{Error, Result};
use crate::pregel::algo::TaskWrites;
use crate::pregel::algo::{apply_writes, create_checkpoint, new_versions, prepare_task_ids};
use crate::pregel::delta as d;
use crate::pregel::graph::PregelGraph;
use crate::pregel::run_loop::load::superseded;
use crate::pregel::task::{PathPart, TaskPath, PUSH};
use crate::state::{IntoUpdate, State};

/// What an update starts from: the checkpoint it addresses (if the thread has one) and
/// its live channels.
pub(super) struct Base {
    pub(super) saved: Option<CheckpointTuple>,
    /// The thread moved past the addressed checkpoint (the update forks a branch).
    pub(super) superseded: bool,
    pub(super) checkpoint: Checkpoint,
    /// The channel versions of the addressed checkpoint.
    pub(super) previous: ChannelVersions,
    /// The addressed checkpoint's step (-1 for a new thread).
    pub(super) step: i64,
    /// The config of the addressed checkpoint, where its writes are stored.
    pub(super) config: CheckpointConfig,
    pub(super) channels: Channels,
}

/// One update of a superstep given to [`CompiledGraph::bulk_update_state`]: `values` as
/// if node `as_node` had returned them (LangGraph's `StateUpdate(values, as_node, task_id)`).
#[derive(Clone, Debug)]
pub struct StateUpdate<U> {
    /// The update, as a node's return value.
    pub values: U,
    /// The node the update is attributed to; `None` infers it as LangGraph does (only
    /// when the superstep has this one update).
    pub as_node: Option<String>,
    /// The task id its writes are stored under; `None` takes the id of the node's next
    /// prepared task, else `uuid5(checkpoint_id, "__interrupt__[:i]")`.
    pub task_id: Option<String>,
}

impl<U> StateUpdate<U> {
    /// An update as if node `as_node` had returned `values`.
    pub fn new(values: U, as_node: impl Into<String>) -> Self {
        StateUpdate {
            values,
            as_node: Some(as_node.into()),
            task_id: None,
        }
    }

    /// An update whose node is inferred (allowed when it is alone in its superstep).
    pub fn inferred(values: U) -> Self {
        StateUpdate {
            values,
            as_node: None,
            task_id: None,
        }
    }

    /// The same update, stored under task id `task_id`.
    pub fn with_task_id(mut self, task_id: impl Into<String>) -> Self {
        self.task_id = Some(task_id.into());
        self
    }
}

/// One update of a superstep after its writers ran: where its writes go.
pub(super) struct RanUpdate {
    pub(super) task_id: String,
    pub(super) path: TaskPath,
    pub(super) as_node: String,
    /// The channels it was triggered by (none for input).
    pub(super) triggers: Vec<String>,
    pub(super) writes: Vec<(String, Value)>,
}

impl<S: State> CompiledGraph<S> {
    /// Changes the state of a thread as if node `as_node` had returned `values`: the
    /// node's writers run (edges and conditional edges fire as usual) and a checkpoint with
    /// source `update` is saved. `as_node = None` infers the node as LangGraph does;
    /// `Some(END)` with no values clears the pending tasks, `Some(INPUT)` applies the
    /// values as new input and `Some(COPY)` copies the checkpoint as a fork (see
    /// [`StateUpdate::clear`], [`StateUpdate::input`], [`StateUpdate::copy`]). Returns
    /// the config of the new checkpoint. Waits while a run of the thread (in this process,
    /// on this saver) is under way or a dropped one is still storing its saves.
    pub async fn update_state(
        &self,
        config: impl AsRunConfig,
        values: impl IntoUpdate,
        as_node: Option<&str>,
    ) -> Result<CheckpointConfig> {
        let update = StateUpdate {
            values,
            as_node: as_node.map(str::to_owned),
            task_id: None,
        };
        self.bulk_update_state(config, vec![vec![update]]).await
    }

    /// Applies `supersteps` in order, as LangGraph's `bulk_update_state`: the updates of
    /// one superstep run on the same state and are saved together as ONE checkpoint of
    /// source `update`; the next superstep starts from it. Returns the config of the last
    /// checkpoint. No supersteps, an empty superstep, several updates where one has no
    /// `as_node`, a special form ([`StateUpdate::clear`], [`StateUpdate::input`],
    /// [`StateUpdate::copy`]) that is not alone in its superstep, or an unknown node fail
    /// before anything is stored; otherwise a failing
    /// superstep stores nothing of itself (earlier ones stay). Waits for a run of the
    /// thread like [`CompiledGraph::update_state`].
    pub async fn bulk_update_state<U: IntoUpdate>(
        &self,
        config: impl AsRunConfig,
        supersteps: Vec<Vec<StateUpdate<U>>>,
    ) -> Result<CheckpointConfig> {
        let config = &self.resolve(config);
        let saver = self.saver()?.clone();
        thread_of(config)?;
        if supersteps.is_empty() {
            return Err(Error::InvalidUpdate("No supersteps provided".into()));
        }
        if supersteps.iter().any(Vec::is_empty) {
            return Err(Error::InvalidUpdate("No updates provided".into()));
        }
        for updates in supersteps.iter().filter(|s| s.len() > 1) {
            if let Some(form) = updates[0].as_node.as_deref().and_then(Special::of) {
                return Err(Error::InvalidUpdate(form.multiple_error().into()));
            }
        }
        for update in supersteps.iter().filter(|s| s.len() > 1).flatten() {
            if update.as_node.is_none() {
                return Err(multiple_without_node());
            }
        }
        for (i, node) in supersteps
            .iter()
            .flat_map(|s| s.iter().enumerate())
            .filter_map(|(i, u)| Some((i, u.as_node.as_deref()?)))
        {
            if i > 0 || Special::of(node).is_none() {
                self.node_exists(node)?;
            }
        }
        let mut cfg = config.checkpoint_config("");
        // Like a run: waits until the saves of a dropped run of the thread are stored.
        let _lease = match &config.thread_id {
            Some(thread_id) => Some(crate::pregel::lease::acquire(&saver, thread_id).await),
            None => None,
        };
        for (i, updates) in supersteps.into_iter().enumerate() {
            cfg = self.update_superstep(&saver, &cfg, updates, i == 0).await?;
        }
        Ok(cfg)
    }

    /// `Ok` if the graph has node `node`, else [`Error::UnknownNode`].
    fn node_exists(&self, node: &str) -> Result<()> {
        if self.graph.nodes.contains_key(node) {
            return Ok(());
        }
        Err(Error::UnknownNode {
            node: node.to_owned(),
            by: "update_state".into(),
        })
    }

    /// One superstep of an update: runs the writers of each update on the checkpoint
    /// `cfg` addresses, stores their writes on it and saves the checkpoint after it.
    /// `first`: the superstep addresses the caller's checkpoint (whose own pending
    /// writes to DeltaChannels make it fork them).
    async fn update_superstep<U: IntoUpdate>(
        &self,
        saver: &Arc<dyn CheckpointSaver>,
        cfg: &CheckpointConfig,
        updates: Vec<StateUpdate<U>>,
        first: bool,
    ) -> Result<CheckpointConfig> {
        let special = updates
            .first()
            .and_then(|u| u.as_node.as_deref())
            .and_then(Special::of);
        if let Some(form) = special {
            let values = updates.into_iter().next().map(|u| u.values);
            let values =
                values.ok_or_else(|| Error::InvalidUpdate("No updates provided".into()))?;
            return self
                .special_superstep(saver, cfg, form, values, first)
                .await;
        }
        let graph = self.graph.clone();
        let mut base = self.load_base(saver, cfg).await?;
        let mut prepared: IndexMap<String, VecDeque<String>> = IndexMap::new();
        if base.saved.is_some() {
            let tasks = prepare_task_ids(
                &base.checkpoint,
                &graph,
                &base.channels,
                base.step + 1,
                "",
                None,
            )?;
            for t in tasks {
                prepared.entry(t.name).or_default().push_back(t.id);
            }
        }
        let single = updates.len() == 1;
        let mut ran = Vec::with_capacity(updates.len());
        for (i, update) in updates.into_iter().enumerate() {
            let as_node = match update.as_node {
                Some(n) => n,
                None if single => infer_as_node(
                    &graph,
                    &d::versions_seen_without_bumps(&base.checkpoint.versions_seen),
                )
                .ok_or_else(|| Error::InvalidUpdate("Ambiguous update, specify as_node".into()))?,
                None => return Err(multiple_without_node()),
            };
            self.node_exists(&as_node)?;
            let task_id = update
                .task_id
                .or_else(|| prepared.get_mut(&as_node).and_then(VecDeque::pop_front))
                .unwrap_or_else(|| update_task_id(&base.checkpoint.id, i));
            let writes = self.run_writers(&mut base, &as_node, &task_id, update.values)?;
            let path = TaskPath(vec![
                PathPart::Str("__interrupt__".into()),
                PathPart::Int(i as i64),
            ]);
            ran.push(RanUpdate {
                task_id,
                path,
                as_node,
                triggers: vec!["__interrupt__".to_owned()],
                writes,
            });
        }
        if base.saved.is_some() && !base.superseded {
            for r in &ran {
                store_writes(saver.as_ref(), &base.config, &r.writes, &r.task_id, &r.path).await?;
            }
        }
        let step = base.step + 1;
        self.save_superstep(saver, base, &ran, first, CheckpointSource::Update, step)
            .await
    }

    /// Applies the superstep's writes to the base and saves the checkpoint of source
    /// `update` after it (with the DeltaChannel snapshots it is due).
    pub(super) async fn save_superstep(
        &self,
        saver: &Arc<dyn CheckpointSaver>,
        mut base: Base,
        ran: &[RanUpdate],
        first: bool,
        source: CheckpointSource,
        step: i64,
    ) -> Result<CheckpointConfig> {
        let graph = &self.graph;
        let writes: Vec<(String, Value)> =
            ran.iter().flat_map(|r| r.writes.iter().cloned()).collect();
        let fork = fork_channels(graph, &base, &writes, first);
        let tasks: Vec<TaskWrites> = ran
            .iter()
            .map(|r| TaskWrites {
                path: &r.path,
                name: &r.as_node,
                triggers: &r.triggers,
                writes: &r.writes,
            })
            .collect();
        let next = |c: Option<&ChannelVersion>| saver.get_next_version(c);
        apply_writes(
            &mut base.checkpoint,
            &mut base.channels,
            &tasks,
            &next,
            &graph.trigger_to_nodes,
        )?;
        let updated: BTreeSet<String> = writes
            .iter()
            .filter(|(c, _)| c != PUSH)
            .map(|(c, _)| c.clone())
            .collect();
        self.finish_superstep(saver, base, updated, fork, source, step)
            .await
    }

    /// Saves the checkpoint after the base's applied writes (`updated`: the channels they
    /// wrote; `fork`: DeltaChannels to snapshot), of `source` at `step`, with the
    /// DeltaChannel snapshots it is due.
    pub(super) async fn finish_superstep(
        &self,
        saver: &Arc<dyn CheckpointSaver>,
        mut base: Base,
        updated: BTreeSet<String>,
        fork: BTreeSet<String>,
        source: CheckpointSource,
        step: i64,
    ) -> Result<CheckpointConfig> {
        let graph = &self.graph;
        let next = |c: Option<&ChannelVersion>| saver.get_next_version(c);
        let parents = base
            .saved
            .as_ref()
            .and_then(|t| t.metadata.parents.clone())
            .unwrap_or_default();
        let mut metadata = CheckpointMetadata {
            source: Some(source),
            step: Some(step),
            parents: Some(parents),
            extra: IndexMap::new(),
        };
        let ts = self.sources.ts();
        let id = self.sources.ids().uuid6(step);
        let checkpoint = std::mem::replace(&mut base.checkpoint, Checkpoint::empty("", ""));
        let mut next_checkpoint = create_checkpoint(checkpoint, &base.channels, id, ts, None);
        if d::has_delta_channels(graph) {
            let to_snapshot = delta_snapshots(
                graph,
                &base,
                &updated,
                fork,
                &next_checkpoint,
                &mut metadata,
            );
            d::apply_snapshots(
                &mut next_checkpoint,
                &base.channels,
                &to_snapshot,
                &base.previous,
                &next,
                &graph.trigger_to_nodes,
            );
        }
        let new_versions = new_versions(&base.previous, &next_checkpoint.channel_versions);
        put_update(
            saver.as_ref(),
            base.config,
            base.superseded,
            &next_checkpoint,
            &metadata,
            &new_versions,
        )
        .await
    }

    /// Reads the checkpoint `cfg` addresses (the latest without an id; an id the saver
    /// does not have is [`Error::CheckpointNotFound`]) and its live channels.
    pub(super) async fn load_base(
        &self,
        saver: &Arc<dyn CheckpointSaver>,
        cfg: &CheckpointConfig,
    ) -> Result<Base> {
        let saved = saver.get_tuple(cfg).await?;
        if saved.is_none() && cfg.checkpoint_id.is_some() {
            return Err(not_found(cfg));
        }
        let superseded = match (&saved, &cfg.checkpoint_id) {
            (Some(t), Some(_)) => superseded(saver.as_ref(), cfg, &t.checkpoint.id).await?,
            _ => false,
        };
        let mut checkpoint = match &saved {
            Some(t) => t.checkpoint.clone(),
            None => Checkpoint::empty(self.sources.ids().uuid6(-2), self.sources.ts()),
        };
        let previous: ChannelVersions = checkpoint.channel_versions.clone();
        let step = saved.as_ref().and_then(|t| t.metadata.step).unwrap_or(-1);
        let mut config = cfg.clone();
        if let Some(t) = &saved {
            config.checkpoint_id = Some(t.checkpoint.id.clone());
        }
        let channels =
            d::load_channels(&self.graph, &mut checkpoint, Some(saver.as_ref()), &config).await?;
        Ok(Base {
            saved,
            superseded,
            checkpoint,
            previous,
            step,
            config,
            channels,
        })
    }

    /// Runs the writers of node `as_node` on `values` over the base's channels, as task
    /// `task_id`: the writes. Unknown channels and targets fail unless the graph is
    /// lenient.
    fn run_writers(
        &self,
        base: &mut Base,
        as_node: &str,
        task_id: &str,
        values: impl IntoUpdate,
    ) -> Result<Vec<(String, Value)>> {
        let graph = &self.graph;
        let node = graph.nodes.get(as_node).ok_or_else(|| Error::UnknownNode {
            node: as_node.to_owned(),
            by: "update_state".into(),
        })?;
        let lenient = self.options.lenient_writes;
        let values = values.into_writes()?;
        if !lenient {
            if let Some((key, _)) = values.iter().find(|(k, _)| !graph.channels.contains_key(k)) {
                return Err(Error::UnknownChannel {
                    channel: key.clone(),
                    by: "update_state".into(),
                });
            }
        }
        let channels = Arc::new(std::mem::take(&mut base.channels));
        let ctx = NodeContext::detached(
            task_id.to_owned(),
            as_node.to_owned(),
            base.step,
            channels.clone(),
        );
        let output = NodeOutput {
            writes: values,
            goto: Vec::new(),
        };
        let writes = (node.writers)(output, &ctx);
        drop(ctx);
        base.channels = Arc::try_unwrap(channels).unwrap_or_else(|a| (*a).clone());
        let writes = writes.map_err(|e| Error::InvalidUpdate(e.to_string()))?;
        if !lenient {
            crate::pregel::targets::check_targets(graph, "update_state", &writes)?;
        }
        Ok(writes)
    }
}

/// Stores the update's writes (but `Send`s) on the checkpoint it addresses, as a task's.
pub(super) async fn store_writes(
    saver: &dyn CheckpointSaver,
    config: &CheckpointConfig,
    writes: &[(String, Value)],
    task_id: &str,
    path: &TaskPath,
) -> Result<()> {
    let stored: Vec<(String, Value)> = writes.iter().filter(|(c, _)| c != PUSH).cloned().collect();
    if !stored.is_empty() {
        saver
            .put_writes(config, &stored, task_id, &path.to_path_string())
            .await?;
    }
    Ok(())
}

/// DeltaChannels this update must snapshot (docs/format.md#deltachannel): those the
/// saved checkpoint has writes for (they belong to another child), those overwritten,
/// and, when the thread moved past the checkpoint, those written (their writes are not
/// stored on it). Only the first superstep of a bulk update counts the saved writes.
pub(super) fn fork_channels(
    graph: &PregelGraph,
    base: &Base,
    writes: &[(String, Value)],
    first: bool,
) -> BTreeSet<String> {
    let mut fork = d::delta_channels_in(
        graph,
        base.saved
            .iter()
            .filter(|_| first)
            .flat_map(|t| t.pending_writes.iter().map(|w| w.channel.as_str())),
    );
    fork.extend(d::overwritten(
        graph,
        writes.iter().map(|(c, v)| (c.as_str(), v)),
    ));
    if base.superseded {
        fork.extend(d::delta_channels_in(
            graph,
            writes.iter().map(|(c, _)| c.as_str()),
        ));
    }
    fork
}

/// The DeltaChannels the update's checkpoint stores a snapshot of; the snapshot counters
/// go into `metadata`. A fresh thread snapshots every delta channel it wrote.
fn delta_snapshots(
    graph: &PregelGraph,
    base: &Base,
    updated: &BTreeSet<String>,
    fork: BTreeSet<String>,
    next_checkpoint: &Checkpoint,
    metadata: &mut CheckpointMetadata,
) -> BTreeSet<String> {
    let channels = &base.channels;
    let versions = &next_checkpoint.channel_versions;
    match &base.saved {
        None => d::due_by_counters(channels, &d::Counters::new(), versions)
            .into_iter()
            .chain(
                channels
                    .iter()
                    .filter(|(k, c)| {
                        c.delta_snapshot_frequency().is_some()
                            && c.is_available()
                            && versions.contains_key(*k)
                    })
                    .map(|(k, _)| k.clone()),
            )
            .collect(),
        Some(t) => {
            let counters =
                d::advance_counters(graph, &d::read_counters(&t.metadata), Some(updated));
            let mut due = d::due_by_counters(channels, &counters, versions);
            due.extend(fork);
            d::write_counters(metadata, counters, &due);
            due
        }
    }
}

/// Saves the update's checkpoint after `config`'s (on a new branch when `superseded`);
/// the config of the checkpoint stored. A conflict stores nothing of the update.
pub(super) async fn put_update(
    saver: &dyn CheckpointSaver,
    mut config: CheckpointConfig,
    superseded: bool,
    checkpoint: &Checkpoint,
    metadata: &CheckpointMetadata,
    new_versions: &ChannelVersions,
) -> Result<CheckpointConfig> {
    if superseded {
        config.configurable.insert(
            stategraph_checkpoint::CONFIG_KEY_BRANCH.into(),
            Value::Bool(true),
        );
    }
    let mut stored = saver
        .put(&config, checkpoint, metadata, new_versions)
        .await
        .map_err(|e| match e {
            // The one checkpoint of the update was refused: nothing of it is stored.
            stategraph_checkpoint::Error::Conflict(message) => Error::Conflict {
                message,
                fate: crate::error::InputFate::NotApplied,
            },
            other => Error::Checkpoint(other),
        })?;
    stored
        .configurable
        .shift_remove(stategraph_checkpoint::CONFIG_KEY_BRANCH);
    Ok(stored)
}

/// Several updates in one superstep, one without `as_node`.
fn multiple_without_node() -> Error {
    Error::InvalidUpdate("as_node is required when applying multiple updates".into())
}

/// `uuid5(UUID(checkpoint_id), "__interrupt__")` (or `"__interrupt__:i"` for the i-th).
fn update_task_id(checkpoint_id: &str, i: usize) -> String {
    let ns = uuid::Uuid::parse_str(checkpoint_id).unwrap_or_default();
    let name = if i == 0 {
        "__interrupt__".to_owned()
    } else {
        format!("__interrupt__:{i}")
    };
    uuid::Uuid::new_v5(&ns, name.as_bytes()).to_string()
}
