//! What a saver answered, in a form two savers' answers compare in: values as their
//! msgpack bytes (so NaN equals NaN and key order counts), errors as their kind.
//!
//! One documented difference is normalized here, and only for the savers that have it
//! ([`Shape::sort_maps`]): Postgres keeps checkpoints and metadata as JSONB, which orders
//! map keys itself (docs/format.md, "What a put stores": "Postgres orders JSONB keys
//! itself"), so for it every map's pairs are compared sorted.

use std::fmt;

use stategraph_checkpoint::serde::msgpack;
use stategraph_checkpoint::{
    ChannelVersions, CheckpointConfig, CheckpointTuple, DeltaChannelHistory, Error, Map,
    PendingWrite, Value,
};

/// How a saver's answers are normalized before they are compared.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shape {
    /// Compare maps (metadata, and the checkpoint's maps) with their pairs sorted: the
    /// saver stores them as JSONB, which does not keep key order.
    pub sort_maps: bool,
}

/// One answer, normalized.
#[derive(Clone, PartialEq)]
pub enum Answer {
    /// A call that returns nothing succeeded.
    Done,
    /// `put` returned this config.
    Config(ConfigView),
    /// `get_tuple`.
    Tuple(Option<TupleView>),
    /// `list`.
    Tuples(Vec<TupleView>),
    /// `get_delta_channel_history`: per channel, the seed and the writes.
    Histories(Vec<(String, Option<Bytes>, Vec<WriteView>)>),
    /// The call failed with an error of this kind.
    Failed(&'static str),
}

/// Bytes shown as hex when short.
#[derive(Clone, PartialEq)]
pub struct Bytes(Vec<u8>);

/// A config: thread, namespace, id and the rest of `configurable`, rendered.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigView {
    thread: String,
    ns: Option<String>,
    id: Option<String>,
    configurable: Vec<(String, Bytes)>,
}

/// A tuple, normalized.
#[derive(Clone, Debug, PartialEq)]
pub struct TupleView {
    config: ConfigView,
    parent: Option<ConfigView>,
    /// The checkpoint as LangGraph stores it, values included.
    checkpoint: Bytes,
    metadata: Bytes,
    writes: Vec<WriteView>,
}

/// A pending write, normalized.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteView {
    task: String,
    channel: String,
    value: Bytes,
}

impl Answer {
    /// The answer of a call that returns nothing.
    pub fn unit(r: Result<(), Error>) -> Answer {
        r.map_or_else(|e| Answer::Failed(kind(&e)), |()| Answer::Done)
    }

    /// The answer of `put`.
    pub fn config(r: Result<CheckpointConfig, Error>, shape: Shape) -> Answer {
        r.map_or_else(
            |e| Answer::Failed(kind(&e)),
            |c| Answer::Config(ConfigView::new(&c, shape)),
        )
    }

    /// The answer of `get_tuple`.
    pub fn tuple(r: Result<Option<CheckpointTuple>, Error>, shape: Shape) -> Answer {
        r.map_or_else(
            |e| Answer::Failed(kind(&e)),
            |t| Answer::Tuple(t.map(|t| TupleView::new(&t, shape))),
        )
    }

    /// The answer of `list`.
    pub fn tuples(r: Result<Vec<CheckpointTuple>, Error>, shape: Shape) -> Answer {
        r.map_or_else(
            |e| Answer::Failed(kind(&e)),
            |ts| Answer::Tuples(ts.iter().map(|t| TupleView::new(t, shape)).collect()),
        )
    }

    /// The answer of `get_delta_channel_history`.
    pub fn histories(
        r: Result<indexmap::IndexMap<String, DeltaChannelHistory>, Error>,
        shape: Shape,
    ) -> Answer {
        r.map_or_else(
            |e| Answer::Failed(kind(&e)),
            |h| {
                Answer::Histories(
                    h.iter()
                        .map(|(c, h)| {
                            let seed = h.seed.as_ref().map(|v| bytes(v, shape));
                            let writes =
                                h.writes.iter().map(|w| WriteView::new(w, shape)).collect();
                            (c.clone(), seed, writes)
                        })
                        .collect(),
                )
            },
        )
    }
}

impl ConfigView {
    fn new(c: &CheckpointConfig, shape: Shape) -> ConfigView {
        ConfigView {
            thread: c.thread_id.clone(),
            ns: c.checkpoint_ns.clone(),
            id: c.checkpoint_id.clone(),
            configurable: c
                .configurable
                .iter()
                .map(|(k, v)| (k.clone(), bytes(v, shape)))
                .collect(),
        }
    }
}

