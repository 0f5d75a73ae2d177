//! The serde `Deserializer` that reads any `Deserialize` type out of a [`Value`].

use serde::de::{self, DeserializeSeed, Deserializer as _, IntoDeserializer, Unexpected, Visitor};

use super::protocol::{ext_rendering, SerdeError, MAGIC_EXT, MAGIC_VALUE};
use crate::ext::Ext;
use crate::value::Value;

type Result<T> = std::result::Result<T, SerdeError>;

/// A value to read, owned (moved out, see `from_value`) or borrowed (`from_value_ref`).
pub(super) enum Src<'de> {
    /// Borrowed: strings and bytes are handed out as borrows of the input.
    Ref(&'de Value),
    /// Owned: strings, bytes and containers are moved out, never copied.
    Own(Value),
}

/// Deserializes from a [`Value`]; see the [module docs](super) for the mapping.
pub(super) struct ValueDeserializer<'de>(pub(super) Src<'de>);

/// The payload a Python object stands for when read as plain data.
fn ext_data(ext: &Ext) -> &Value {
    match ext {
        Ext::Object(o) => &o.data,
        Ext::NumpyArray(v) | Ext::DeltaSnapshot(v) => v,
    }
}

fn into_ext_data(ext: Ext) -> Value {
    match ext {
        Ext::Object(o) => o.data,
        Ext::NumpyArray(v) | Ext::DeltaSnapshot(v) => v,
    }
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Nil => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Int(i) => Unexpected::Signed(*i),
        Value::UInt(u) => Unexpected::Unsigned(*u),
        Value::Float(f) => Unexpected::Float(*f),
        Value::Str(s) => Unexpected::Str(s),
        Value::Bytes(b) => Unexpected::Bytes(b),
        Value::List(_) => Unexpected::Seq,
        Value::Map(_) => Unexpected::Map,
        Value::Ext(_) => Unexpected::Other("extension value"),
    }
}

impl<'de> Src<'de> {
    fn value(&self) -> &Value {
        match self {
            Src::Ref(v) => v,
            Src::Own(v) => v,
        }
    }

    /// Replaces extension values by the data they carry (recursively).
    fn transparent(self) -> Src<'de> {
        let mut src = self;
        loop {
            src = match src {
                Src::Ref(Value::Ext(e)) => Src::Ref(ext_data(e)),
                Src::Own(Value::Ext(e)) => {
                    Src::Own(into_ext_data(std::sync::Arc::unwrap_or_clone(e)))
                }
                other => return other,
            };
        }
    }

    fn invalid_type(&self, exp: &dyn de::Expected) -> SerdeError {
        de::Error::invalid_type(unexpected(self.value()), exp)
    }
}

/// The integer a value holds exactly, if any (floats count when integral).
fn exact_int(value: &Value) -> Option<i128> {
    match value {
        Value::Int(i) => Some((*i).into()),
        Value::UInt(u) => Some((*u).into()),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 2f64.powi(64) => Some(*f as i128),
        _ => None,
    }
}

impl<'de> ValueDeserializer<'de> {
    /// Integer targets: hands over `i64`/`u64` and lets serde range-check.
    fn integer<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let src = self.0.transparent();
        match exact_int(src.value()) {
            Some(n) => match i64::try_from(n) {
                Ok(i) => visitor.visit_i64(i),
                Err(_) => match u64::try_from(n) {
                    Ok(u) => visitor.visit_u64(u),
                    Err(_) => Err(src.invalid_type(&visitor)),
                },
            },
            None => ValueDeserializer(src).deserialize_any(visitor),
        }
    }

    /// Float targets: integers are accepted when the float represents them exactly.
    fn float<V: Visitor<'de>>(self, visitor: V, single: bool) -> Result<V::Value> {
        let src = self.0.transparent();
        let as_float = |n: i128| {
            let f = if single {
                f64::from(n as f32)
            } else {
                n as f64
            };
            (f as i128 == n).then_some(f)
        };
        let exact = match src.value() {
            Value::Int(i) => as_float((*i).into()),
            Value::UInt(u) => as_float((*u).into()),
            _ => None,
        };
        match (exact, src.value()) {
            (Some(f), _) => visitor.visit_f64(f),
            (None, Value::Int(_) | Value::UInt(_)) => Err(src.invalid_type(&visitor)),
            _ => ValueDeserializer(src).deserialize_any(visitor),
        }
    }
}

