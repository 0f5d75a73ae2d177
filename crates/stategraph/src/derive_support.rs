//! Support for the code `#[derive(State)]` generates; not a public API.

use std::any::Any;

use serde::de::DeserializeOwned;
use serde::Serialize;
use stategraph_checkpoint::serde::rust::{from_value_ref, to_value};
use stategraph_checkpoint::{Bytes, List, Map, Str, Value};

use crate::error::{Error, Result};

pub use indexmap::IndexMap;

pub use crate::graph::json_probe::{SchemaProbe, ViaJsonSchema, ViaNothing};
pub use serde_json::Value as Json;

/// The initial value of a reducer channel: the field type's default, or none (Python's
/// MISSING, the first write becomes the value) when that default is `None`/unit or does
/// not convert.
pub fn initial<T: Serialize + Default>() -> Option<Value> {
    to_value(&T::default()).ok().filter(|v| !v.is_nil())
}

/// Reads a field from its channel's value.
///
/// A field of a shared value type ([`Value`], [`List`], [`Map`], [`Str`], [`Bytes`])
/// takes a handle to the channel's value: O(1), whatever its size (a long history read by
/// every node costs nothing). Other types are deserialized.
pub fn field_from_value<T: DeserializeOwned + 'static>(channel: &str, value: &Value) -> Result<T> {
    if let Some(shared) = shared_from_value::<T>(value) {
        return Ok(shared);
    }
    // Borrowing deserialization: no copy of the stored value before it becomes a `T`.
    from_value_ref(value).map_err(|e| Error::State(format!("channel {channel:?}: {e}")))
}

/// Writes a field as its channel's value (a shared value type is written as a handle,
/// not rebuilt).
pub fn field_to_value<T: Serialize + 'static>(channel: &str, value: &T) -> Result<Value> {
    if let Some(shared) = shared_to_value(value) {
        return Ok(shared);
    }
    to_value(value).map_err(|e| Error::State(format!("channel {channel:?}: {e}")))
}

/// `value` as a `T` when `T` is a shared value type and `value` has its shape.
fn shared_from_value<T: 'static>(value: &Value) -> Option<T> {
    let mut out: Option<T> = None;
    let slot = &mut out as &mut dyn Any;
    if let Some(s) = slot.downcast_mut::<Option<Value>>() {
        *s = Some(value.clone());
    } else if let Some(s) = slot.downcast_mut::<Option<List>>() {
        *s = match value {
            Value::List(v) => Some(v.clone()),
            _ => None,
        };
    } else if let Some(s) = slot.downcast_mut::<Option<Map>>() {
        *s = value.as_map().cloned();
    } else if let Some(s) = slot.downcast_mut::<Option<Str>>() {
        *s = match value {
            Value::Str(v) => Some(v.clone()),
            _ => None,
        };
    } else if let Some(s) = slot.downcast_mut::<Option<Bytes>>() {
        *s = match value {
            Value::Bytes(v) => Some(v.clone()),
            _ => None,
        };
    }
    out
}

/// `value` as a [`Value`] handle when `T` is a shared value type.
fn shared_to_value<T: 'static>(value: &T) -> Option<Value> {
    let any = value as &dyn Any;
    if let Some(v) = any.downcast_ref::<Value>() {
        return Some(v.clone());
    }
    if let Some(v) = any.downcast_ref::<List>() {
        return Some(Value::List(v.clone()));
    }
    if let Some(v) = any.downcast_ref::<Map>() {
        return Some(Value::Map(v.clone()));
    }
    if let Some(v) = any.downcast_ref::<Str>() {
        return Some(Value::Str(v.clone()));
    }
    any.downcast_ref::<Bytes>().map(|v| Value::Bytes(v.clone()))
}
