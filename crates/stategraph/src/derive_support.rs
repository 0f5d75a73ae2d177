//! Support for the code `#[derive(State)]` generates; not a public API.

use serde::de::DeserializeOwned;
use serde::Serialize;
use stategraph_checkpoint::serde::rust::{from_value_ref, to_value};
use stategraph_checkpoint::Value;

use crate::error::{Error, Result};

pub use indexmap::IndexMap;

/// The initial value of a reducer channel: the field type's default, or none (Python's
/// MISSING, the first write becomes the value) when that default is `None`/unit or does
/// not convert.
pub fn initial<T: Serialize + Default>() -> Option<Value> {
    to_value(&T::default()).ok().filter(|v| !v.is_nil())
}

/// Reads a field from its channel's value.
pub fn field_from_value<T: DeserializeOwned>(channel: &str, value: &Value) -> Result<T> {
    // Borrowing deserialization: no copy of the stored value before it becomes a `T`.
    from_value_ref(value).map_err(|e| Error::State(format!("channel {channel:?}: {e}")))
}

/// Writes a field as its channel's value.
pub fn field_to_value<T: Serialize>(channel: &str, value: &T) -> Result<Value> {
    to_value(value).map_err(|e| Error::State(format!("channel {channel:?}: {e}")))
}