impl<'de> de::Deserializer<'de> for ValueDeserializer<'de> {
    type Error = SerdeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0.transparent() {
            Src::Ref(v) => match v {
                Value::Str(s) => visitor.visit_borrowed_str(s),
                Value::Bytes(b) => visitor.visit_borrowed_bytes(b),
                Value::List(l) => visit_seq(l.iter().map(Src::Ref), l.len(), visitor),
                Value::Map(m) => {
                    let pairs = m.as_slice().iter().map(|(k, v)| (Src::Ref(k), Src::Ref(v)));
                    visit_map(pairs, m.len(), visitor)
                }
                scalar => visit_scalar(scalar, visitor),
            },
            Src::Own(v) => match v {
                Value::Str(s) => visitor.visit_string(s.to_string()),
                Value::Bytes(b) => visitor.visit_byte_buf(b.to_vec()),
                Value::List(l) => {
                    let len = l.len();
                    visit_seq(l.into_iter().map(Src::Own), len, visitor)
                }
                Value::Map(m) => {
                    let len = m.len();
                    let pairs = m.into_iter().map(|(k, v)| (Src::Own(k), Src::Own(v)));
                    visit_map(pairs, len, visitor)
                }
                scalar => visit_scalar(&scalar, visitor),
            },
        }
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.integer(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.integer(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.integer(visitor)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.integer(visitor)
    }
    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.integer(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.integer(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.integer(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.integer(visitor)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.integer(visitor)
    }
    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.integer(visitor)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.float(visitor, true)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.float(visitor, false)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        // Only a plain `Nil` is `None`; anything else, extension values included, is
        // handed over untouched (an `Option<Value>` keeps them exactly).
        match self.0.value() {
            Value::Nil => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if name != MAGIC_VALUE {
            return visitor.visit_newtype_struct(self);
        }
        // A `Value` is the target: extension values are handed over whole.
        match self.0 {
            Src::Ref(Value::Ext(e)) => visitor.visit_enum(ExtAccess(ext_rendering((**e).clone()))),
            Src::Own(Value::Ext(e)) => {
                visitor.visit_enum(ExtAccess(ext_rendering(std::sync::Arc::unwrap_or_clone(e))))
            }
            src => ValueDeserializer(src).deserialize_any(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let src = self.0.transparent();
        match src {
            Src::Ref(Value::Str(_)) | Src::Own(Value::Str(_)) => visitor.visit_enum(EnumAccess {
                variant: src,
                payload: None,
            }),
            Src::Ref(Value::Map(m)) if m.len() == 1 => {
                let (k, v) = &m.as_slice()[0];
                let (variant, payload) = (Src::Ref(k), Some(Src::Ref(v)));
                visitor.visit_enum(EnumAccess { variant, payload })
            }
            Src::Own(Value::Map(m)) if m.len() == 1 => match m.into_iter().next() {
                Some((k, v)) => {
                    let (variant, payload) = (Src::Own(k), Some(Src::Own(v)));
                    visitor.visit_enum(EnumAccess { variant, payload })
                }
                None => Err(de::Error::custom("empty enum map")),
            },
            other => Err(other.invalid_type(&"a variant name or a single-entry map")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map
        struct identifier
    }
}

fn visit_scalar<'de, V: Visitor<'de>>(value: &Value, visitor: V) -> Result<V::Value> {
    match value {
        Value::Nil => visitor.visit_unit(),
        Value::Bool(b) => visitor.visit_bool(*b),
        Value::Int(i) => visitor.visit_i64(*i),
        Value::UInt(u) => visitor.visit_u64(*u),
        Value::Float(f) => visitor.visit_f64(*f),
        other => Err(de::Error::invalid_type(unexpected(other), &visitor)),
    }
}

fn visit_seq<'de, I, V>(items: I, len: usize, visitor: V) -> Result<V::Value>
where
    I: Iterator<Item = Src<'de>>,
    V: Visitor<'de>,
{
    let mut access = SeqAccess { items, left: len };
    let out = visitor.visit_seq(&mut access)?;
    match access.left {
        0 => Ok(out),
        _ => Err(de::Error::invalid_length(
            len,
            &"fewer elements in the list",
        )),
    }
}

fn visit_map<'de, I, V>(pairs: I, len: usize, visitor: V) -> Result<V::Value>
where
    I: Iterator<Item = (Src<'de>, Src<'de>)>,
    V: Visitor<'de>,
{
    let mut access = MapAccess {
        pairs,
        value: None,
        left: len,
    };
    let out = visitor.visit_map(&mut access)?;
    match access.left {
        0 => Ok(out),
        _ => Err(de::Error::invalid_length(len, &"fewer entries in the map")),
    }
}

struct SeqAccess<I> {
    items: I,
    left: usize,
}

impl<'de, I: Iterator<Item = Src<'de>>> de::SeqAccess<'de> for SeqAccess<I> {
    type Error = SerdeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.items.next() {
            Some(src) => {
                self.left -= 1;
                seed.deserialize(ValueDeserializer(src)).map(Some)
            }
            None => Ok(None),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

struct MapAccess<'de, I> {
    pairs: I,
    value: Option<Src<'de>>,
    left: usize,
}

impl<'de, I: Iterator<Item = (Src<'de>, Src<'de>)>> de::MapAccess<'de> for MapAccess<'de, I> {
    type Error = SerdeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.pairs.next() {
            Some((k, v)) => {
                self.left -= 1;
                self.value = Some(v);
                seed.deserialize(ValueDeserializer(k)).map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value> {
        match self.value.take() {
            Some(v) => seed.deserialize(ValueDeserializer(v)),
            None => Err(de::Error::custom("map value requested before its key")),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// An externally tagged enum: a variant name and, for variants with data, its payload.
struct EnumAccess<'de> {
    variant: Src<'de>,
    payload: Option<Src<'de>>,
}

impl<'de> de::EnumAccess<'de> for EnumAccess<'de> {
    type Error = SerdeError;
    type Variant = VariantAccess<'de>;
    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self::Variant)> {
        let name = seed.deserialize(ValueDeserializer(self.variant))?;
        Ok((name, VariantAccess(self.payload)))
    }
}

struct VariantAccess<'de>(Option<Src<'de>>);

impl<'de> de::VariantAccess<'de> for VariantAccess<'de> {
    type Error = SerdeError;
    fn unit_variant(self) -> Result<()> {
        match self.0 {
            None => Ok(()),
            Some(src) => match src.value() {
                Value::Nil => Ok(()),
                _ => Err(src.invalid_type(&"a unit variant")),
            },
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        match self.0 {
            Some(src) => seed.deserialize(ValueDeserializer(src)),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"a newtype variant",
            )),
        }
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        match self.0 {
            Some(src) => de::Deserializer::deserialize_any(ValueDeserializer(src), visitor),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"a tuple variant",
            )),
        }
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.tuple_variant(0, visitor)
    }
}

/// Hands an extension value to `Value`'s visitor as the enum variant [`MAGIC_EXT`] whose
/// payload is the extension's rendering.
struct ExtAccess(Value);

impl<'de> de::EnumAccess<'de> for ExtAccess {
    type Error = SerdeError;
    type Variant = VariantAccess<'de>;
    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self::Variant)> {
        let name = seed.deserialize(MAGIC_EXT.into_deserializer())?;
        Ok((name, VariantAccess(Some(Src::Own(self.0)))))
    }
}
