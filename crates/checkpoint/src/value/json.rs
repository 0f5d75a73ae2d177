//! A JSON form of any [`Value`]: plain data as itself, Python objects readable.
//!
//! | stored value | JSON |
//! |---|---|
//! | `None`, bools, ints, finite floats, strings | themselves |
//! | NaN, infinities | the strings `"NaN"`, `"inf"`, `"-inf"` |
//! | bytes | `{"$bytes": "<hex>"}` |
//! | list (and tuple: tuples are stored as lists) | array |
//! | dict with string keys | object, keys in insertion order |
//! | dict with other keys | `{"$map": [[key, value], …]}` |
//! | Python object (codes 0–5) | `{"$py": "module.Class", "value": …}`: a UUID's hyphenated text, a datetime's ISO text, else the constructor data (a set's items, a model's or dataclass's fields, a date's `[y, m, d]`, …) |
//! | numpy array | `{"$py": "numpy.ndarray", "value": [dtype, shape, order, {"$bytes": …}]}` |
//! | delta snapshot | `{"$delta": …}` |
//!
//! The form is lossy: a string `"NaN"` and the float NaN, or a user dict shaped like
//! `{"$bytes": …}` and real bytes, come out the same; a tuple comes out as an array; a
//! message's class is kept (`$py`) but not how pydantic rebuilds it. It is meant for
//! people and tools reading values, not for storing them: the checkpoint formats are
//! the serde module's business.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::Value;
use crate::ext::Ext;

impl Value {
    /// The JSON form of the value (see [`crate::value::json`]).
    pub fn to_json(&self) -> serde_json::Value {
        to_json(self)
    }
}

/// The JSON form of a value (see the module), as a `serde_json` tree.
pub fn to_json(value: &Value) -> serde_json::Value {
    // Serializing into a `serde_json::Value` fails only for non-string map keys, which
    // this form never produces.
    serde_json::to_value(AsJson(value)).unwrap_or(serde_json::Value::Null)
}

/// A value serialized in its JSON form (see the module) by any serde serializer, without
/// building a tree first (`serde_json::to_writer(out, &AsJson(&v))`).
#[derive(Clone, Copy, Debug)]
pub struct AsJson<'a>(pub &'a Value);

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 0xf) as usize] as char);
    }
    s
}

impl Serialize for AsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        match value {
            Value::Nil => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i64(*i),
            Value::UInt(u) => s.serialize_u64(*u),
            Value::Float(f) if f.is_finite() => s.serialize_f64(*f),
            Value::Float(f) if f.is_nan() => s.serialize_str("NaN"),
            Value::Float(f) if *f > 0.0 => s.serialize_str("inf"),
            Value::Float(_) => s.serialize_str("-inf"),
            Value::Str(text) => s.serialize_str(text),
            Value::Bytes(b) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("$bytes", &hex(b))?;
                m.end()
            }
            Value::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items.iter() {
                    seq.serialize_element(&AsJson(item))?;
                }
                seq.end()
            }
            Value::Map(map) => {
                if map.iter().all(|(k, _)| k.as_str().is_some()) {
                    let mut m = s.serialize_map(Some(map.len()))?;
                    for (k, v) in map.iter() {
                        m.serialize_entry(k.as_str().unwrap_or_default(), &AsJson(v))?;
                    }
                    m.end()
                } else {
                    let pairs: Vec<(AsJson<'_>, AsJson<'_>)> =
                        map.iter().map(|(k, v)| (AsJson(k), AsJson(v))).collect();
                    let mut m = s.serialize_map(Some(1))?;
                    m.serialize_entry("$map", &pairs)?;
                    m.end()
                }
            }
            Value::Ext(ext) => {
                let mut m = s.serialize_map(Some(2))?;
                match &**ext {
                    Ext::Object(o) => {
                        m.serialize_entry("$py", &format!("{}.{}", o.module, o.class))?;
                        if let Some(u) = value.as_uuid() {
                            m.serialize_entry("value", &u.hyphenated().to_string())?;
                        } else if let Some(iso) = value.as_datetime_iso() {
                            m.serialize_entry("value", iso)?;
                        } else {
                            m.serialize_entry("value", &AsJson(&o.data))?;
                        }
                    }
                    Ext::NumpyArray(payload) => {
                        m.serialize_entry("$py", "numpy.ndarray")?;
                        m.serialize_entry("value", &AsJson(payload))?;
                    }
                    Ext::DeltaSnapshot(inner) => m.serialize_entry("$delta", &AsJson(inner))?,
                }
                m.end()
            }
        }
    }
}
