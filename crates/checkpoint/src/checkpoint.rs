//! The checkpoint (format v4), its pending writes, and the tuple a saver returns.

use indexmap::IndexMap;

use crate::config::CheckpointConfig;
use crate::error::{Error, Result};
use crate::fields::{bad, into_string, string_map};
use crate::metadata::CheckpointMetadata;
use crate::value::{Map, Value};
use crate::version::{ChannelVersion, ChannelVersions};

/// The current checkpoint format version.
pub const CHECKPOINT_FORMAT: i64 = 4;

/// The state of one (thread, namespace) at the start of a super-step (docs/format.md#checkpoint).
///
/// Field order is the order LangGraph writes the keys in: `v, ts, id, channel_values,
/// channel_versions, versions_seen, updated_channels`.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// Format version, 4 for new checkpoints.
    pub v: i64,
    /// Creation time as Python's `datetime.isoformat()` (informative only).
    pub ts: String,
    /// The checkpoint id: a UUIDv6 string whose text order is creation order.
    pub id: String,
    /// The value of every channel that has one, by channel name.
    pub channel_values: IndexMap<String, Value>,
    /// The current version of every channel ever written on this branch.
    pub channel_versions: ChannelVersions,
    /// For each node (and pseudo-node), the versions of its triggers when it last ran.
    pub versions_seen: IndexMap<String, ChannelVersions>,
    /// Channels updated by the step that produced this checkpoint; `None` for checkpoints
    /// written by `update_state` and forks.
    pub updated_channels: Option<Vec<String>>,
    /// `pending_sends` of format 3 and older, kept only when read from such a checkpoint.
    pub pending_sends: Option<Vec<Value>>,
    /// Any further keys found when reading, kept in order so nothing read is lost.
    pub extra: IndexMap<String, Value>,
}

impl Checkpoint {
    /// An empty v4 checkpoint with the given id and timestamp.
    pub fn empty(id: impl Into<String>, ts: impl Into<String>) -> Checkpoint {
        Checkpoint {
            v: CHECKPOINT_FORMAT,
            ts: ts.into(),
            id: id.into(),
            channel_values: IndexMap::new(),
            channel_versions: ChannelVersions::default(),
            versions_seen: IndexMap::new(),
            updated_channels: None,
            pending_sends: None,
            extra: IndexMap::new(),
        }
    }

    /// The checkpoint as the msgpack map LangGraph stores; `channel_values` is included
    /// only when `with_values` is set (savers that keep values as blobs leave it out).
    pub fn to_value(&self, with_values: bool) -> Value {
        // Keys of the source maps are unique, so entries are pushed without a lookup.
        let mut m = Map::with_capacity(7 + self.extra.len());
        m.push_unique("v", self.v);
        m.push_unique("ts", self.ts.as_str());
        m.push_unique("id", self.id.as_str());
        if with_values {
            let mut values = Map::with_capacity(self.channel_values.len());
            for (k, v) in &self.channel_values {
                values.push_unique(k.as_str(), v.clone());
            }
            m.push_unique("channel_values", values);
        }
        m.push_unique(
            "channel_versions",
            versions_to_value(&self.channel_versions),
        );
        let mut seen = Map::with_capacity(self.versions_seen.len());
        for (k, v) in &self.versions_seen {
            seen.push_unique(k.as_str(), versions_to_value(v));
        }
        m.push_unique("versions_seen", seen);
        if let Some(sends) = &self.pending_sends {
            m.push_unique("pending_sends", Value::List(sends.clone().into()));
        }
        m.push_unique(
            "updated_channels",
            self.updated_channels
                .as_ref()
                .map(|u| Value::List(u.iter().map(Value::from).collect())),
        );
        for (k, v) in &self.extra {
            m.insert(k.as_str(), v.clone());
        }
        Value::Map(m)
    }

