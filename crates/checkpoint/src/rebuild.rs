//! DeltaChannel values of a stored checkpoint, rebuilt without the graph: what every
//! reader of stored state that has no graph code (the `stategraph` command, a Studio, a
//! server answering for a thread) shows for a DeltaChannel (docs/format.md#deltachannel).
//!
//! A DeltaChannel stores its value only at a snapshot (`_DeltaSnapshot`, msgpack ext 7);
//! at any other checkpoint its value is its reducer applied to the nearest stored value
//! and the writes after it ([`CheckpointSaver::get_delta_channel_history`]). Without the
//! graph the reducer is unknown, so [`rebuild_delta_values`] recognises it from what is
//! stored, and only where that is exact:
//!
//! * [`Fold::Messages`]: every stored item is a LangChain message. LangGraph's message
//!   reducers (`add_messages`, and `_messages_delta_reducer`, its batch form for
//!   DeltaChannels) agree on messages that have ids, which LangGraph gives every message
//!   written to a DeltaChannel: a message replaces the one with its id, a `RemoveMessage`
//!   deletes it, `REMOVE_ALL_MESSAGES` clears the list, any other message is appended.
//! * [`Fold::Concat`]: a list (or nothing) seeded, lists written, none of them messages:
//!   the written lists are concatenated (`operator.add` on lists, `extend`).
//! * Anything else (dicts, numbers, message-like tuples or dicts a reducer would still
//!   convert) is [`DeltaValue::Unknown`]: the seed and the writes are returned for the
//!   caller to show, never a guessed value.
//!
//! An `Overwrite` write restarts the value from its content in every case, as in
//! LangGraph. A value stored at the checkpoint itself is unwrapped from its snapshot.

use std::collections::{HashMap, HashSet};

use indexmap::IndexMap;

use crate::checkpoint::CheckpointTuple;
use crate::error::Result;
use crate::ext::Ext;
use crate::saver::CheckpointSaver;
use crate::value::Value;

/// The metadata key that names a thread's DeltaChannels between snapshots.
pub const COUNTERS_KEY: &str = "counters_since_delta_snapshot";

/// The id of the `RemoveMessage` that clears a message list (LangGraph's
/// `REMOVE_ALL_MESSAGES`).
pub const REMOVE_ALL_MESSAGES: &str = "__remove_all__";

/// How a DeltaChannel's writes were folded into its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// LangGraph's message reducer (see the module).
    Messages,
    /// Concatenation of the written lists.
    Concat,
}

impl Fold {
    /// A short name: `messages` or `concat`.
    pub fn as_str(self) -> &'static str {
        match self {
            Fold::Messages => "messages",
            Fold::Concat => "concat",
        }
    }
}

/// How one DeltaChannel's value at a checkpoint was obtained.
#[derive(Clone, Debug, PartialEq)]
pub enum DeltaValue {
    /// The checkpoint stores it (a snapshot, now unwrapped in `channel_values`).
    Stored,
    /// Rebuilt into `channel_values` from the history.
    Rebuilt {
        /// How the writes were folded.
        fold: Fold,
        /// Whether an ancestor stored a value (else the fold started from `[]`).
        seeded: bool,
        /// How many writes were replayed.
        writes: usize,
    },
    /// Not rebuilt, and absent from `channel_values`: the reducer cannot be recognised.
    Unknown {
        /// The nearest stored value (unwrapped), if any.
        seed: Option<Value>,
        /// The writes after it, oldest first.
        writes: Vec<Value>,
        /// Why the reducer is not recognised.
        reason: String,
    },
}

/// True for a channel that is a state key (not one of LangGraph's internal channels:
/// names starting with `__`, or holding a `:` such as `branch:to:node`).
fn is_state_key(name: &str) -> bool {
    !name.starts_with("__") && !name.contains(':')
}

/// The value inside a snapshot, or the value itself.
fn unwrap_snapshot(value: Value) -> (Value, bool) {
    match value {
        Value::Ext(ext) => match &*ext {
            Ext::DeltaSnapshot(inner) => (inner.clone(), true),
            _ => (Value::Ext(ext), false),
        },
        other => (other, false),
    }
}

