//! Reading and changing a thread's state outside a run: `get_state`,
//! `get_state_history` and `update_state` (docs/runtime.md#state-api).

use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use indexmap::IndexMap;
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, CheckpointTuple, ListOptions, Value, NULL_TASK_ID,
};

use super::compiled::CompiledGraph;
use super::node::{NodeContext, NodeOutput};
use crate::config::AsRunConfig;
use crate::error::{Error, Result};
use crate::pregel::algo::{
    apply_writes, create_checkpoint, new_versions, prepare_task_ids, read_channels, TaskWrites,
};
use crate::pregel::events;
use crate::pregel::graph::PregelGraph;
use crate::pregel::run_loop::load::superseded;
use crate::pregel::snapshot::{StateSnapshot, TaskInfo, TaskState};
use crate::pregel::status::read_task_statuses;
use crate::pregel::task::{PathPart, TaskPath};
use crate::state::{IntoUpdate, State};

fn int_versions(current: Option<&ChannelVersion>) -> ChannelVersion {
    stategraph_checkpoint::version_gen::next_int_version(current)
}

impl<S: State> CompiledGraph<S> {
    fn saver(&self) -> Result<&Arc<dyn CheckpointSaver>> {
        self.options
            .checkpointer
            .as_ref()
            .ok_or(Error::NoCheckpointer)
    }

    /// The state of a thread: at its latest checkpoint ("live": values include the output
    /// of tasks that already finished, `next` only what still has to run), or at the
    /// checkpoint `config.checkpoint_id` names (a record of that step). A config with a
    /// subgraph's `checkpoint_ns` reads that subgraph's state.
    ///
    /// `config` is a [`RunConfig`](crate::RunConfig) or anything that converts to one
    /// (`&RunConfig`, a snapshot's `config`, what `update_state` returns).
    ///
    /// If a run of the thread was cancelled with saves still being stored (its
    /// durability-`async` queue, a save under way), waits for them first, so the state
    /// read is never older than what that run handed to the saver (docs/runtime.md#cancelling-a-run). It does not wait for a
    /// run that is still going.
    pub async fn get_state(&self, config: impl AsRunConfig) -> Result<StateSnapshot> {
        self.get_state_with(config, false).await
    }

    /// [`CompiledGraph::get_state`], with the full state of subgraph tasks when
    /// `subgraphs` is set.
    pub async fn get_state_with(
        &self,
        config: impl AsRunConfig,
        subgraphs: bool,
    ) -> Result<StateSnapshot> {
        let config = &self.resolve(config);
        let saver = self.saver()?.clone();
        let graph = graph_for_ns(&self.graph, &config.checkpoint_ns)?;
        let cfg = config.checkpoint_config(&config.checkpoint_ns);
        let live = config.checkpoint_id.is_none();
        let thread = thread_of(config)?;
        crate::pregel::in_flight::settled(&saver, thread).await;
        state_of(graph, saver, cfg, live, subgraphs).await
    }

    /// The thread's checkpoints (of the root, or of the namespace the config names) as
    /// snapshots, newest first. Collects [`CompiledGraph::get_state_history_stream`]; waits
    /// for a cancelled run's saves as [`CompiledGraph::get_state`] does.
    pub async fn get_state_history(
        &self,
        config: impl AsRunConfig,
        options: &ListOptions,
    ) -> Result<Vec<StateSnapshot>> {
        self.get_state_history_stream(config, options.clone())
            .try_collect()
            .await
    }

    /// [`CompiledGraph::get_state_history`] as a stream: each snapshot is built when the
    /// consumer pulls it, from the saver's [`CheckpointSaver::list_stream`], so walking a
    /// history of any length holds one page of checkpoints, not the history. A missing
    /// checkpointer or an unknown namespace is the stream's only item, an error. Before
    /// the first page it waits for a cancelled run's saves as [`CompiledGraph::get_state`]
    /// does.
    ///
    /// ```no_run
    /// # async fn demo(graph: stategraph::CompiledGraph<stategraph::DynState>) -> stategraph::Result<()> {
    /// use futures::TryStreamExt;
    /// let config = stategraph::RunConfig::thread("t");
    /// let mut history = graph.get_state_history_stream(&config, Default::default());
    /// while let Some(snapshot) = history.try_next().await? {
    ///     println!("{:?}", snapshot.config);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn get_state_history_stream(
        &self,
        config: impl AsRunConfig,
        options: ListOptions,
    ) -> BoxStream<'_, Result<StateSnapshot>> {
        let config = &self.resolve(config);
        let setup = self
            .saver()
            .and_then(|saver| Ok((saver, graph_for_ns(&self.graph, &config.checkpoint_ns)?)));
        let (saver, graph) = match setup {
            Ok(found) => found,
            Err(e) => return stream::once(async move { Err(e) }).boxed(),
        };
        let cfg = config.checkpoint_config(&config.checkpoint_ns);
        let thread = config.thread_id.clone();
        let settled = async move {
            if let Some(thread) = thread {
                crate::pregel::in_flight::settled(saver, &thread).await;
            }
        };
        stream::once(settled)
            .flat_map(move |()| saver.list_stream(Some(cfg.clone()), options.clone()))
            .map_err(Error::from)
            .and_then(move |t| {
                let graph = graph.clone();
                async move { snapshot(&graph, saver, t, false, false).await }
            })
            .boxed()
    }
}