    /// Reads a checkpoint from its stored map, in any key order. A missing
    /// `channel_values` reads as empty (the saver fills it from its blobs).
    pub fn from_value(value: Value) -> Result<Checkpoint> {
        let Value::Map(map) = value else {
            return Err(Error::InvalidData("checkpoint is not a map".into()));
        };
        let mut cp = Checkpoint::empty("", "");
        let mut saw_id = false;
        for (k, v) in map {
            let Value::Str(key) = k else {
                return Err(Error::InvalidData("checkpoint key is not a string".into()));
            };
            match key.as_str() {
                "v" => cp.v = v.as_i64().ok_or_else(|| bad("v"))?,
                "ts" => cp.ts = into_string(v, "ts")?,
                "id" => {
                    cp.id = into_string(v, "id")?;
                    saw_id = true;
                }
                "channel_values" => cp.channel_values = string_map(v, "channel_values", Ok)?,
                "channel_versions" => {
                    cp.channel_versions = string_map(v, "channel_versions", version)?
                }
                "versions_seen" => {
                    cp.versions_seen = string_map(v, "versions_seen", |inner| {
                        string_map(inner, "versions_seen", version)
                    })?
                }
                "updated_channels" => {
                    cp.updated_channels = match v {
                        Value::Nil => None,
                        Value::List(l) => Some(
                            l.into_iter()
                                .map(|c| into_string(c, "updated_channels"))
                                .collect::<Result<_>>()?,
                        ),
                        _ => return Err(bad("updated_channels")),
                    }
                }
                "pending_sends" => {
                    cp.pending_sends = match v {
                        Value::Nil => None,
                        Value::List(l) => Some(l.to_vec()),
                        _ => return Err(bad("pending_sends")),
                    }
                }
                _ => {
                    cp.extra.insert(key.to_string(), v);
                }
            }
        }
        if !saw_id {
            return Err(Error::InvalidData("checkpoint has no id".into()));
        }
        Ok(cp)
    }
}

/// A versions map as a stored value.
pub(crate) fn versions_to_value(versions: &ChannelVersions) -> Value {
    let mut m = Map::with_capacity(versions.len());
    for (k, v) in versions {
        m.push_unique(k.as_str(), v.to_value());
    }
    Value::Map(m)
}

fn version(v: Value) -> Result<ChannelVersion> {
    ChannelVersion::from_value(&v).ok_or_else(|| bad("channel version"))
}

/// One write of a task: `(task_id, channel, value)`, as `pending_writes` returns it.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingWrite {
    /// The task that wrote it (`00000000-0000-0000-0000-000000000000` for client writes).
    pub task_id: String,
    /// The channel (or special tag such as `__interrupt__`) written.
    pub channel: String,
    /// The value written.
    pub value: Value,
}

/// What a saver returns for one checkpoint (Python's `CheckpointTuple`).
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointTuple {
    /// The config that addresses this checkpoint.
    pub config: CheckpointConfig,
    /// The checkpoint, with `channel_values` rebuilt.
    pub checkpoint: Checkpoint,
    /// Its metadata.
    pub metadata: CheckpointMetadata,
    /// The config of its parent, if it has one.
    pub parent_config: Option<CheckpointConfig>,
    /// The writes stored against it, sorted by `(task_path, task_id, idx)`.
    pub pending_writes: Vec<PendingWrite>,
}

/// The reserved write channels and their fixed indexes (`WRITES_IDX_MAP`,
/// docs/format.md#reserved-names).
pub const WRITES_IDX_MAP: [(&str, i64); 4] = [
    ("__error__", -1),
    ("__scheduled__", -2),
    ("__interrupt__", -3),
    ("__resume__", -4),
];

/// The index a write gets: the reserved index of a special channel, else its position.
pub fn write_index(channel: &str, position: usize) -> i64 {
    WRITES_IDX_MAP
        .iter()
        .find(|(c, _)| *c == channel)
        .map_or(position as i64, |(_, i)| *i)
}
