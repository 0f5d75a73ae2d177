//! Checkpoint metadata: source, step, parents, and the run-level keys copied from the config.

use indexmap::IndexMap;

use crate::config::CheckpointConfig;
use crate::error::{Error, Result};
use crate::fields::string_map;
use crate::value::{Map, Value};

/// Configurable keys that never go into metadata (`EXCLUDED_METADATA_KEYS`,
/// docs/format.md#metadata).
pub const EXCLUDED_METADATA_KEYS: [&str; 9] = [
    "thread_id",
    "checkpoint_id",
    "checkpoint_ns",
    "checkpoint_map",
    "langgraph_step",
    "langgraph_node",
    "langgraph_triggers",
    "langgraph_path",
    "langgraph_checkpoint_ns",
];

/// Why a checkpoint was written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CheckpointSource {
    /// Right after new input was applied.
    Input,
    /// After a completed super-step.
    Loop,
    /// By `update_state`.
    Update,
    /// The first checkpoint of a replay or a `__copy__` update.
    Fork,
    /// Any other string a foreign writer used.
    Other(String),
}

impl CheckpointSource {
    /// The stored string.
    pub fn as_str(&self) -> &str {
        match self {
            CheckpointSource::Input => "input",
            CheckpointSource::Loop => "loop",
            CheckpointSource::Update => "update",
            CheckpointSource::Fork => "fork",
            CheckpointSource::Other(s) => s,
        }
    }

    /// Parses a stored string.
    pub fn parse(s: &str) -> CheckpointSource {
        match s {
            "input" => CheckpointSource::Input,
            "loop" => CheckpointSource::Loop,
            "update" => CheckpointSource::Update,
            "fork" => CheckpointSource::Fork,
            other => CheckpointSource::Other(other.to_owned()),
        }
    }
}

/// The metadata of a checkpoint (docs/format.md#metadata). Written in the order `source, step,
/// parents`,
/// then the extra keys in insertion order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CheckpointMetadata {
    /// Why the checkpoint was written.
    pub source: Option<CheckpointSource>,
    /// The super-step number (`-1` for the first input checkpoint).
    pub step: Option<i64>,
    /// Ancestor namespace to the id of the ancestor checkpoint (`{}` at the root).
    pub parents: Option<IndexMap<String, String>>,
    /// Every other key (`run_id`, user keys, …), in order.
    pub extra: IndexMap<String, Value>,
}

impl CheckpointMetadata {
    /// Metadata with source, step and empty parents, as the loop writes at the root.
    pub fn new(source: CheckpointSource, step: i64) -> CheckpointMetadata {
        CheckpointMetadata {
            source: Some(source),
            step: Some(step),
            parents: Some(IndexMap::new()),
            extra: IndexMap::new(),
        }
    }

    /// Adds an extra key (builder style).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }

    /// The value of any top-level key, standard or extra, as stored.
    pub fn get(&self, key: &str) -> Option<Value> {
        match key {
            "source" => self.source.as_ref().map(|s| Value::from(s.as_str())),
            "step" => self.step.map(Value::Int),
            "parents" => self.parents.as_ref().map(parents_to_value),
            _ => self.extra.get(key).cloned(),
        }
    }

    /// The metadata as a stored map.
    pub fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(3 + self.extra.len());
        if let Some(s) = &self.source {
            m.insert("source", s.as_str());
        }
        if let Some(step) = self.step {
            m.insert("step", step);
        }
        if let Some(p) = &self.parents {
            m.insert("parents", parents_to_value(p));
        }
        for (k, v) in &self.extra {
            m.insert(k.as_str(), v.clone());
        }
        Value::Map(m)
    }

    /// Reads metadata from a stored map, in any key order.
    pub fn from_value(value: Value) -> Result<CheckpointMetadata> {
        let Value::Map(map) = value else {
            return Err(Error::InvalidData("metadata is not a map".into()));
        };
        let mut md = CheckpointMetadata::default();
        for (k, v) in map {
            let Value::Str(key) = k else {
                return Err(Error::InvalidData("metadata key is not a string".into()));
            };
            match (key.as_str(), v) {
                ("source", Value::Str(s)) => md.source = Some(CheckpointSource::parse(&s)),
                ("step", Value::Int(n)) => md.step = Some(n),
                ("parents", v @ Value::Map(_)) => {
                    md.parents = Some(string_map(v, "parents", |id| match id {
                        Value::Str(s) => Ok(s.into_string()),
                        _ => Err(Error::InvalidData("parents value is not a string".into())),
                    })?)
                }
                (_, v) => {
                    md.extra.insert(key.to_string(), v);
                }
            }
        }
        Ok(md)
    }

    /// The metadata a saver stores for `put` (`get_checkpoint_metadata`, docs/format.md#metadata):
    /// NULs
    /// removed from top-level strings, then the scalar keys of `config.metadata` and of the
    /// configurable keys added when not present, excluded or `__`-prefixed.
    pub fn for_put(&self, config: &CheckpointConfig) -> CheckpointMetadata {
        let mut md = self.clone();
        if let Some(CheckpointSource::Other(s)) = &mut md.source {
            strip_nul(s);
        }
        for v in md.extra.values_mut() {
            if let Value::Str(s) = v {
                if s.contains('\0') {
                    *s = s.replace('\0', "").into();
                }
            }
        }
        let candidates = config.metadata.iter().chain(config.configurable.iter());
        for (k, v) in candidates {
            if md.get(k).is_some()
                || EXCLUDED_METADATA_KEYS.contains(&k.as_str())
                || k.starts_with("__")
            {
                continue;
            }
            let v = match v {
                Value::Str(s) if s.contains('\0') => Value::from(s.replace('\0', "")),
                Value::Str(_) => v.clone(),
                Value::Int(_) | Value::UInt(_) | Value::Bool(_) | Value::Float(_) => v.clone(),
                _ => continue,
            };
            md.extra.insert(k.clone(), v);
        }
        md
    }
}

fn strip_nul(s: &mut String) {
    if s.contains('\0') {
        s.retain(|c| c != '\0');
    }
}

fn parents_to_value(p: &IndexMap<String, String>) -> Value {
    Value::Map(
        p.iter()
            .map(|(k, v)| (Value::from(k), Value::from(v)))
            .collect(),
    )
}
