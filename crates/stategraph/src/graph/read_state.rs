//! A [`StateSnapshot`] built from a stored checkpoint: its channels with the stored
//! writes applied, the tasks of its next step with their status, the subgraphs' states.
//! What `get_state`, `get_state_history` and a run's final head read; below
//! `state_api.rs`, `update_state.rs` and `run_stream.rs`.

use std::sync::Arc;

use indexmap::IndexMap;
use stategraph_checkpoint::{
    ChannelVersion, Checkpoint, CheckpointConfig, CheckpointSaver, CheckpointTuple, Value,
    NULL_TASK_ID,
};

use crate::channels::Channels;
use crate::error::{Error, Result};
use crate::pregel::algo::{apply_writes, prepare_task_ids, read_channels, TaskWrites};
use crate::pregel::events;
use crate::pregel::graph::PregelGraph;
use crate::pregel::snapshot::{StateSnapshot, TaskInfo, TaskState};
use crate::pregel::status::{read_task_statuses, TaskStatus};
use crate::pregel::task::Task;
use crate::pregel::task::TaskPath;

/// Integer channel versions, as a snapshot's applied writes count them.
fn int_versions(current: Option<&ChannelVersion>) -> ChannelVersion {
    stategraph_checkpoint::version_gen::next_int_version(current)
}

/// The snapshot at the checkpoint `cfg` addresses (an empty one for a new thread).
pub(super) fn state_of(
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

/// [`Error::CheckpointNotFound`] for the checkpoint `cfg` names.
pub(super) fn not_found(cfg: &CheckpointConfig) -> Error {
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

/// The snapshot of a stored checkpoint: its channels with the pending writes applied
/// (`live`: the finished tasks' output too), the tasks of its next step with their
/// status, and the subgraph states of those tasks (whole with `subgraphs`).
pub(super) async fn snapshot(
    graph: &Arc<PregelGraph>,
    saver: &Arc<dyn CheckpointSaver>,
    mut saved: CheckpointTuple,
    live: bool,
    subgraphs: bool,
) -> Result<StateSnapshot> {
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
    let statuses = read_task_statuses(pending.iter().map(|(t, c, v)| (t.as_str(), c.as_str(), v)));
    let mut state = StepState {
        graph,
        checkpoint: &mut checkpoint,
        channels: &mut channels,
    };
    state.apply_null_writes(&pending)?;
    if live && !pending.is_empty() {
        state.apply_finished(&mut tasks, &statuses)?;
    }
    let thread = saved.config.thread_id.clone();
    let sub_states = sub_states(graph, saver, &tasks, &thread, live, subgraphs).await?;
    let infos = task_infos(graph, &tasks, &statuses, &sub_states, live);
    let interrupts = infos.iter().flat_map(|t| t.interrupts.clone()).collect();
    let parents = saved.metadata.parents.as_ref();
    let config = snapshot_config(&thread, saved.config.ns(), &checkpoint_id, parents);
    let parent_config = saved.parent_config.as_ref().and_then(|p| {
        p.checkpoint_id
            .as_ref()
            .map(|id| snapshot_config(&thread, saved.config.ns(), id, parents))
    });
    Ok(StateSnapshot {
        values: read_channels(&channels, &graph.stream_channels),
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

/// A checkpoint and its live channels, as a snapshot applies stored writes to them.
struct StepState<'a> {
    graph: &'a PregelGraph,
    checkpoint: &'a mut Checkpoint,
    channels: &'a mut Channels,
}

impl StepState<'_> {
    /// Applies the writes stored without a task (`NULL_TASK_ID`: an `update_state` with
    /// no node, a resume's input) as the `__input__` task.
    fn apply_null_writes(&mut self, pending: &[(String, String, Value)]) -> Result<()> {
        let null_writes: Vec<(String, Value)> = pending
            .iter()
            .filter(|w| w.0 == NULL_TASK_ID)
            .map(|w| (w.1.clone(), w.2.clone()))
            .collect();
        if null_writes.is_empty() {
            return Ok(());
        }
        let path = TaskPath::default();
        let t = TaskWrites {
            path: &path,
            name: "__input__",
            triggers: &[],
            writes: &null_writes,
        };
        self.apply(&[t])
    }

    /// Gives each task the output its stored status holds and applies the writes of those
    /// that have some: what a live snapshot shows of tasks that already finished.
    fn apply_finished(
        &mut self,
        tasks: &mut [Task],
        statuses: &IndexMap<String, TaskStatus>,
    ) -> Result<()> {
        for t in tasks.iter_mut() {
            if let Some(s) = statuses.get(&t.id) {
                t.writes.extend(s.output.iter().cloned());
            }
        }
        let with_writes: Vec<TaskWrites<'_>> = tasks
            .iter()
            .filter(|t| !t.writes.is_empty())
            .map(TaskWrites::from)
            .collect();
        if with_writes.is_empty() {
            return Ok(());
        }
        self.apply(&with_writes)
    }

    fn apply(&mut self, tasks: &[TaskWrites<'_>]) -> Result<()> {
        apply_writes(
            self.checkpoint,
            self.channels,
            tasks,
            &int_versions,
            &self.graph.trigger_to_nodes,
        )?;
        Ok(())
    }
}

/// The state of each task that runs a subgraph, by task id: the subgraph's whole
/// snapshot with `subgraphs`, else the config that reads it.
async fn sub_states(
    graph: &PregelGraph,
    saver: &Arc<dyn CheckpointSaver>,
    tasks: &[Task],
    thread: &str,
    live: bool,
    subgraphs: bool,
) -> Result<IndexMap<String, TaskState>> {
    let mut sub_states = IndexMap::new();
    for t in tasks {
        let Some(sub) = graph.nodes.get(&t.name).and_then(|n| n.subgraph.clone()) else {
            continue;
        };
        let sub_cfg = CheckpointConfig::thread(thread.to_owned()).with_ns(t.ns.clone());
        let state = if subgraphs {
            TaskState::Snapshot(Box::new(
                state_of(sub, saver.clone(), sub_cfg, live, true).await?,
            ))
        } else {
            TaskState::Config(Box::new(sub_cfg))
        };
        sub_states.insert(t.id.clone(), state);
    }
    Ok(sub_states)
}

/// What a snapshot shows of each task: its error, its interrupts (none in a live
/// snapshot once it finished), its subgraph state and, once finished, its result.
fn task_infos(
    graph: &PregelGraph,
    tasks: &[Task],
    statuses: &IndexMap<String, TaskStatus>,
    sub_states: &IndexMap<String, TaskState>,
    live: bool,
) -> Vec<TaskInfo> {
    tasks
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
                        .filter(|(c, _)| graph.stream_channels.contains(c))
                        .cloned()
                        .collect();
                    events::result_value(&out)
                }),
            }
        })
        .collect()
}
