//! The pure super-step algorithm: which tasks run next, and how their writes change the
//! channels (docs/runtime.md#preparing-tasks, #applying-writes, #saving-a-checkpoint). No I/O
//! happens here: the loop (`run_loop/`) loads
//! and saves, this module only computes, so every rule is unit-testable.

use std::collections::{BTreeSet, HashSet};

use indexmap::IndexMap;
use stategraph_checkpoint::version::NameHasher;
use stategraph_checkpoint::{ChannelVersion, ChannelVersions, Checkpoint, Value};

use super::graph::{PregelGraph, Reads};
use super::task::{checkpoint_id_bytes, task_id, Task, TaskPath, PULL, PUSH, TASKS};
use crate::channels::Channels;
use crate::error::{Error, Result};
use crate::types::Send;

/// Pseudo-channels that are write tags, never applied to channels (docs/format.md#reserved-names).
pub const WRITE_TAGS: [&str; 7] = [
    "__no_writes__",
    PUSH,
    "__resume__",
    "__interrupt__",
    "__return__",
    "__error__",
    "__error_source_node__",
];

/// Channels that are never consumed as triggers.
const RESERVED_TRIGGERS: [&str; 2] = ["__interrupt__", PUSH];

/// What `apply_writes` needs of a task.
pub struct TaskWrites<'a> {
    /// The task's path (tasks are applied in path-string order).
    pub path: &'a TaskPath,
    /// The node name (its `versions_seen` entry).
    pub name: &'a str,
    /// Its triggers.
    pub triggers: &'a [String],
    /// Its writes.
    pub writes: &'a [(String, Value)],
}

impl<'a> From<&'a Task> for TaskWrites<'a> {
    fn from(t: &'a Task) -> Self {
        TaskWrites {
            path: &t.path,
            name: &t.name,
            triggers: &t.triggers,
            writes: &t.writes,
        }
    }
}

/// The "null version" of a checkpoint: the empty value of its version type.
fn null_version(checkpoint: &Checkpoint) -> Option<ChannelVersion> {
    checkpoint
        .channel_versions
        .values()
        .next()
        .map(|v| match v {
            ChannelVersion::Int(_) => ChannelVersion::Int(0),
            ChannelVersion::Str(_) => ChannelVersion::Str(String::new()),
        })
}

/// Prepares the tasks of the next super-step: push tasks for pending Sends, then pull
/// tasks for triggered nodes (docs/runtime.md#preparing-tasks).
pub fn prepare_next_tasks(
    checkpoint: &Checkpoint,
    graph: &PregelGraph,
    channels: &Channels,
    step: i64,
    parent_ns: &str,
    updated_channels: Option<&BTreeSet<String>>,
) -> Result<Vec<Task>> {
    prepare_tasks(
        checkpoint,
        graph,
        channels,
        step,
        parent_ns,
        updated_channels,
        true,
    )
}

/// [`prepare_next_tasks`] without building the tasks' inputs (`Value::Nil` instead): for
/// callers that only need which tasks run and their ids (state snapshots, discarded tasks),
/// where copying the state into every input would be wasted.
pub fn prepare_task_ids(
    checkpoint: &Checkpoint,
    graph: &PregelGraph,
    channels: &Channels,
    step: i64,
    parent_ns: &str,
    updated_channels: Option<&BTreeSet<String>>,
) -> Result<Vec<Task>> {
    prepare_tasks(
        checkpoint,
        graph,
        channels,
        step,
        parent_ns,
        updated_channels,
        false,
    )
}