/// The graph that owns a namespace: the root for `""`, else the subgraph reached by the
/// node names of its levels (task ids and numeric levels dropped).
fn graph_for_ns(root: &Arc<PregelGraph>, ns: &str) -> Result<Arc<PregelGraph>> {
    let mut graph = root.clone();
    if ns.is_empty() {
        return Ok(graph);
    }
    for level in ns.split('|') {
        if level.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let name = level.split(':').next().unwrap_or(level);
        let sub = graph
            .nodes
            .get(name)
            .and_then(|n| n.subgraph.clone())
            .ok_or_else(|| Error::InvalidGraph(format!("no subgraph for namespace {ns:?}")))?;
        graph = sub;
    }
    Ok(graph)
}

/// The snapshot at the checkpoint `cfg` addresses (an empty one for a new thread).
fn state_of(
    graph: Arc<PregelGraph>,
    saver: Arc<dyn CheckpointSaver>,
    cfg: CheckpointConfig,
    live: bool,
    subgraphs: bool,
) -> futures::future::BoxFuture<'static, Result<StateSnapshot>> {
    Box::pin(async move {
        match saver.get_tuple(&cfg).await? {
            Some(t) => snapshot(&graph, &saver, t, live, subgraphs).await,
            None if cfg.checkpoint_id.is_some() => Err(not_found(&cfg)),
            None => Ok(StateSnapshot {
                config: Some(cfg),
                ..Default::default()
            }),
        }
    })
}

/// The thread id of a config that addresses a thread's state; a config without one is
/// [`Error::InvalidConfig`].
fn thread_of(config: &crate::RunConfig) -> Result<&str> {
    config.thread_id.as_deref().ok_or_else(|| {
        Error::InvalidConfig(
            "reading or changing a thread's state needs a thread_id in the config".into(),
        )
    })
}

/// [`Error::CheckpointNotFound`] for the checkpoint `cfg` names.
fn not_found(cfg: &CheckpointConfig) -> Error {
    Error::CheckpointNotFound {
        thread_id: cfg.thread_id.clone(),
        checkpoint_id: cfg.checkpoint_id.clone().unwrap_or_default(),
    }
}

/// `config` of a stored checkpoint as a snapshot shows it: thread, namespace, id, and
/// `checkpoint_map` (ancestors plus itself) inside subgraphs.
fn snapshot_config(
    thread: &str,
    ns: &str,
    id: &str,
    parents: Option<&IndexMap<String, String>>,
) -> CheckpointConfig {
    let mut c = CheckpointConfig::for_checkpoint(thread, ns, id);
    if let Some(p) = parents.filter(|p| !p.is_empty()) {
        let mut map: stategraph_checkpoint::Map = p
            .iter()
            .map(|(k, v)| (Value::from(k.as_str()), Value::from(v.as_str())))
            .collect();
        map.insert(ns, id);
        c.configurable
            .insert("checkpoint_map".into(), Value::Map(map));
    }
    c
}

/// The live snapshot of a head a run left in the saver (`RunOutcome::head`): what
/// `get_state` builds from the same tuple.
pub(super) async fn head_snapshot(
    graph: &Arc<PregelGraph>,
    saver: &Arc<dyn CheckpointSaver>,
    head: CheckpointTuple,
) -> Result<StateSnapshot> {
    snapshot(graph, saver, head, true, false).await
}

