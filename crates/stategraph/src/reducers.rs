//! The built-in reducers: `operator.add`, dict merge, `add_messages`, and typed functions.
//!
//! A reducer combines a channel's current value with one written value (a
//! `BinaryOperatorAggregate` channel applies it once per write). Reducers work on
//! [`Value`]s, the stored data model, so that a channel holds exactly what LangGraph's
//! holds; [`from_fn`] wraps a typed Rust function.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;
use stategraph_checkpoint::serde::rust::{from_value, to_value};
use stategraph_checkpoint::{List, Value};

use crate::channels::{ChannelError, Reducer};
use crate::messages::coerce::python_type;
use crate::messages::{Message, REMOVE_ALL_MESSAGES};

/// Python's `operator.add` on values (see [`add_values`]). Every call returns the same
/// reducer, by which a channel can name it ([`name_of`]).
pub fn add() -> Reducer {
    static ADD: std::sync::OnceLock<Reducer> = std::sync::OnceLock::new();
    ADD.get_or_init(|| Arc::new(add_values)).clone()
}

/// Dict merge, the right side winning (see [`merge_values`]). Every call returns the
/// same reducer, by which a channel can name it ([`name_of`]).
pub fn merge() -> Reducer {
    static MERGE: std::sync::OnceLock<Reducer> = std::sync::OnceLock::new();
    MERGE.get_or_init(|| Arc::new(merge_values)).clone()
}

/// A built-in reducer's name and its constructor.
type Builtin = (&'static str, fn() -> Reducer);

/// The built-in reducers by name: `add`, `merge`, `add_messages`.
const BUILTIN: [Builtin; 3] = [
    ("add", add),
    ("merge", merge),
    ("add_messages", add_messages),
];

/// The name of a built-in reducer (`"add"`, `"merge"`, `"add_messages"`), `None` for
/// any other function: what a graph's description ([`crate::channels::ChannelSpec`])
/// records, so that a process without the graph's code can rebuild its channels.
pub fn name_of(reducer: &Reducer) -> Option<&'static str> {
    BUILTIN
        .iter()
        .find(|(_, make)| Arc::ptr_eq(reducer, &make()))
        .map(|(name, _)| *name)
}

/// The built-in reducer [`name_of`] names.
pub fn by_name(name: &str) -> Option<Reducer> {
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, make)| make())
}

/// LangGraph's `add_messages` (see [`add_message_values`]). Every call returns the same
/// reducer, by which a channel knows it merges messages
/// ([`crate::channels::Channel::gives_message_ids`]).
pub fn add_messages() -> Reducer {
    static ADD_MESSAGES: std::sync::OnceLock<Reducer> = std::sync::OnceLock::new();
    ADD_MESSAGES
        .get_or_init(|| Arc::new(add_message_values))
        .clone()
}

/// True when `reducer` is [`add_messages`].
pub(crate) fn is_add_messages(reducer: &Reducer) -> bool {
    Arc::ptr_eq(reducer, &add_messages())
}

/// Gives a fresh uuid4 id to each message object without one written to a channel that
/// merges with `add_messages`, before the write is stored and applied.
///
/// This is where Python's ids come from: `add_messages` sets the id on the written
/// message object itself, and Python's saver, storing the write in the background,
/// usually serializes it after that (a race in Python: sometimes the write is stored
/// first, without the id), so the stored write holds the id the state keeps. Here it is
/// always so. A tuple, dict or string is converted to a new
/// message there, so its write stays as given: such writes are left alone here too.
pub(crate) fn give_written_message_ids(
    channels: &indexmap::IndexMap<String, Box<dyn crate::channels::Channel>>,
    writes: &mut [(String, Value)],
) {
    for (channel, value) in writes.iter_mut() {
        if !channels.get(channel).is_some_and(|c| c.gives_message_ids()) {
            continue;
        }
        match value {
            Value::List(items) if items.iter().any(lacks_id) => {
                for m in items.make_mut().iter_mut() {
                    if lacks_id(m) {
                        ensure_id(m);
                    }
                }
            }
            m if lacks_id(m) => {
                ensure_id(m);
            }
            _ => {}
        }
    }
}

/// A stored (non-chunk) message object without an id.
fn lacks_id(m: &Value) -> bool {
    is_stored_message(m) && message_id(m).is_none()
}

