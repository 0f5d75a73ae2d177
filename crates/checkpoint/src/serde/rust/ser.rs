//! The serde `Serializer` that builds a [`Value`] from any `Serialize` type.

use serde::ser::{self, Serialize};

use super::protocol::{ext_from_rendering, SerdeError, MAGIC_EXT};
use crate::error::Error;
use crate::value::{Map, Value};

type Result<T> = std::result::Result<T, SerdeError>;

/// Serializes into a [`Value`]; see the [module docs](super) for the mapping.
pub(super) struct ValueSerializer;

fn encode_error(msg: String) -> SerdeError {
    SerdeError(Error::Encode(msg))
}

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = SerdeError;
    type SerializeSeq = SerializeList;
    type SerializeTuple = SerializeList;
    type SerializeTupleStruct = SerializeList;
    type SerializeTupleVariant = Variant<SerializeList>;
    type SerializeMap = SerializeMap;
    type SerializeStruct = SerializeStruct;
    type SerializeStructVariant = Variant<SerializeStruct>;

    fn serialize_bool(self, v: bool) -> Result<Value> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value> {
        Ok(Value::Int(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value> {
        if let Ok(i) = i64::try_from(v) {
            Ok(Value::Int(i))
        } else if let Ok(u) = u64::try_from(v) {
            Ok(Value::UInt(u))
        } else {
            Err(encode_error(format!(
                "integer {v} is outside the 64-bit range"
            )))
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value> {
        Ok(Value::from_u64(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Value> {
        match u64::try_from(v) {
            Ok(u) => Ok(Value::from_u64(u)),
            Err(_) => Err(encode_error(format!(
                "integer {v} is outside the 64-bit range"
            ))),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<Value> {
        Ok(Value::Float(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Value> {
        Ok(Value::Float(v))
    }
    fn serialize_char(self, v: char) -> Result<Value> {
        Ok(Value::Str(v.to_string().into()))
    }
    fn serialize_str(self, v: &str) -> Result<Value> {
        Ok(Value::Str(v.into()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value> {
        Ok(Value::Bytes(v.into()))
    }
    fn serialize_none(self) -> Result<Value> {
        Ok(Value::Nil)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value> {
        Ok(Value::Nil)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value> {
        Ok(Value::Nil)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value> {
        Ok(Value::Str(variant.into()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Value> {
        let inner = value.serialize(self)?;
        if name == MAGIC_EXT {
            let ext = ext_from_rendering(inner)
                .ok_or_else(|| encode_error("malformed extension value".to_owned()))?;
            return Ok(Value::ext(ext));
        }
        Ok(inner)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value> {
        Ok(single_entry(variant, value.serialize(self)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SerializeList> {
        Ok(SerializeList(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SerializeList> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SerializeList> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<SerializeList>> {
        Ok(Variant {
            name: variant,
            inner: SerializeList(Vec::with_capacity(len)),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<SerializeMap> {
        Ok(SerializeMap {
            pairs: Vec::with_capacity(len.unwrap_or(0)),
            key: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<SerializeStruct> {
        Ok(SerializeStruct(Vec::with_capacity(len)))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<SerializeStruct>> {
        Ok(Variant {
            name: variant,
            inner: SerializeStruct(Vec::with_capacity(len)),
        })
    }
}

/// `{name: value}`: the externally tagged form of an enum variant with data.
fn single_entry(name: &str, value: Value) -> Value {
    Value::Map(Map::from_pairs(vec![(Value::Str(name.into()), value)]))
}

/// Collects sequence and tuple elements into a [`Value::List`].
pub(super) struct SerializeList(Vec<Value>);

impl SerializeList {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.0.push(value.serialize(ValueSerializer)?);
        Ok(())
    }
}

impl ser::SerializeSeq for SerializeList {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Value> {
        Ok(Value::List(self.0.into()))
    }
}

impl ser::SerializeTuple for SerializeList {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Value> {
        Ok(Value::List(self.0.into()))
    }
}

impl ser::SerializeTupleStruct for SerializeList {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Value> {
        Ok(Value::List(self.0.into()))
    }
}

/// Collects map entries, in iteration order, keys of any kind.
pub(super) struct SerializeMap {
    pairs: Vec<(Value, Value)>,
    key: Option<Value>,
}

impl ser::SerializeMap for SerializeMap {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key = Some(key.serialize(ValueSerializer)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let key = self
            .key
            .take()
            .ok_or_else(|| encode_error("map value without a key".to_owned()))?;
        self.pairs.push((key, value.serialize(ValueSerializer)?));
        Ok(())
    }
    fn end(self) -> Result<Value> {
        Ok(Value::Map(Map::from_pairs(self.pairs)))
    }
}

/// Collects struct fields into a map with string keys, in declaration order.
pub(super) struct SerializeStruct(Vec<(Value, Value)>);

impl ser::SerializeStruct for SerializeStruct {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.0
            .push((Value::Str(key.into()), value.serialize(ValueSerializer)?));
        Ok(())
    }
    fn end(self) -> Result<Value> {
        Ok(Value::Map(Map::from_pairs(self.0)))
    }
}

/// A tuple or struct variant: the inner collector, wrapped as `{name: ...}` at the end.
pub(super) struct Variant<T> {
    name: &'static str,
    inner: T,
}

impl ser::SerializeTupleVariant for Variant<SerializeList> {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.inner.push(value)
    }
    fn end(self) -> Result<Value> {
        Ok(single_entry(self.name, Value::List(self.inner.0.into())))
    }
}

impl ser::SerializeStructVariant for Variant<SerializeStruct> {
    type Ok = Value;
    type Error = SerdeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::SerializeStruct::serialize_field(&mut self.inner, key, value)
    }
    fn end(self) -> Result<Value> {
        Ok(single_entry(
            self.name,
            Value::Map(Map::from_pairs(self.inner.0)),
        ))
    }
}