async fn snapshot(
    graph: &Arc<PregelGraph>,
    saver: &Arc<dyn CheckpointSaver>,
    mut saved: CheckpointTuple,
    live: bool,
    subgraphs: bool,
) -> Result<StateSnapshot> {
    {
        let step = saved.metadata.step.unwrap_or(-1) + 1;
        let mut checkpoint = std::mem::replace(
            &mut saved.checkpoint,
            stategraph_checkpoint::Checkpoint::empty("", ""),
        );
        let created_at = checkpoint.ts.clone();
        let checkpoint_id = checkpoint.id.clone();
        let mut channels = crate::pregel::delta::load_channels(
            graph,
            &mut checkpoint,
            Some(saver.as_ref()),
            &saved.config,
        )
        .await?;
        let ns = saved.config.ns().to_owned();
        let mut tasks = prepare_task_ids(&checkpoint, graph, &channels, step, &ns, None)?;
        let pending: Vec<(String, String, Value)> = saved
            .pending_writes
            .iter()
            .map(|w| (w.task_id.clone(), w.channel.clone(), w.value.clone()))
            .collect();
        let null_writes: Vec<(String, Value)> = pending
            .iter()
            .filter(|w| w.0 == NULL_TASK_ID)
            .map(|w| (w.1.clone(), w.2.clone()))
            .collect();
        if !null_writes.is_empty() {
            let path = TaskPath::default();
            let t = TaskWrites {
                path: &path,
                name: "__input__",
                triggers: &[],
                writes: &null_writes,
            };
            apply_writes(
                &mut checkpoint,
                &mut channels,
                &[t],
                &int_versions,
                &graph.trigger_to_nodes,
            )?;
        }
        let statuses =
            read_task_statuses(pending.iter().map(|(t, c, v)| (t.as_str(), c.as_str(), v)));
        if live && !pending.is_empty() {
            for t in &mut tasks {
                if let Some(s) = statuses.get(&t.id) {
                    t.writes.extend(s.output.iter().cloned());
                }
            }
            let with_writes: Vec<TaskWrites<'_>> = tasks
                .iter()
                .filter(|t| !t.writes.is_empty())
                .map(TaskWrites::from)
                .collect();
            if !with_writes.is_empty() {
                apply_writes(
                    &mut checkpoint,
                    &mut channels,
                    &with_writes,
                    &int_versions,
                    &graph.trigger_to_nodes,
                )?;
            }
        }
        let thread = saved.config.thread_id.clone();
        let mut sub_states = IndexMap::new();
        for t in &tasks {
            let Some(sub) = graph.nodes.get(&t.name).and_then(|n| n.subgraph.clone()) else {
                continue;
            };
            let sub_cfg = CheckpointConfig::thread(thread.clone()).with_ns(t.ns.clone());
            let state = if subgraphs {
                TaskState::Snapshot(Box::new(
                    state_of(sub, saver.clone(), sub_cfg, live, true).await?,
                ))
            } else {
                TaskState::Config(Box::new(sub_cfg))
            };
            sub_states.insert(t.id.clone(), state);
        }
        let infos: Vec<TaskInfo> = tasks
            .iter()
            .map(|t| {
                let status = statuses.get(&t.id);
                let interrupts = status
                    .map(|s| {
                        if live && s.finished() {
                            Vec::new()
                        } else {
                            s.interrupts.clone()
                        }
                    })
                    .unwrap_or_default();
                TaskInfo {
                    id: t.id.clone(),
                    name: t.name.clone(),
                    path: t.path.clone(),
                    error: status.and_then(|s| s.error.clone()),
                    interrupts,
                    state: sub_states.get(&t.id).cloned(),
                    result: status.filter(|s| s.finished()).map(|s| {
                        let out: Vec<(String, Value)> = s
                            .output
                            .iter()
                            .filter(|(c, _)| graph.output_channels.contains(c))
                            .cloned()
                            .collect();
                        events::result_value(&out)
                    }),
                }
            })
            .collect();
        let interrupts = infos.iter().flat_map(|t| t.interrupts.clone()).collect();
        let parents = saved.metadata.parents.as_ref();
        let config = snapshot_config(&thread, saved.config.ns(), &checkpoint_id, parents);
        let parent_config = saved.parent_config.as_ref().and_then(|p| {
            p.checkpoint_id
                .as_ref()
                .map(|id| snapshot_config(&thread, saved.config.ns(), id, parents))
        });
        Ok(StateSnapshot {
            values: read_channels(&channels, &graph.output_channels),
            next: tasks
                .iter()
                .filter(|t| t.writes.is_empty())
                .map(|t| t.name.clone())
                .collect(),
            config: Some(config),
            metadata: Some(saved.metadata),
            created_at: Some(created_at),
            parent_config,
            tasks: infos,
            interrupts,
        })
    }
}