/// Wraps a typed reducer: both values are read as `T`, and the result written back, with
/// the serde conversion of `stategraph_checkpoint::serde::rust`.
pub fn from_fn<T>(f: fn(T, T) -> T) -> Reducer
where
    T: Serialize + DeserializeOwned + 'static,
{
    Arc::new(move |left: Value, right: Value| {
        let read = |v: Value, side: &str| {
            from_value::<T>(v).map_err(|e| ChannelError::Reducer(format!("{side} value: {e}")))
        };
        let out = f(read(left, "current")?, read(right, "written")?);
        to_value(&out).map_err(|e| ChannelError::Reducer(format!("result: {e}")))
    })
}

/// `left + right` with Python's semantics: lists, strings and bytes concatenate; integers
/// (and booleans, which Python counts as integers) add, becoming a float when either side
/// is a float. Anything else, or an integer sum outside the 64-bit range, is a
/// [`ChannelError::Reducer`] worded as Python's `TypeError`.
pub fn add_values(left: Value, right: Value) -> Result<Value, ChannelError> {
    match (left, right) {
        (Value::List(mut a), Value::List(b)) => {
            a.extend(b.iter().cloned());
            Ok(Value::List(a))
        }
        (Value::Str(a), Value::Str(b)) => Ok(Value::from([a.as_str(), b.as_str()].concat())),
        (Value::Bytes(a), Value::Bytes(b)) => {
            Ok(Value::from([a.as_slice(), b.as_slice()].concat()))
        }
        (Value::Float(a), b) if as_int(&b).is_some() || matches!(b, Value::Float(_)) => {
            Ok(Value::Float(a + as_float(&b)))
        }
        (a, Value::Float(b)) if as_int(&a).is_some() => Ok(Value::Float(as_float(&a) + b)),
        (a, b) => match (as_int(&a), as_int(&b)) {
            (Some(x), Some(y)) => int_value(x + y),
            _ => Err(add_type_error(&a, &b)),
        },
    }
}

/// `{**left, **right}`: keys of `left` in their order, each replaced by `right`'s value
/// when `right` has it, then `right`'s new keys. Both sides must be dicts.
pub fn merge_values(left: Value, right: Value) -> Result<Value, ChannelError> {
    match (left, right) {
        (Value::Map(mut a), Value::Map(b)) => {
            for (k, v) in b {
                a.insert(k, v);
            }
            Ok(Value::Map(a))
        }
        (a, b) => Err(ChannelError::Reducer(format!(
            "merge needs two dicts, got '{}' and '{}'",
            python_type(&a),
            python_type(&b)
        ))),
    }
}

/// LangGraph's `add_messages(left, right)`.
///
/// Each side is a list of message-like values, or one such value (a `[role, content]`
/// pair must therefore be inside a list). Both are converted to messages
/// ([`Message::coerce`]; stored messages are kept as they are) and every message without
/// an id gets a fresh uuid4. Then, in `right`'s order: a `RemoveMessage` whose id is
/// [`REMOVE_ALL_MESSAGES`] makes the result the messages after the last such one; a
/// message whose id is already present replaces it in place; a `RemoveMessage` deletes
/// the message with its id (an unknown id is an error); any other message is appended.
pub fn add_message_values(left: Value, right: Value) -> Result<Value, ChannelError> {
    // The left side is usually the channel's shared history: it is edited as a `List`
    // (copy-on-write) rather than rebuilt, so that its unchanged messages keep their
    // identity and their encoding is reused (encode once).
    let mut merged = match left {
        Value::List(l) => l,
        other => List::from(vec![other]),
    };
    let mut right = message_list(right)?;
    let mut remove_all = None;
    for (i, m) in right.iter_mut().enumerate() {
        if ensure_id(m).as_deref() == Some(REMOVE_ALL_MESSAGES) && is_remove(m) {
            remove_all = Some(i);
        }
    }
    if let Some(i) = remove_all {
        return Ok(Value::list(right.split_off(i + 1)));
    }
    // Only messages that are not stored ones yet (or lack an id) need converting: the
    // others are kept as they are, without copying the list.
    let needs_fix = |m: &Value| !is_stored_message(m) || message_id(m).is_none();
    if merged.iter().any(needs_fix) {
        for m in merged.make_mut().iter_mut() {
            if needs_fix(m) {
                *m = message_value(std::mem::take(m))?;
                ensure_id(m);
            }
        }
    }

    let mut index: HashMap<String, usize> = HashMap::with_capacity(merged.len() + right.len());
    for (i, m) in merged.iter().enumerate() {
        index.insert(message_id(m).unwrap_or_default(), i);
    }
    let mut to_remove: HashSet<String> = HashSet::new();
    for m in right {
        let id = message_id(&m).unwrap_or_default();
        match index.get(&id) {
            // The slot stays until the end: a later message with this id may still
            // replace it and cancel the removal.
            Some(_) if is_remove(&m) => {
                to_remove.insert(id);
            }
            Some(&i) => {
                to_remove.remove(&id);
                merged.make_mut()[i] = m;
            }
            None if is_remove(&m) => {
                return Err(ChannelError::Reducer(format!(
                    "Attempting to delete a message with an ID that doesn't exist ('{id}')"
                )));
            }
            None => {
                index.insert(id, merged.len());
                merged.make_mut().push(m);
            }
        }
    }
    if !to_remove.is_empty() {
        merged
            .make_mut()
            .retain(|m| !to_remove.contains(&message_id(m).unwrap_or_default()));
    }
    Ok(Value::List(merged))
}

