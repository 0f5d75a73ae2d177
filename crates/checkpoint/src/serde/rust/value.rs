//! `Serialize` and `Deserialize` for [`Value`]: exact through this module, readable elsewhere.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess};
use serde::ser::{Serialize, SerializeMap, Serializer};

use super::protocol::{ext_from_rendering, MAGIC_EXT, MAGIC_VALUE};
use crate::ext::Ext;
use crate::value::{Bytes, List, Map, Str, Value};

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Nil => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Int(i) => serializer.serialize_i64(*i),
            Value::UInt(u) => serializer.serialize_u64(*u),
            Value::Float(f) => serializer.serialize_f64(*f),
            Value::Str(s) => serializer.serialize_str(s),
            Value::Bytes(b) => serializer.serialize_bytes(b),
            Value::List(l) => serializer.collect_seq(l),
            Value::Map(m) => serializer.collect_map(m.iter()),
            Value::Ext(e) => serializer.serialize_newtype_struct(MAGIC_EXT, &Rendering(e)),
        }
    }
}

/// An extension value in its readable map form (see the module docs).
struct Rendering<'a>(&'a Ext);

impl Serialize for Rendering<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Ext::Object(o) => {
                let len = if o.method.is_some() { 5 } else { 4 };
                let mut map = serializer.serialize_map(Some(len))?;
                map.serialize_entry("$ext", &(o.code as i8))?;
                map.serialize_entry("module", &o.module)?;
                map.serialize_entry("class", &o.class)?;
                map.serialize_entry("data", &o.data)?;
                if let Some(method) = &o.method {
                    map.serialize_entry("method", method)?;
                }
                map.end()
            }
            Ext::NumpyArray(data) | Ext::DeltaSnapshot(data) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("$ext", &self.0.code())?;
                map.serialize_entry("data", data)?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_newtype_struct(MAGIC_VALUE, ValueVisitor)
    }
}

/// Builds a [`Value`] from whatever a deserializer presents.
struct ValueVisitor;

impl<'de> de::Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from_u64(v))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(i), _) => Ok(Value::Int(i)),
            (_, Ok(u)) => Ok(Value::UInt(u)),
            _ => Err(E::custom(format!(
                "integer {v} is outside the 64-bit range"
            ))),
        }
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        match u64::try_from(v) {
            Ok(u) => Ok(Value::from_u64(u)),
            Err(_) => Err(E::custom(format!(
                "integer {v} is outside the 64-bit range"
            ))),
        }
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.into()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v.into()))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Bytes(v.into()))
    }
    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Value, E> {
        Ok(Value::Bytes(v.into()))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Nil)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        // Not `Value::deserialize`: a foreign deserializer answers the magic newtype name
        // with this very call, and would loop.
        d.deserialize_any(ValueVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element::<Value>()? {
            list.push(v);
        }
        Ok(Value::List(list.into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some(entry) = map.next_entry::<Value, Value>()? {
            pairs.push(entry);
        }
        Ok(Value::Map(Map::from_pairs(pairs)))
    }
    /// This module's deserializer presents an extension value as the variant
    /// [`MAGIC_EXT`]; any other variant becomes `{name: payload}`.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (name, variant) = data.variant::<String>()?;
        let payload = variant.newtype_variant::<Value>()?;
        if name == MAGIC_EXT {
            return match ext_from_rendering(payload) {
                Some(ext) => Ok(Value::ext(ext)),
                None => Err(de::Error::custom("malformed extension value")),
            };
        }
        Ok(Value::Map(Map::from_pairs(vec![(
            Value::Str(name.into()),
            payload,
        )])))
    }
}

impl Serialize for List {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl Serialize for Map {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

/// Deserializes a shared payload type through [`Value`], checking its shape.
macro_rules! deserialize_shared {
    ($t:ident, $what:literal) => {
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$t, D::Error> {
                match Value::deserialize(deserializer)? {
                    Value::$t(v) => Ok(v),
                    other => Err(de::Error::custom(format!(
                        concat!("expected ", $what, ", got {:?}"),
                        other
                    ))),
                }
            }
        }
    };
}
deserialize_shared!(List, "a list");
deserialize_shared!(Map, "a map");
deserialize_shared!(Str, "a string");
deserialize_shared!(Bytes, "bytes");