impl TupleView {
    fn new(t: &CheckpointTuple, shape: Shape) -> TupleView {
        let mut checkpoint = t.checkpoint.clone();
        if shape.sort_maps {
            checkpoint.channel_values.sort_keys();
            sort_versions(&mut checkpoint.channel_versions);
            checkpoint.versions_seen.sort_keys();
            checkpoint
                .versions_seen
                .values_mut()
                .for_each(sort_versions);
        }
        TupleView {
            config: ConfigView::new(&t.config, shape),
            parent: t.parent_config.as_ref().map(|c| ConfigView::new(c, shape)),
            checkpoint: bytes(&checkpoint.to_value(true), shape),
            metadata: bytes(&t.metadata.to_value(), shape),
            writes: t
                .pending_writes
                .iter()
                .map(|w| WriteView::new(w, shape))
                .collect(),
        }
    }

    /// `(checkpoint id, thread, namespace)`: the SQL savers' listing order is this,
    /// id descending first (`ORDER BY checkpoint_id DESC, thread_id, checkpoint_ns`).
    pub fn sql_order_key(&self) -> (std::cmp::Reverse<Option<String>>, String, Option<String>) {
        (
            std::cmp::Reverse(self.config.id.clone()),
            self.config.thread.clone(),
            self.config.ns.clone(),
        )
    }
}

fn sort_versions(v: &mut ChannelVersions) {
    v.sort_by(|a, _, b, _| a.cmp(b));
}

impl WriteView {
    fn new(w: &PendingWrite, shape: Shape) -> WriteView {
        WriteView {
            task: w.task_id.clone(),
            channel: w.channel.clone(),
            value: bytes(&w.value, shape),
        }
    }
}

/// The msgpack bytes of `v`, its maps sorted by their keys' bytes when `shape` says so.
fn bytes(v: &Value, shape: Shape) -> Bytes {
    let v = if shape.sort_maps {
        sorted(v)
    } else {
        v.clone()
    };
    Bytes(msgpack::encode(&v).unwrap_or_else(|e| format!("unencodable: {e}").into_bytes()))
}

fn sorted(v: &Value) -> Value {
    match v {
        Value::List(l) => Value::from(l.iter().map(sorted).collect::<Vec<_>>()),
        Value::Map(m) => {
            let mut pairs: Vec<(Vec<u8>, Value, Value)> = m
                .iter()
                .map(|(k, v)| (msgpack::encode(k).unwrap_or_default(), k.clone(), sorted(v)))
                .collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Map(Map::from_pairs(
                pairs.into_iter().map(|(_, k, v)| (k, v)).collect(),
            ))
        }
        other => other.clone(),
    }
}

/// The kind of an error: its variant's name.
pub fn kind(e: &Error) -> &'static str {
    match e {
        Error::Decode(_) => "Decode",
        Error::Encode(_) => "Encode",
        Error::UnknownTag(_) => "UnknownTag",
        Error::UnknownExtension(_) => "UnknownExtension",
        Error::Cipher(_) => "Cipher",
        Error::InvalidConfig(_) => "InvalidConfig",
        Error::InvalidData(_) => "InvalidData",
        Error::Unsupported(_) => "Unsupported",
        Error::Conflict(_) => "Conflict",
        Error::Refused { .. } => "Refused",
        Error::Unsafe(_) => "Unsafe",
        Error::Timeout(_) => "Timeout",
        Error::Backend(_) => "Backend",
        _ => "other",
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A value is shown decoded (short and readable); the bytes are what is compared.
        match msgpack::decode(&self.0) {
            Ok(v) => {
                let shown = format!("{v}");
                if shown.len() > 300 {
                    write!(
                        f,
                        "{}… ({} bytes)",
                        &shown[..(0..=300)
                            .rev()
                            .find(|i| shown.is_char_boundary(*i))
                            .unwrap_or(0)],
                        self.0.len()
                    )
                } else {
                    f.write_str(&shown)
                }
            }
            Err(_) => write!(f, "{:?}", String::from_utf8_lossy(&self.0)),
        }
    }
}

impl fmt::Debug for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Done => f.write_str("Done"),
            Answer::Config(c) => write!(f, "Config({c:?})"),
            Answer::Tuple(t) => write!(f, "Tuple({t:#?})"),
            Answer::Tuples(ts) => write!(f, "Tuples({ts:#?})"),
            Answer::Histories(h) => write!(f, "Histories({h:#?})"),
            Answer::Failed(k) => write!(f, "Failed({k})"),
        }
    }
}