/// True for a stored (non-chunk) message, which `add_messages` keeps as it is.
fn is_stored_message(v: &Value) -> bool {
    v.as_message()
        .is_some_and(|(class, _)| !class.ends_with("Chunk"))
}

/// One side of `add_messages` as a list of message values.
fn message_list(v: Value) -> Result<Vec<Value>, ChannelError> {
    let items = match v {
        Value::List(items) => items.into_vec(),
        other => vec![other],
    };
    items.into_iter().map(message_value).collect()
}

/// A message-like value as a stored message; a stored (non-chunk) message is kept as is,
/// so that fields this crate does not model survive untouched.
fn message_value(v: Value) -> Result<Value, ChannelError> {
    if let Some((class, _)) = v.as_message() {
        if !class.ends_with("Chunk") {
            return Ok(v);
        }
    }
    Message::coerce(&v)
        .map(|m| m.to_value())
        .map_err(|e| ChannelError::Reducer(message_error(e)))
}

/// The text of a message conversion error.
fn message_error(e: crate::Error) -> String {
    match e {
        crate::Error::State(msg) => msg,
        other => other.to_string(),
    }
}

/// The id of a stored message, if it has one.
fn message_id(m: &Value) -> Option<String> {
    m.as_message()?.1.get("id")?.as_str().map(str::to_owned)
}

/// True for a `RemoveMessage`.
fn is_remove(m: &Value) -> bool {
    m.as_message()
        .is_some_and(|(class, _)| class == "RemoveMessage")
}

/// The message's id, after giving it a fresh uuid4 if it had none.
fn ensure_id(m: &mut Value) -> Option<String> {
    if let Some(id) = message_id(m) {
        return Some(id);
    }
    let Value::Ext(ext) = m else {
        return None;
    };
    let stategraph_checkpoint::Ext::Object(obj) = std::sync::Arc::make_mut(ext) else {
        return None;
    };
    let Value::Map(fields) = &mut obj.data else {
        return None;
    };
    let id = uuid::Uuid::new_v4().to_string();
    fields.insert("id", id.as_str());
    Some(id)
}

/// An integer (or boolean) as `i128`, for Python's int arithmetic.
fn as_int(v: &Value) -> Option<i128> {
    match v {
        Value::Bool(b) => Some(i128::from(*b)),
        Value::Int(i) => Some(i128::from(*i)),
        Value::UInt(u) => Some(i128::from(*u)),
        _ => None,
    }
}

/// A number as a float (Python's `float(x)`); 0.0 for anything else.
fn as_float(v: &Value) -> f64 {
    match v {
        Value::Float(x) => *x,
        // An i128 built from 64-bit values converts like Python's int-to-float.
        other => as_int(other).map_or(0.0, |i| i as f64),
    }
}

/// An integer sum as a canonical value, or an error outside the 64-bit range.
fn int_value(n: i128) -> Result<Value, ChannelError> {
    if let Ok(i) = i64::try_from(n) {
        Ok(Value::Int(i))
    } else if let Ok(u) = u64::try_from(n) {
        Ok(Value::UInt(u))
    } else {
        Err(ChannelError::Reducer(format!(
            "integer sum {n} is outside the 64-bit range"
        )))
    }
}

/// Python's `TypeError` text for `a + b`.
fn add_type_error(a: &Value, b: &Value) -> ChannelError {
    let (ta, tb) = (python_type(a), python_type(b));
    ChannelError::Reducer(match a {
        Value::List(_) | Value::Str(_) => {
            format!("can only concatenate {ta} (not \"{tb}\") to {ta}")
        }
        Value::Bytes(_) => format!("can't concat {tb} to bytes"),
        _ => format!("unsupported operand type(s) for +: '{ta}' and '{tb}'"),
    })
}
