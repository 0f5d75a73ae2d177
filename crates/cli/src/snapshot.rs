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
//! * DeltaChannel values are rebuilt from their history before anything is shown
//!   (`stategraph_checkpoint::rebuild`); `delta_channels` says how each was obtained, and
//!   names those whose reducer the stored rows do not reveal (left out of `values`).

use indexmap::IndexMap;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Value as Json};
use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointTuple, DeltaValue, PendingWrite, Value,
};

use crate::render::AsJson;

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

/// The state values of a checkpoint, serialized as a JSON object.
pub struct ValuesJson<'a>(pub &'a Checkpoint);

impl Serialize for ValuesJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (name, value) in &self.0.channel_values {
            if is_state_channel(name) {
                m.serialize_entry(name, &AsJson(value))?;
            }
        }
        m.end()
    }
}

/// The state values of a checkpoint as a JSON object.
pub fn values_json(cp: &Checkpoint) -> Json {
    serde_json::to_value(ValuesJson(cp)).unwrap_or(Json::Null)
}

/// A whole snapshot, serialized straight to JSON: `config`, `parent_config`,
/// `created_at`, `metadata`, `next`, `values`, `interrupts`, `writes`.
pub struct SnapshotJson<'a>(pub &'a CheckpointTuple);

/// One interrupt, serialized as `{"value", "id"}`.
struct InterruptJson<'a>(&'a Value, &'a str);

impl Serialize for InterruptJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("value", &AsJson(self.0))?;
        m.serialize_entry("id", self.1)?;
        m.end()
    }
}

/// One pending write, serialized as `{"task_id", "channel", "value"}`.
struct WriteJson<'a>(&'a PendingWrite);

impl Serialize for WriteJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("task_id", &self.0.task_id)?;
        m.serialize_entry("channel", &self.0.channel)?;
        m.serialize_entry("value", &AsJson(&self.0.value))?;
        m.end()
    }
}

/// A snapshot whose DeltaChannels were rebuilt ([`crate::state::load`]): the fields of
/// [`SnapshotJson`], then `delta_channels` (see [`delta_json`]) when the checkpoint has
/// DeltaChannels.
pub struct StateJson<'a> {
    /// The tuple, its DeltaChannel values rebuilt.
    pub tuple: &'a CheckpointTuple,
    /// How each DeltaChannel value was obtained.
    pub delta: &'a IndexMap<String, DeltaValue>,
}

impl Serialize for SnapshotJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_snapshot(self.0, None, s)
    }
}

impl Serialize for StateJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_snapshot(self.tuple, Some(self.delta), s)
    }
}

/// How each DeltaChannel value was obtained, as JSON: `{"from": "snapshot"}` (stored at
/// the checkpoint), `{"from": "history", "reducer": "messages" | "concat", "seeded",
/// "writes"}` (rebuilt), or `{"from": "unknown", "reason", "seed", "writes"}` (not
/// rebuilt: the reducer is the graph's own; the stored value and the writes after it).
pub fn delta_json(delta: &IndexMap<String, DeltaValue>) -> Json {
    let mut out = serde_json::Map::new();
    for (name, d) in delta {
        let v = match d {
            DeltaValue::Stored => json!({"from": "snapshot"}),
            DeltaValue::Rebuilt {
                fold,
                seeded,
                writes,
            } => json!({
                "from": "history", "reducer": fold.as_str(), "seeded": seeded,
                "writes": writes,
            }),
            DeltaValue::Unknown {
                seed,
                writes,
                reason,
            } => json!({
                "from": "unknown", "reason": reason,
                "seed": seed.as_ref().map(crate::render::to_json),
                "writes": writes.iter().map(crate::render::to_json).collect::<Vec<_>>(),
            }),
        };
        out.insert(name.clone(), v);
    }
    Json::Object(out)
}

fn serialize_snapshot<S: Serializer>(
    t: &CheckpointTuple,
    delta: Option<&IndexMap<String, DeltaValue>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let metadata = t.metadata.to_value();
    let interrupts: Vec<InterruptJson<'_>> = interrupts(&t.pending_writes)
        .into_iter()
        .map(|(v, id)| InterruptJson(v, id))
        .collect();
    let writes: Vec<WriteJson<'_>> = t.pending_writes.iter().map(WriteJson).collect();
    let mut m = s.serialize_map(None)?;
    m.serialize_entry("config", &config_json(&t.config))?;
    m.serialize_entry("parent_config", &t.parent_config.as_ref().map(config_json))?;
    m.serialize_entry("created_at", &t.checkpoint.ts)?;
    m.serialize_entry("metadata", &AsJson(&metadata))?;
    m.serialize_entry("next", &next(&t.checkpoint))?;
    m.serialize_entry("values", &ValuesJson(&t.checkpoint))?;
    m.serialize_entry("interrupts", &interrupts)?;
    m.serialize_entry("writes", &writes)?;
    if let Some(delta) = delta.filter(|d| !d.is_empty()) {
        m.serialize_entry("delta_channels", &delta_json(delta))?;
    }
    m.end()
}

/// The whole snapshot as a `serde_json` value (see [`SnapshotJson`]).
pub fn snapshot_json(t: &CheckpointTuple) -> Json {
    serde_json::to_value(SnapshotJson(t)).unwrap_or(Json::Null)
}

/// The whole snapshot with its DeltaChannel report as a `serde_json` value (see
/// [`StateJson`]).
pub fn state_json(tuple: &CheckpointTuple, delta: &IndexMap<String, DeltaValue>) -> Json {
    serde_json::to_value(StateJson { tuple, delta }).unwrap_or(Json::Null)
}