fn prepare_tasks(
    checkpoint: &Checkpoint,
    graph: &PregelGraph,
    channels: &Channels,
    step: i64,
    parent_ns: &str,
    updated_channels: Option<&BTreeSet<String>>,
    with_input: bool,
) -> Result<Vec<Task>> {
    let ids = StepIds {
        checkpoint: checkpoint_id_bytes(&checkpoint.id),
        step: step.to_string(),
        parent_ns,
        with_input,
    };
    let mut tasks = Vec::new();
    push_tasks(graph, channels, &ids, &mut tasks);
    let Some(null) = null_version(checkpoint) else {
        return Ok(tasks);
    };
    for name in pull_candidates(graph, updated_channels) {
        let Some(node) = graph.nodes.get(name) else {
            continue;
        };
        if !triggered(channels, checkpoint, name, &node.triggers, &null) {
            continue;
        }
        let Some(input) = pull_input(channels, &node.reads, with_input) else {
            continue;
        };
        let mut triggers = node.triggers.clone();
        triggers.sort();
        let node_ns = node_namespace(parent_ns, name);
        let mut parts: Vec<&str> = vec![&node_ns, &ids.step, name, PULL];
        parts.extend(triggers.iter().map(String::as_str));
        let id = task_id(&ids.checkpoint, &parts);
        tasks.push(Task {
            ns: format!("{node_ns}:{id}"),
            id,
            name: name.to_owned(),
            path: TaskPath::pull(name),
            triggers,
            input,
            writes: Vec::new(),
        });
    }
    Ok(tasks)
}

/// What the ids of a step's tasks are made of, and whether their inputs are built.
struct StepIds<'a> {
    /// The bytes of the checkpoint the tasks are prepared from.
    checkpoint: [u8; 16],
    /// The step, as the decimal string the ids hash.
    step: String,
    /// The graph's checkpoint namespace.
    parent_ns: &'a str,
    /// Build the tasks' inputs (otherwise `Value::Nil`).
    with_input: bool,
}

/// Appends a push task for each pending `Send` (to a node that runs), in packet order.
fn push_tasks(graph: &PregelGraph, channels: &Channels, ids: &StepIds<'_>, tasks: &mut Vec<Task>) {
    let Some(tasks_channel) = channels.get(TASKS) else {
        return;
    };
    if !tasks_channel.is_available() {
        return;
    }
    let Some(Value::List(packets)) = tasks_channel.get() else {
        return;
    };
    for (idx, packet) in packets.iter().enumerate() {
        let Some(send) = Send::from_value(packet) else {
            tracing::warn!("ignoring an invalid packet in pending sends");
            continue;
        };
        let Some(node) = graph.nodes.get(&send.node) else {
            tracing::warn!(node = %send.node, "ignoring a Send to an unknown node");
            continue;
        };
        if node.run.is_none() {
            continue;
        }
        let node_ns = node_namespace(ids.parent_ns, &send.node);
        let idx_str = idx.to_string();
        let id = task_id(
            &ids.checkpoint,
            &[&node_ns, &ids.step, &send.node, PUSH, &idx_str],
        );
        tasks.push(Task {
            ns: format!("{node_ns}:{id}"),
            id,
            name: send.node.clone(),
            path: TaskPath::push(idx),
            triggers: vec![PUSH.to_owned()],
            input: if ids.with_input { send.arg } else { Value::Nil },
            writes: Vec::new(),
        });
    }
}

/// The nodes that may have a pull task: those the updated channels trigger, in name
/// order, or every node (in graph order) when the updated channels are unknown.
fn pull_candidates<'g>(
    graph: &'g PregelGraph,
    updated_channels: Option<&BTreeSet<String>>,
) -> Vec<&'g str> {
    match updated_channels {
        Some(updated) if !updated.is_empty() => {
            let mut set = BTreeSet::new();
            for c in updated {
                if let Some(nodes) = graph.trigger_to_nodes.get(c) {
                    set.extend(nodes.iter().map(String::as_str));
                }
            }
            set.into_iter().collect()
        }
        _ => graph.nodes.keys().map(String::as_str).collect(),
    }
}

