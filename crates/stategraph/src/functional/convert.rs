//! Values in and out of the functional API's Rust types (serde over msgpack's data model).

use serde::de::DeserializeOwned;
use serde::Serialize;
use stategraph_checkpoint::serde::rust::{from_value_ref, to_value};
use stategraph_checkpoint::Value;

/// `value` as a `T` (the serde error's text on failure).
pub(crate) fn decode<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    from_value_ref(value).map_err(|e| e.to_string())
}

/// `value` as a stored value (the serde error's text on failure).
pub(crate) fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Value, String> {
    to_value(value).map_err(|e| e.to_string())
}
