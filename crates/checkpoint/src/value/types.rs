//! The [`Value`] enum itself, its constructors, accessors and conversions: below the
//! renderers (`display`, `json`, `repr`) that read it, so that the `value` facade only
//! re-exports. `Value`, [`Map`], [`List`] and [`Ext`] hold each other, so this file, `map`,
//! `shared` and `crate::ext` import each other: one data type in four files.

use std::fmt;
use std::sync::Arc;

use super::map::Map;
use super::shared::{Bytes, List, Str};
use crate::ext::Ext;

/// A value stored in a checkpoint, a write or a blob.
///
/// Integers are canonical: a non-negative integer that fits in `i64` is always
/// [`Value::Int`]; [`Value::UInt`] holds only values above `i64::MAX`. The constructors and
/// the decoder keep this invariant, so derived equality compares numbers correctly.
#[derive(Clone, PartialEq, Default)]
pub enum Value {
    /// Python `None`, msgpack nil.
    #[default]
    Nil,
    /// A boolean.
    Bool(bool),
    /// A signed integer (all integers in `i64` range).
    Int(i64),
    /// An unsigned integer above `i64::MAX`.
    UInt(u64),
    /// A float64 (msgpack always writes Python floats as float64).
    Float(f64),
    /// A UTF-8 string (shared).
    Str(Str),
    /// Raw bytes (Python `bytes`, `bytearray` and `memoryview` inside a value; shared).
    Bytes(Bytes),
    /// A list; Python tuples are written as lists and read back as lists (shared).
    List(List),
    /// A map with keys of any type, in insertion order.
    Map(Map),
    /// A msgpack extension value (a Python object such as a UUID, datetime or message;
    /// shared).
    Ext(Arc<Ext>),
}

impl Value {
    /// Builds a string value.
    pub fn str(s: impl Into<Str>) -> Value {
        Value::Str(s.into())
    }

    /// Builds a bytes value.
    pub fn bytes(b: impl Into<Bytes>) -> Value {
        Value::Bytes(b.into())
    }

    /// Builds a list value.
    pub fn list(l: impl Into<List>) -> Value {
        Value::List(l.into())
    }

    /// Builds an extension value.
    pub fn ext(e: Ext) -> Value {
        Value::Ext(Arc::new(e))
    }

    /// Builds an integer value from a `u64`, canonically.
    pub fn from_u64(n: u64) -> Value {
        match i64::try_from(n) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::UInt(n),
        }
    }

    /// The string, if this is a [`Value::Str`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is a [`Value::Int`].
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The float, if this is a [`Value::Float`].
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The boolean, if this is a [`Value::Bool`].
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The map, if this is a [`Value::Map`].
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The map, mutably (copy-on-write), if this is a [`Value::Map`].
    pub fn as_map_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The list, mutably (copy-on-write), if this is a [`Value::List`].
    pub fn as_list_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::List(l) => Some(l.make_mut()),
            _ => None,
        }
    }

    /// The list, if this is a [`Value::List`].
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    /// The bytes, if this is a [`Value::Bytes`].
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The extension value, if this is a [`Value::Ext`].
    pub fn as_ext(&self) -> Option<&Ext> {
        match self {
            Value::Ext(e) => Some(e),
            _ => None,
        }
    }

    /// True for [`Value::Nil`].
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    /// True when both values are the same value by identity: the same payload for
    /// strings, bytes, lists, maps and extensions (no comparison of contents), equal bits
    /// for scalars. Identity implies equality; equal values need not be identical.
    pub fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(x), Value::Bool(y)) => x == y,
            (Value::Int(x), Value::Int(y)) => x == y,
            (Value::UInt(x), Value::UInt(y)) => x == y,
            (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
            (Value::Str(x), Value::Str(y)) => Str::ptr_eq(x, y),
            (Value::Bytes(x), Value::Bytes(y)) => Bytes::ptr_eq(x, y),
            (Value::List(x), Value::List(y)) => List::ptr_eq(x, y),
            (Value::Map(x), Value::Map(y)) => Map::ptr_eq(x, y),
            (Value::Ext(x), Value::Ext(y)) => Arc::ptr_eq(x, y),
            _ => false,
        }
    }

    /// Looks up a string key in a map value; `None` for other values or a missing key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_map().and_then(|m| m.get(key))
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Nil => f.write_str("None"),
            Value::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::UInt(u) => write!(f, "{u}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Bytes(b) => write!(f, "b{:?}", String::from_utf8_lossy(b)),
            Value::List(l) => f.debug_list().entries(l.iter()).finish(),
            Value::Map(m) => fmt::Debug::fmt(m, f),
            Value::Ext(e) => fmt::Debug::fmt(e, f),
        }
    }
}

macro_rules! from_signed {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value { Value::Int(i64::from(n)) }
        }
    )*};
}
from_signed!(i8, i16, i32, i64, u8, u16, u32);

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::from_u64(n)
    }
}
impl From<usize> for Value {
    fn from(n: usize) -> Value {
        Value::from_u64(n as u64)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Float(x)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.into())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s.into())
    }
}
impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::Str(s.into())
    }
}
impl From<Str> for Value {
    fn from(s: Str) -> Value {
        Value::Str(s)
    }
}
impl From<Vec<u8>> for Value {
    fn from(b: Vec<u8>) -> Value {
        Value::Bytes(b.into())
    }
}
impl From<Bytes> for Value {
    fn from(b: Bytes) -> Value {
        Value::Bytes(b)
    }
}
impl From<Vec<Value>> for Value {
    fn from(l: Vec<Value>) -> Value {
        Value::List(l.into())
    }
}
impl From<List> for Value {
    fn from(l: List) -> Value {
        Value::List(l)
    }
}
impl From<Arc<Ext>> for Value {
    fn from(e: Arc<Ext>) -> Value {
        Value::Ext(e)
    }
}
impl From<Map> for Value {
    fn from(m: Map) -> Value {
        Value::Map(m)
    }
}
impl From<Ext> for Value {
    fn from(e: Ext) -> Value {
        Value::Ext(Arc::new(e))
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Nil, Into::into)
    }
}
