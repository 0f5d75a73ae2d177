//! The plain data that crosses the boundary, and the values it decodes to.
//!
//! Python sends msgpack for plain data (configs, metadata, filters, versions, the inline
//! part of a Postgres checkpoint); Rust sends back msgpack for the two reads that return
//! decoded values (the DeltaChannel histories, and the `get_tuple` of an old-format
//! Postgres checkpoint). All of it is decoded and encoded by [`JsonPlusSerializer`], whose
//! model ([`Value`]) is LangGraph's msgpack model. Channel values and writes do not pass
//! here: they cross as the pairs Python's serializer made (see [`crate::raw`]).

use indexmap::IndexMap;
use stategraph_checkpoint::delta::DeltaChannelHistory;
use stategraph_checkpoint::serde::{msgpack, JsonPlusSerializer, Serializer, TAG_MSGPACK};
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, CheckpointConfig, CheckpointTuple, Error, List, Map,
    PendingWrite, Result, Value,
};

/// Decodes a `(type tag, bytes)` pair as Python's `loads_typed` would.
pub(crate) fn loads(tag: &str, bytes: &[u8]) -> Result<Value> {
    JsonPlusSerializer.loads_typed(tag, bytes)
}

/// Decodes msgpack of plain data.
pub(crate) fn loads_plain(bytes: &[u8]) -> Result<Value> {
    loads(TAG_MSGPACK, bytes)
}

/// Encodes a value as msgpack (what Python reads with `loads_typed(("msgpack", ...))`).
pub(crate) fn dumps_plain(value: &Value) -> Result<Vec<u8>> {
    msgpack::encode(value)
}

fn bad(what: &str) -> Error {
    Error::InvalidConfig(format!("{what} has the wrong shape"))
}

fn string(value: Value, what: &str) -> Result<String> {
    match value {
        Value::Str(s) => Ok(s.into_string()),
        _ => Err(bad(what)),
    }
}

fn optional_string(value: Value, what: &str) -> Result<Option<String>> {
    match value {
        Value::Nil => Ok(None),
        other => string(other, what).map(Some),
    }
}

/// A map with string keys, in order.
pub(crate) fn string_map(value: Value, what: &str) -> Result<IndexMap<String, Value>> {
    match value {
        Value::Nil => Ok(IndexMap::new()),
        Value::Map(m) => m
            .into_iter()
            .map(|(k, v)| Ok((string(k, what)?, v)))
            .collect(),
        _ => Err(bad(what)),
    }
}

/// A config from msgpack `[thread_id, checkpoint_ns | nil, checkpoint_id | nil,
/// configurable, metadata]` (the two maps hold the further keys `put` may copy into the
/// metadata, and the branch marker).
pub(crate) fn config(bytes: &[u8]) -> Result<CheckpointConfig> {
    let Value::List(parts) = loads_plain(bytes)? else {
        return Err(bad("config"));
    };
    let mut parts = Vec::from(parts).into_iter();
    let mut next = || parts.next().unwrap_or(Value::Nil);
    Ok(CheckpointConfig {
        thread_id: string(next(), "thread_id")?,
        checkpoint_ns: optional_string(next(), "checkpoint_ns")?,
        checkpoint_id: optional_string(next(), "checkpoint_id")?,
        configurable: string_map(next(), "configurable")?,
        metadata: string_map(next(), "metadata")?,
    })
}

/// A config addressing `(thread_id, checkpoint_ns, checkpoint_id)`.
pub(crate) fn address(
    thread_id: String,
    checkpoint_ns: Option<String>,
    checkpoint_id: Option<String>,
) -> CheckpointConfig {
    CheckpointConfig {
        thread_id,
        checkpoint_ns,
        checkpoint_id,
        ..CheckpointConfig::default()
    }
}

/// `new_versions` from a msgpack map of channel to version.
pub(crate) fn versions(bytes: &[u8]) -> Result<ChannelVersions> {
    string_map(loads_plain(bytes)?, "new_versions")?
        .into_iter()
        .map(|(k, v)| {
            let version = ChannelVersion::from_value(&v).ok_or_else(|| bad("channel version"))?;
            Ok((k, version))
        })
        .collect()
}

fn writes_value(writes: &[PendingWrite]) -> Value {
    writes
        .iter()
        .map(|w| {
            Value::list(vec![
                Value::from(w.task_id.as_str()),
                Value::from(w.channel.as_str()),
                w.value.clone(),
            ])
        })
        .collect::<List>()
        .into()
}

/// A tuple as `[thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata,
/// parent_checkpoint_id | nil, [[task_id, channel, value], ...]]`.
pub(crate) fn tuple_value(tuple: &CheckpointTuple) -> Value {
    let parent = tuple
        .parent_config
        .as_ref()
        .and_then(|p| p.checkpoint_id.as_deref())
        .map_or(Value::Nil, Value::from);
    Value::list(vec![
        Value::from(tuple.config.thread_id.as_str()),
        Value::from(tuple.config.ns()),
        tuple
            .config
            .checkpoint_id
            .as_deref()
            .map_or(Value::Nil, Value::from),
        tuple.checkpoint.to_value(true),
        tuple.metadata.to_value(),
        parent,
        writes_value(&tuple.pending_writes),
    ])
}

/// Delta histories as a map of channel to `[has_seed, seed, writes]`.
pub(crate) fn histories_value(histories: &IndexMap<String, DeltaChannelHistory>) -> Value {
    let mut out = Map::with_capacity(histories.len());
    for (channel, history) in histories {
        out.push_unique(
            channel.as_str(),
            Value::list(vec![
                Value::Bool(history.seed.is_some()),
                history.seed.clone().unwrap_or(Value::Nil),
                writes_value(&history.writes),
            ]),
        );
    }
    Value::Map(out)
}
