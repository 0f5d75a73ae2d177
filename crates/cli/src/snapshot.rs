//! What a checkpoint says about its thread without the graph: the state values, the nodes
//! that run next, the interrupts, as LangGraph's `StateSnapshot` has them.
//!
//! Without the graph some fields are derived from the checkpoint alone:
//!
//! * `values` are the channels whose names are state keys: every channel except
//!   LangGraph's internal ones (names starting with `__`, or holding a `:` such as
//!   `branch:to:node`). NULL-task writes (client commands) are listed with the pending
//!   writes, not applied (applying them needs the graph's reducers).
//! * `next` lists the nodes that `prepare_next_tasks` would run: the targets of pending
//!   `Send`s (channel `__pregel_tasks`), then every node `N` whose trigger channel
//!   (`branch:to:N`, or `__start__` for the start node) holds a value at a version the
//!   node has not seen, in name order (Python orders them as the graph declares its nodes).
//! * `interrupts` are the `Interrupt`s of the `__interrupt__` writes (every recorded one).

use serde_json::{json, Value as Json};
use stategraph_checkpoint::{Checkpoint, CheckpointConfig, CheckpointTuple, PendingWrite, Value};

use crate::render::to_json;

/// The channel of interrupt writes.
pub const INTERRUPT: &str = "__interrupt__";
/// The channel of resume writes.
pub const RESUME: &str = "__resume__";
/// The channel pending `Send`s are stored in.
const TASKS: &str = "__pregel_tasks";

/// Whether a channel is a state key (not one of LangGraph's internal channels).
pub fn is_state_channel(name: &str) -> bool {
    !name.starts_with("__") && !name.contains(':')
}

/// The nodes that run next from this checkpoint (see the module).
pub fn next(cp: &Checkpoint) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(sends) = cp.channel_values.get(TASKS).and_then(Value::as_list) {
        for send in sends {
            if let Some((node, _)) = send.as_send() {
                out.push(node.to_owned());
            }
        }
    }
    let mut pull: Vec<String> = Vec::new();
    for (channel, _) in &cp.channel_values {
        let node = if channel == "__start__" {
            "__start__"
        } else if let Some(node) = channel.strip_prefix("branch:to:") {
            node
        } else {
            continue;
        };
        let Some(version) = cp.channel_versions.get(channel) else {
            continue;
        };
        let seen = cp
            .versions_seen
            .get(node)
            .and_then(|seen| seen.get(channel));
        if seen.is_none_or(|s| version > s) {
            pull.push(node.to_owned());
        }
    }
    pull.sort();
    pull.dedup();
    out.extend(pull);
    out
}

/// The interrupts recorded in `writes`: `(value, id)`.
pub fn interrupts(writes: &[PendingWrite]) -> Vec<(&Value, &str)> {
    let mut out = Vec::new();
    for w in writes.iter().filter(|w| w.channel == INTERRUPT) {
        match w.value.as_list() {
            Some(items) => out.extend(items.iter().filter_map(Value::as_interrupt)),
            None => out.extend(w.value.as_interrupt()),
        }
    }
    out
}

/// Whether the thread waits on an interrupt at this checkpoint: an interrupt was
/// recorded and no resume value was written since.
pub fn paused(writes: &[PendingWrite]) -> bool {
    writes.iter().any(|w| w.channel == INTERRUPT) && !writes.iter().any(|w| w.channel == RESUME)
}

/// A config as JSON (`thread_id`, `checkpoint_ns`, `checkpoint_id`).
pub fn config_json(config: &CheckpointConfig) -> Json {
    json!({
        "thread_id": config.thread_id,
        "checkpoint_ns": config.ns(),
        "checkpoint_id": config.checkpoint_id,
    })
}

/// The state values of a checkpoint as a JSON object.
pub fn values_json(cp: &Checkpoint) -> Json {
    let mut values = serde_json::Map::new();
    for (name, value) in &cp.channel_values {
        if is_state_channel(name) {
            values.insert(name.clone(), to_json(value));
        }
    }
    Json::Object(values)
}

/// The whole snapshot as JSON: `config`, `parent_config`, `created_at`, `metadata`,
/// `next`, `values`, `interrupts`, `writes`.
pub fn snapshot_json(t: &CheckpointTuple) -> Json {
    json!({
        "config": config_json(&t.config),
        "parent_config": t.parent_config.as_ref().map(config_json),
        "created_at": t.checkpoint.ts,
        "metadata": to_json(&t.metadata.to_value()),
        "next": next(&t.checkpoint),
        "values": values_json(&t.checkpoint),
        "interrupts": interrupts(&t.pending_writes)
            .into_iter()
            .map(|(value, id)| json!({"value": to_json(value), "id": id}))
            .collect::<Vec<_>>(),
        "writes": t.pending_writes
            .iter()
            .map(|w| json!({"task_id": w.task_id, "channel": w.channel, "value": to_json(&w.value)}))
            .collect::<Vec<_>>(),
    })
}