/// A pull task's input: its channel's value or the map of its available channels
/// (`Value::Nil` without inputs); `None` when it reads one channel and that is empty
/// (no task).
fn pull_input(channels: &Channels, reads: &Reads, with_input: bool) -> Option<Value> {
    match reads {
        Reads::Single(c) => match channels.get(c).filter(|ch| ch.is_available()) {
            Some(ch) if with_input => Some(ch.get().unwrap_or_default()),
            Some(_) => Some(Value::Nil),
            None => None,
        },
        Reads::Many(_) if !with_input => Some(Value::Nil),
        Reads::Many(list) => {
            let mut m = stategraph_checkpoint::Map::with_capacity(list.len());
            for c in list {
                if let Some(ch) = channels.get(c) {
                    if ch.is_available() {
                        m.insert(c.as_str(), ch.get().unwrap_or_default());
                    }
                }
            }
            Some(Value::Map(m))
        }
    }
}

/// `node` at the root, `parent_ns|node` inside a subgraph.
pub fn node_namespace(parent_ns: &str, node: &str) -> String {
    if parent_ns.is_empty() {
        node.to_owned()
    } else {
        format!("{parent_ns}|{node}")
    }
}

fn triggered(
    channels: &Channels,
    checkpoint: &Checkpoint,
    name: &str,
    triggers: &[String],
    null: &ChannelVersion,
) -> bool {
    let available = |c: &String| channels.get(c).is_some_and(|ch| ch.is_available());
    match checkpoint.versions_seen.get(name) {
        None => triggers.iter().any(available),
        Some(seen) => triggers.iter().any(|c| {
            available(c)
                && checkpoint.channel_versions.get(c).unwrap_or(null) > seen.get(c).unwrap_or(null)
        }),
    }
}

/// Applies the writes of a super-step's tasks to the channels and the checkpoint's
/// versions; returns the channels updated and available afterwards
/// (docs/runtime.md#applying-writes).
pub fn apply_writes(
    checkpoint: &mut Checkpoint,
    channels: &mut Channels,
    tasks: &[TaskWrites<'_>],
    next_version: &dyn Fn(Option<&ChannelVersion>) -> ChannelVersion,
    trigger_to_nodes: &IndexMap<String, Vec<String>>,
) -> Result<BTreeSet<String>> {
    let tasks: Vec<&TaskWrites<'_>> = if tasks.len() < 2 {
        tasks.iter().collect()
    } else {
        let mut order: Vec<(String, usize)> = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.path.to_path_string(), i))
            .collect();
        order.sort();
        order.iter().map(|(_, i)| &tasks[*i]).collect()
    };
    let bump_step = tasks.iter().any(|t| !t.triggers.is_empty());
    mark_seen(checkpoint, &tasks);
    let next = next_version(checkpoint.channel_versions.values().max());
    consume_triggers(checkpoint, channels, &tasks, &next);
    let mut updated = update_channels(checkpoint, channels, &tasks, &next)?;
    if bump_step {
        for (c, ch) in channels.iter_mut() {
            if ch.is_available() && !updated.contains(c) {
                let changed = ch
                    .update(Vec::new())
                    .map_err(|e| Error::InvalidUpdate(format!("At key '{c}': {e}")))?;
                if changed {
                    checkpoint.channel_versions.insert(c.clone(), next.clone());
                    if ch.is_available() {
                        updated.insert(c.clone());
                    }
                }
            }
        }
    }
    if bump_step && !updated.iter().any(|c| trigger_to_nodes.contains_key(c)) {
        for (c, ch) in channels.iter_mut() {
            if ch.finish() {
                checkpoint.channel_versions.insert(c.clone(), next.clone());
                if ch.is_available() {
                    updated.insert(c.clone());
                }
            }
        }
    }
    Ok(updated)
}