impl<S: State> CompiledGraph<S> {
    /// Changes the state of a thread as if node `as_node` had returned `values`: the
    /// node's writers run (edges and conditional edges fire as usual) and a checkpoint with
    /// source `update` is saved. `as_node = None` infers the node as LangGraph does. Returns
    /// the config of the new checkpoint. Waits while a run of the thread (in this process,
    /// on this saver) is under way or a dropped one is still storing its saves.
    pub async fn update_state(
        &self,
        config: impl AsRunConfig,
        values: impl IntoUpdate,
        as_node: Option<&str>,
    ) -> Result<CheckpointConfig> {
        let config = &self.resolve(config);
        let saver = self.saver()?.clone();
        let graph = self.graph.clone();
        thread_of(config)?;
        let cfg = config.checkpoint_config("");
        // Like a run: waits until the saves of a dropped run of the thread are stored.
        let _lease = match &config.thread_id {
            Some(thread_id) => Some(crate::pregel::lease::acquire(&saver, thread_id).await),
            None => None,
        };
        let saved = saver.get_tuple(&cfg).await?;
        if saved.is_none() && cfg.checkpoint_id.is_some() {
            return Err(not_found(&cfg));
        }
        let superseded = match (&saved, &config.checkpoint_id) {
            (Some(t), Some(_)) => superseded(saver.as_ref(), &cfg, &t.checkpoint.id).await?,
            _ => false,
        };
        let mut checkpoint = match &saved {
            Some(t) => t.checkpoint.clone(),
            None => stategraph_checkpoint::Checkpoint::empty(
                self.sources.ids().uuid6(-2),
                self.sources.ts(),
            ),
        };
        let previous: ChannelVersions = checkpoint.channel_versions.clone();
        let step = saved.as_ref().and_then(|t| t.metadata.step).unwrap_or(-1);
        let mut checkpoint_config = cfg.clone();
        if let Some(t) = &saved {
            checkpoint_config.checkpoint_id = Some(t.checkpoint.id.clone());
        }
        let channels = crate::pregel::delta::load_channels(
            &graph,
            &mut checkpoint,
            Some(saver.as_ref()),
            &checkpoint_config,
        )
        .await?;

        let as_node = match as_node {
            Some(n) => n.to_owned(),
            None => infer_as_node(
                &graph,
                &crate::pregel::delta::versions_seen_without_bumps(&checkpoint.versions_seen),
            )
            .ok_or_else(|| Error::InvalidUpdate("Ambiguous update, specify as_node".into()))?,
        };
        let node = graph
            .nodes
            .get(&as_node)
            .ok_or_else(|| Error::UnknownNode {
                node: as_node.clone(),
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

        let mut prepared_id = None;
        if let Some(t) = &saved {
            let tasks = prepare_task_ids(&checkpoint, &graph, &channels, step + 1, "", None)?;
            prepared_id = tasks.into_iter().find(|t| t.name == as_node).map(|t| t.id);
            let _ = t;
        }
        let task_id = match prepared_id {
            Some(id) => id,
            None => update_task_id(&checkpoint.id, 0),
        };
        let channels = Arc::new(channels);
        let ctx = NodeContext::detached(task_id.clone(), as_node.clone(), step, channels.clone());
        let output = NodeOutput {
            writes: values,
            goto: Vec::new(),
        };
        let writes =
            (node.writers)(output, &ctx).map_err(|e| Error::InvalidUpdate(e.to_string()))?;
        if !lenient {
            crate::pregel::targets::check_targets(&graph, "update_state", &writes)?;
        }
        drop(ctx);
        let mut channels = Arc::try_unwrap(channels).unwrap_or_else(|a| (*a).clone());
        let path = TaskPath(vec![
            PathPart::Str("__interrupt__".into()),
            PathPart::Int(0),
        ]);
        if saved.is_some() && !superseded {
            let stored: Vec<(String, Value)> = writes
                .iter()
                .filter(|(c, _)| c != crate::pregel::task::PUSH)
                .cloned()
                .collect();
            if !stored.is_empty() {
                saver
                    .put_writes(
                        &checkpoint_config,
                        &stored,
                        &task_id,
                        &path.to_path_string(),
                    )
                    .await?;
            }
        }
        let triggers = vec!["__interrupt__".to_owned()];
        let task = TaskWrites {
            path: &path,
            name: &as_node,
            triggers: &triggers,
            writes: &writes,
        };
        // DeltaChannels this update must snapshot (docs/format.md#deltachannel): those the saved
        // checkpoint
        // has writes for (they belong to another child), those overwritten, and, when
        // the thread moved past the checkpoint, those written (their writes are not
        // stored on it).
        let mut fork = crate::pregel::delta::delta_channels_in(
            &graph,
            saved
                .iter()
                .flat_map(|t| t.pending_writes.iter().map(|w| w.channel.as_str())),
        );
        fork.extend(crate::pregel::delta::overwritten(
            &graph,
            writes.iter().map(|(c, v)| (c.as_str(), v)),
        ));
        if superseded {
            fork.extend(crate::pregel::delta::delta_channels_in(
                &graph,
                writes.iter().map(|(c, _)| c.as_str()),
            ));
        }
        let next = |c: Option<&ChannelVersion>| saver.get_next_version(c);
        apply_writes(
            &mut checkpoint,
            &mut channels,
            &[task],
            &next,
            &graph.trigger_to_nodes,
        )?;
        let parents = saved
            .as_ref()
            .and_then(|t| t.metadata.parents.clone())
            .unwrap_or_default();
        let metadata = CheckpointMetadata {
            source: Some(CheckpointSource::Update),
            step: Some(step + 1),
            parents: Some(parents),
            extra: IndexMap::new(),
        };
        let ts = self.sources.ts();
        let id = self.sources.ids().uuid6(step + 1);
        let mut next_checkpoint = create_checkpoint(checkpoint, &channels, id, ts, None);
        let mut metadata = metadata;
        if crate::pregel::delta::has_delta_channels(&graph) {
            use crate::pregel::delta as d;
            let to_snapshot = match &saved {
                // A fresh thread snapshots every delta channel it wrote.
                None => d::due_by_counters(
                    &channels,
                    &d::Counters::new(),
                    &next_checkpoint.channel_versions,
                )
                .into_iter()
                .chain(
                    channels
                        .iter()
                        .filter(|(k, c)| {
                            c.delta_snapshot_frequency().is_some()
                                && c.is_available()
                                && next_checkpoint.channel_versions.contains_key(*k)
                        })
                        .map(|(k, _)| k.clone()),
                )
                .collect(),
                Some(t) => {
                    let updated: std::collections::BTreeSet<String> = writes
                        .iter()
                        .filter(|(c, _)| c != crate::pregel::task::PUSH)
                        .map(|(c, _)| c.clone())
                        .collect();
                    let counters =
                        d::advance_counters(&graph, &d::read_counters(&t.metadata), Some(&updated));
                    let mut due =
                        d::due_by_counters(&channels, &counters, &next_checkpoint.channel_versions);
                    due.extend(fork);
                    d::write_counters(&mut metadata, counters, &due);
                    due
                }
            };
            d::apply_snapshots(
                &mut next_checkpoint,
                &channels,
                &to_snapshot,
                &previous,
                &next,
                &graph.trigger_to_nodes,
            );
        }
        let new_versions = new_versions(&previous, &next_checkpoint.channel_versions);
        if superseded {
            checkpoint_config.configurable.insert(
                stategraph_checkpoint::CONFIG_KEY_BRANCH.into(),
                Value::Bool(true),
            );
        }
        let mut stored = saver
            .put(
                &checkpoint_config,
                &next_checkpoint,
                &metadata,
                &new_versions,
            )
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

/// The node an update without `as_node` is attributed to (LangGraph's `_infer_as_node`).
fn infer_as_node(
    graph: &crate::pregel::graph::PregelGraph,
    versions_seen: &IndexMap<String, ChannelVersions>,
) -> Option<String> {
    if graph.nodes.len() == 1 {
        return graph.nodes.keys().next().cloned();
    }
    let mut seen: Vec<(&ChannelVersion, &String)> = versions_seen
        .iter()
        .filter(|(n, _)| graph.nodes.contains_key(*n))
        .flat_map(|(n, s)| s.values().map(move |v| (v, n)))
        .collect();
    if seen.is_empty() {
        return Some("__start__".to_owned());
    }
    seen.sort();
    match seen.len() {
        1 => Some(seen[0].1.clone()),
        n if seen[n - 1].0 != seen[n - 2].0 => Some(seen[n - 1].1.clone()),
        _ => None,
    }
}
