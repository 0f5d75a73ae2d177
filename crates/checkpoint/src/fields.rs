//! Readers of a stored map's fields, shared by the checkpoint and its metadata: a field of
//! the wrong type is [`Error::InvalidData`] naming the field.

use indexmap::IndexMap;

use crate::error::{Error, Result};
use crate::value::Value;

/// The error of a field of the wrong type.
pub(crate) fn bad(field: &str) -> Error {
    Error::InvalidData(format!("checkpoint field {field:?} has the wrong type"))
}

/// A string field, moved out of its value.
pub(crate) fn into_string(v: Value, field: &str) -> Result<String> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        _ => Err(bad(field)),
    }
}

/// Reads a map with string keys, converting each value.
pub(crate) fn string_map<T, S: std::hash::BuildHasher + Default>(
    v: Value,
    field: &str,
    mut f: impl FnMut(Value) -> Result<T>,
) -> Result<IndexMap<String, T, S>> {
    let Value::Map(m) = v else {
        return Err(bad(field));
    };
    let mut out = IndexMap::with_capacity_and_hasher(m.len(), S::default());
    for (k, v) in m {
        out.insert(into_string(k, field)?, f(v)?);
    }
    Ok(out)
}