/// Each task's node has seen the current versions of its triggers.
fn mark_seen(checkpoint: &mut Checkpoint, tasks: &[&TaskWrites<'_>]) {
    for t in tasks {
        // A node that ran before has its entry: update it without copying its name again.
        if !checkpoint.versions_seen.contains_key(t.name) {
            checkpoint
                .versions_seen
                .insert(t.name.to_owned(), ChannelVersions::default());
        }
        let Some(seen) = checkpoint.versions_seen.get_mut(t.name) else {
            continue;
        };
        for c in t.triggers {
            if let Some(v) = checkpoint.channel_versions.get(c) {
                match seen.get_mut(c) {
                    Some(old) => *old = v.clone(),
                    None => {
                        seen.insert(c.clone(), v.clone());
                    }
                }
            }
        }
    }
}

/// Consumes the tasks' triggers (once each, reserved ones never); a channel that changes
/// by it gets version `next`.
fn consume_triggers(
    checkpoint: &mut Checkpoint,
    channels: &mut Channels,
    tasks: &[&TaskWrites<'_>],
    next: &ChannelVersion,
) {
    let mut consumed: HashSet<&str, NameHasher> = HashSet::default();
    for t in tasks {
        for c in t.triggers {
            if !RESERVED_TRIGGERS.contains(&c.as_str()) && consumed.insert(c) {
                if let Some(ch) = channels.get_mut(c) {
                    if ch.consume() {
                        checkpoint.channel_versions.insert(c.clone(), next.clone());
                    }
                }
            }
        }
    }
}

/// Updates each written channel with its writes, in task order (write tags and unknown
/// channels skipped); a changed channel gets version `next`. Returns the changed channels
/// that are available.
fn update_channels(
    checkpoint: &mut Checkpoint,
    channels: &mut Channels,
    tasks: &[&TaskWrites<'_>],
    next: &ChannelVersion,
) -> Result<BTreeSet<String>> {
    let mut by_channel: IndexMap<&str, Vec<Value>, NameHasher> = IndexMap::default();
    for t in tasks {
        for (c, v) in t.writes {
            if WRITE_TAGS.contains(&c.as_str()) {
                continue;
            }
            if channels.contains_key(c) {
                by_channel.entry(c.as_str()).or_default().push(v.clone());
            } else {
                tracing::warn!(task = t.name, channel = %c, "write to an unknown channel ignored");
            }
        }
    }
    let mut updated = BTreeSet::new();
    for (c, values) in by_channel {
        let Some(ch) = channels.get_mut(c) else {
            continue;
        };
        let changed = ch
            .update(values)
            .map_err(|e| Error::InvalidUpdate(format!("At key '{c}': {e}")))?;
        if changed {
            checkpoint
                .channel_versions
                .insert(c.to_owned(), next.clone());
            if ch.is_available() {
                updated.insert(c.to_owned());
            }
        }
    }
    Ok(updated)
}

/// The checkpoint that follows `checkpoint` after a step: new id and timestamp, the values
/// of every versioned channel that has one, versions copied (docs/runtime.md#saving-a-checkpoint).
pub fn create_checkpoint(
    checkpoint: Checkpoint,
    channels: &Channels,
    id: String,
    ts: String,
    updated_channels: Option<&BTreeSet<String>>,
) -> Checkpoint {
    // Sized as it fills: most channels of a wide graph are empty triggers.
    let mut values = IndexMap::new();
    for (k, ch) in channels {
        // Most channels of a graph are empty triggers: ask the channel first, and look
        // the version up only for those with a value.
        if let Some(v) = ch.checkpoint() {
            if checkpoint.channel_versions.contains_key(k) {
                values.insert(k.clone(), v);
            }
        }
    }
    Checkpoint {
        v: stategraph_checkpoint::CHECKPOINT_FORMAT,
        ts,
        id,
        channel_values: values,
        channel_versions: checkpoint.channel_versions,
        versions_seen: checkpoint.versions_seen,
        updated_channels: updated_channels.map(|u| u.iter().cloned().collect()),
        pending_sends: None,
        extra: IndexMap::new(),
    }
}

/// The values of the available channels among `keys`, in `keys` order (LangGraph's
/// `read_channels`): what a run returns and a snapshot shows.
pub fn read_channels(channels: &Channels, keys: &[String]) -> IndexMap<String, Value> {
    let mut out = IndexMap::new();
    for k in keys {
        if let Some(ch) = channels.get(k).filter(|c| c.is_available()) {
            out.insert(k.clone(), ch.get().unwrap_or_default());
        }
    }
    out
}

/// The versions of `current` that are newer than in `previous`: the channels whose values a
/// saver must store for a new checkpoint (docs/format.md#channel-versions).
pub fn new_versions(previous: &ChannelVersions, current: &ChannelVersions) -> ChannelVersions {
    current
        .iter()
        .filter(|(k, v)| previous.get(*k).is_none_or(|p| *v > p))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// [`new_versions`] of `current` against `previous`, and `previous` brought up to
/// `current` in the same pass: the writer's bookkeeping of the versions it last handed to
/// its saver. Only the entries that changed are copied, where assigning `current` to
/// `previous` would copy every channel name and version at every step.
///
/// A run only adds channels to its versions, at the end, and `previous` receives them in
/// the same order, so the entry at each index of `previous` is usually the same channel as
/// in `current`: that entry is compared in place, without a hash lookup. `previous` ends
/// with the same entries as `current` (in another order when the two diverged; it is only
/// ever looked up).
pub fn advance_versions(
    previous: &mut ChannelVersions,
    current: &ChannelVersions,
) -> ChannelVersions {
    let mut new = ChannelVersions::default();
    for (i, (k, v)) in current.iter().enumerate() {
        let slot = match previous.get_index_mut(i) {
            Some((pk, pv)) if pk == k => Some(pv),
            _ => previous.get_mut(k),
        };
        match slot {
            // Most channels did not change: one equality test, no ordering.
            Some(p) if p == v => {}
            Some(p) => {
                if v > p {
                    new.insert(k.clone(), v.clone());
                }
                *p = v.clone();
            }
            None => {
                new.insert(k.clone(), v.clone());
                previous.insert(k.clone(), v.clone());
            }
        }
    }
    if previous.len() != current.len() {
        previous.retain(|k, _| current.contains_key(k));
    }
    new
}

/// Builds live channels from a checkpoint's values (docs/runtime.md#loading-and-input).
///
/// The values move out of `checkpoint.channel_values` into the channels (which hold the
/// state from then on), so the map is empty afterwards: no copy of the state is made.
pub fn channels_from_checkpoint(
    graph: &PregelGraph,
    checkpoint: &mut Checkpoint,
) -> Result<Channels> {
    let mut values = std::mem::take(&mut checkpoint.channel_values);
    let mut out = Channels::with_capacity_and_hasher(graph.channels.len(), NameHasher::default());
    for (k, spec) in &graph.channels {
        let ch = spec
            .from_checkpoint(values.swap_remove(k))
            .map_err(|e| Error::InvalidUpdate(format!("At key '{k}': {e}")))?;
        out.insert(k.clone(), ch);
    }
    Ok(out)
}

/// `should_interrupt`: the tasks named in `nodes` (or all visible ones for `*`), if any
/// channel changed since the last interrupt bookkeeping (docs/runtime.md#breakpoints).
pub fn should_interrupt<'t>(
    checkpoint: &Checkpoint,
    nodes: &[String],
    tasks: &'t [Task],
    hidden: &dyn Fn(&str) -> bool,
) -> Vec<&'t Task> {
    let seen = checkpoint.versions_seen.get("__interrupt__");
    let null = null_version(checkpoint);
    let any_updates = checkpoint.channel_versions.iter().any(|(c, v)| {
        match seen.and_then(|s| s.get(c)).or(null.as_ref()) {
            Some(s) => v > s,
            None => true,
        }
    });
    if !any_updates {
        return Vec::new();
    }
    tasks
        .iter()
        .filter(|t| {
            if nodes.iter().any(|n| n == "*") {
                !hidden(&t.name)
            } else {
                nodes.contains(&t.name)
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "algo_tests.rs"]
mod tests;