/// Rebuilds the DeltaChannel values of `tuple` in place, reading their history from
/// `saver` (the saver `tuple` was read from), and says how each was obtained.
///
/// DeltaChannels are the state keys whose value is stored as a snapshot, and those with
/// a version but no stored value that the metadata's `counters_since_delta_snapshot`
/// names or (at a checkpoint with counters or a snapshot) whose nearest stored value is
/// a snapshot. A checkpoint with neither reads no history. A rebuilt value is inserted into
/// `channel_values`; an [`DeltaValue::Unknown`] one is left out. Other channels are
/// untouched.
pub async fn rebuild_delta_values<S: CheckpointSaver + ?Sized>(
    saver: &S,
    tuple: &mut CheckpointTuple,
) -> Result<IndexMap<String, DeltaValue>> {
    let mut out = IndexMap::new();
    let cp = &mut tuple.checkpoint;
    for (name, value) in cp.channel_values.iter_mut() {
        if !is_state_key(name) {
            continue;
        }
        let (inner, was_snapshot) = unwrap_snapshot(std::mem::take(value));
        *value = inner;
        if was_snapshot {
            out.insert(name.clone(), DeltaValue::Stored);
        }
    }
    let counters = tuple.metadata.extra.get(COUNTERS_KEY);
    let counted: HashSet<String> = match counters {
        Some(Value::Map(m)) => m
            .keys()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect(),
        _ => HashSet::new(),
    };
    // A checkpoint without any DeltaChannel mark (no counters, no snapshot) reads no
    // history: a plain thread's emptied channel must not walk the whole chain.
    if counters.is_none() && out.is_empty() {
        return Ok(out);
    }
    let missing: Vec<String> = cp
        .channel_versions
        .keys()
        .filter(|k| is_state_key(k) && !cp.channel_values.contains_key(*k))
        .cloned()
        .collect();
    if missing.is_empty() {
        return Ok(out);
    }
    let config = tuple.config.clone().with_checkpoint_id(cp.id.clone());
    let histories = saver.get_delta_channel_history(&config, &missing).await?;
    for (name, history) in histories {
        let (seed, snapshot_seed) = match history.seed {
            Some(v) => {
                let (v, snap) = unwrap_snapshot(v);
                (Some(v), snap)
            }
            None => (None, false),
        };
        if !counted.contains(&name) && !snapshot_seed {
            // Not a DeltaChannel as far as the stored rows tell (an emptied channel).
            continue;
        }
        let writes: Vec<Value> = history.writes.into_iter().map(|w| w.value).collect();
        let n = writes.len();
        let seeded = seed.is_some();
        match fold(seed.clone(), writes.clone()) {
            Ok((value, fold)) => {
                cp.channel_values.insert(name.clone(), value);
                out.insert(
                    name,
                    DeltaValue::Rebuilt {
                        fold,
                        seeded,
                        writes: n,
                    },
                );
            }
            Err(reason) => {
                out.insert(
                    name,
                    DeltaValue::Unknown {
                        seed,
                        writes,
                        reason,
                    },
                );
            }
        }
    }
    Ok(out)
}

/// The content of an `Overwrite` write (`Overwrite(value)` object, or its dict forms
/// `{"__overwrite__": value}` and `{"type": "__overwrite__", "value": value}`).
fn overwrite_of(value: &Value) -> Option<&Value> {
    const OVERWRITE: &str = "__overwrite__";
    match value {
        Value::Map(m) if m.len() == 1 => m.get(OVERWRITE),
        Value::Map(m) if m.get("type").and_then(Value::as_str) == Some(OVERWRITE) => m.get("value"),
        Value::Ext(ext) => match &**ext {
            Ext::Object(o) if o.module == "langgraph.types" && o.class == "Overwrite" => {
                o.data.as_map().and_then(|d| d.get("value"))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Folds `writes` (oldest first) over `seed` with the reducer recognised from them (see
/// the module), or says why none is recognised.
pub fn fold(seed: Option<Value>, writes: Vec<Value>) -> std::result::Result<(Value, Fold), String> {
    // The last overwrite restarts the value; only the writes after it are reduced.
    let mut base = seed;
    let mut rest: Vec<Value> = Vec::with_capacity(writes.len());
    for w in writes {
        match overwrite_of(&w) {
            Some(Value::Nil) => {
                base = Some(Value::list(Vec::new()));
                rest.clear();
            }
            Some(v) => {
                base = Some(v.clone());
                rest.clear();
            }
            None => rest.push(w),
        }
    }
    let base = match base {
        None | Some(Value::Nil) => Vec::new(),
        Some(Value::List(items)) => items.into_vec(),
        Some(other) => {
            return Err(format!(
                "its stored value is {}, not a list",
                kind_of(&other)
            ))
        }
    };
    let any_message =
        base.iter().any(is_message) || rest.iter().any(|w| items_of(w).iter().any(is_message));
    if any_message {
        let mut flat = Vec::new();
        for w in rest {
            match w {
                Value::List(items) => flat.extend(items.iter().cloned()),
                other => flat.push(other),
            }
        }
        if let Some(odd) = base.iter().chain(&flat).find(|v| !is_message(v)) {
            return Err(format!(
                "it mixes messages with {} (a message-like value the graph's reducer \
                 converts, or data of its own)",
                kind_of(odd)
            ));
        }
        return Ok((Value::list(fold_messages(base, flat)), Fold::Messages));
    }
    let mut value = base;
    for w in rest {
        match w {
            Value::List(items) => value.extend(items.iter().cloned()),
            other => {
                return Err(format!(
                    "a write is {}, not a list to append",
                    kind_of(&other)
                ))
            }
        }
    }
    Ok((Value::list(value), Fold::Concat))
}

/// The items a write contributes: a list's elements, or the value itself.
fn items_of(w: &Value) -> &[Value] {
    match w {
        Value::List(items) => items,
        other => std::slice::from_ref(other),
    }
}

fn is_message(v: &Value) -> bool {
    v.as_message().is_some()
}

/// The id of a message, when it has one.
fn message_id(m: &Value) -> Option<&str> {
    m.as_message()?.1.get("id")?.as_str()
}

fn is_remove(m: &Value) -> bool {
    m.as_message()
        .is_some_and(|(class, _)| class == "RemoveMessage")
}

/// LangGraph's batch message reducer over messages: `REMOVE_ALL_MESSAGES` (the last one)
/// clears what came before it; then each message replaces the one with its id, a
/// `RemoveMessage` deletes it (an unknown id is ignored), any other is appended.
fn fold_messages(state: Vec<Value>, mut writes: Vec<Value>) -> Vec<Value> {
    let mut state = state;
    if let Some(i) = writes
        .iter()
        .rposition(|m| is_remove(m) && message_id(m) == Some(REMOVE_ALL_MESSAGES))
    {
        state.clear();
        writes.drain(..=i);
    }
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, m) in state.iter().enumerate() {
        if let Some(id) = message_id(m) {
            index.insert(id.to_owned(), i);
        }
    }
    let mut result: Vec<Option<Value>> = state.into_iter().map(Some).collect();
    for m in writes {
        let Some(id) = message_id(&m).map(str::to_owned) else {
            result.push(Some(m));
            continue;
        };
        if is_remove(&m) {
            if let Some(i) = index.remove(&id) {
                result[i] = None;
            }
        } else if let Some(&i) = index.get(&id) {
            result[i] = Some(m);
        } else {
            index.insert(id, result.len());
            result.push(Some(m));
        }
    }
    result.into_iter().flatten().collect()
}

/// What kind of value `v` is, for the reasons given.
fn kind_of(v: &Value) -> String {
    match v {
        Value::Nil => "None".into(),
        Value::Bool(_) => "a bool".into(),
        Value::Int(_) | Value::UInt(_) | Value::Float(_) => "a number".into(),
        Value::Str(_) => "a string".into(),
        Value::Bytes(_) => "bytes".into(),
        Value::List(_) => "a list".into(),
        Value::Map(_) => "a dict".into(),
        Value::Ext(e) => match &**e {
            Ext::Object(o) => format!("a {}.{}", o.module, o.class),
            Ext::NumpyArray(_) => "a numpy array".into(),
            Ext::DeltaSnapshot(_) => "a nested snapshot".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Map;

    fn msg(class: &str, id: Option<&str>, content: &str) -> Value {
        let mut f = Map::new();
        f.insert("content", content);
        f.insert("id", id.map_or(Value::Nil, Value::from));
        Value::message(class, f).expect("a message class")
    }

    fn list(items: Vec<Value>) -> Value {
        Value::list(items)
    }

    #[test]
    fn messages_replace_remove_and_append_by_id() {
        let seed = list(vec![
            msg("HumanMessage", Some("a"), "hi"),
            msg("AIMessage", Some("b"), "hello"),
        ]);
        let writes = vec![
            list(vec![msg("AIMessage", Some("b"), "edited")]),
            msg("RemoveMessage", Some("a"), ""),
            msg("RemoveMessage", Some("nobody"), ""),
            list(vec![msg("HumanMessage", Some("c"), "again")]),
        ];
        let (value, fold) = fold(Some(seed), writes).expect("recognised");
        assert_eq!(fold, Fold::Messages);
        assert_eq!(
            value,
            list(vec![
                msg("AIMessage", Some("b"), "edited"),
                msg("HumanMessage", Some("c"), "again"),
            ])
        );
    }

    #[test]
    fn remove_all_and_overwrite_restart_the_value() {
        let seed = list(vec![msg("HumanMessage", Some("a"), "hi")]);
        let all = msg("RemoveMessage", Some(REMOVE_ALL_MESSAGES), "");
        let writes = vec![list(vec![
            msg("AIMessage", Some("b"), "x"),
            all,
            msg("AIMessage", Some("c"), "y"),
        ])];
        let (value, _) = fold(Some(seed), writes).expect("recognised");
        assert_eq!(value, list(vec![msg("AIMessage", Some("c"), "y")]));

        let mut ow = Map::new();
        ow.insert("__overwrite__", list(vec![Value::from("z")]));
        let writes = vec![
            list(vec![Value::from("a")]),
            Value::Map(ow),
            list(vec![Value::from("b")]),
        ];
        let (value, fold) = fold(Some(list(vec![Value::from("s")])), writes).expect("ok");
        assert_eq!(fold, Fold::Concat);
        assert_eq!(value, list(vec![Value::from("z"), Value::from("b")]));
    }

    /// A thread of a `MemorySaver`: checkpoint 1 stores the snapshot `["a"]` and has the
    /// write `["b"]`; checkpoint 2 stores nothing for `items` (counters name it).
    async fn delta_thread() -> (crate::MemorySaver, crate::CheckpointConfig) {
        use crate::{
            ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource,
        };
        let saver = crate::MemorySaver::new();
        let mut one = Checkpoint::empty("1ef00000-0000-6000-8000-000000000001", "t1");
        one.channel_values.insert(
            "items".into(),
            Value::ext(Ext::DeltaSnapshot(list(vec![Value::from("a")]))),
        );
        one.channel_versions
            .insert("items".into(), ChannelVersion::Int(1));
        let meta = CheckpointMetadata::new(CheckpointSource::Input, -1);
        let at_one = saver
            .put(
                &CheckpointConfig::thread("t"),
                &one,
                &meta,
                &one.channel_versions.clone(),
            )
            .await
            .expect("put");
        saver
            .put_writes(
                &at_one,
                &[("items".to_owned(), list(vec![Value::from("b")]))],
                "task",
                "",
            )
            .await
            .expect("writes");
        let mut two = Checkpoint::empty("1ef00000-0000-6000-8000-000000000002", "t2");
        two.channel_versions
            .insert("items".into(), ChannelVersion::Int(2));
        let mut meta = CheckpointMetadata::new(CheckpointSource::Loop, 0);
        let mut counters = Map::new();
        counters.insert("items", list(vec![Value::Int(1), Value::Int(1)]));
        meta.extra
            .insert(COUNTERS_KEY.to_owned(), Value::Map(counters));
        let at_two = saver
            .put(&at_one, &two, &meta, &two.channel_versions.clone())
            .await
            .expect("put");
        (saver, at_two)
    }

    #[tokio::test]
    async fn rebuilds_over_any_saver_and_unwraps_snapshots() {
        let (saver, head) = delta_thread().await;
        let mut t = saver.get_tuple(&head).await.expect("get").expect("head");
        assert!(!t.checkpoint.channel_values.contains_key("items"));
        let report = rebuild_delta_values(&saver, &mut t).await.expect("rebuild");
        assert_eq!(
            t.checkpoint.channel_values.get("items"),
            Some(&list(vec![Value::from("a"), Value::from("b")]))
        );
        assert_eq!(
            report["items"],
            DeltaValue::Rebuilt {
                fold: Fold::Concat,
                seeded: true,
                writes: 1
            }
        );
        let parent = t.parent_config.clone().expect("a parent");
        let mut p = saver
            .get_tuple(&parent)
            .await
            .expect("get")
            .expect("parent");
        let report = rebuild_delta_values(&saver, &mut p).await.expect("rebuild");
        assert_eq!(report["items"], DeltaValue::Stored);
        assert_eq!(
            p.checkpoint.channel_values.get("items"),
            Some(&list(vec![Value::from("a")]))
        );
    }

    #[test]
    fn what_cannot_be_recognised_is_refused_with_a_reason() {
        let mut d = Map::new();
        d.insert("k", 1);
        let err = fold(Some(Value::Map(d.clone())), vec![Value::Map(d.clone())])
            .expect_err("a dict channel");
        assert!(err.contains("a dict"), "{err}");
        let err = fold(None, vec![Value::Int(3)]).expect_err("a number written");
        assert!(err.contains("a number"), "{err}");
        let tuple_like = list(vec![Value::from("user"), Value::from("hi")]);
        let err = fold(
            Some(list(vec![msg("HumanMessage", Some("a"), "hi")])),
            vec![list(vec![tuple_like])],
        )
        .expect_err("message-like data");
        assert!(err.contains("mixes messages"), "{err}");
    }
}
