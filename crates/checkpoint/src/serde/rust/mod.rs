//! Conversion between Rust types (serde `Serialize`/`Deserialize`) and [`Value`].
//!
//! [`to_value`] and [`from_value`] map Rust data to the value model the way a LangGraph
//! user moving to Rust would expect, following serde_json's conventions:
//!
//! | Rust                                        | [`Value`]                                   |
//! |---------------------------------------------|---------------------------------------------|
//! | `bool`                                      | `Bool`                                      |
//! | integers                                    | `Int`, or `UInt` above `i64::MAX`; an `i128`/`u128` outside both ranges is [`Error::Encode`](crate::Error::Encode) |
//! | `f32`, `f64`                                | `Float`                                     |
//! | `char`, `str`, `String`                     | `Str`                                       |
//! | bytes (`serde_bytes`)                       | `Bytes`                                     |
//! | `None`, `()`, unit structs                  | `Nil`                                       |
//! | `Some(x)`, newtype structs                  | the value of `x`                            |
//! | sequences, tuples, tuple structs            | `List`                                      |
//! | maps                                        | `Map` in iteration order; keys of any kind  |
//! | structs                                     | `Map` with string keys in declaration order |
//! | unit enum variant                           | `Str(name)`                                 |
//! | newtype, tuple, struct variant              | `{name: payload}`, a single-entry `Map`     |
//! | [`Value`]                                   | itself, exactly, extension values included  |
//!
//! Struct field order is part of the stored bytes: the map keeps it. Both directions
//! report themselves human-readable, as serde_json does, so types such as `uuid::Uuid`
//! or `chrono` dates convert to and from strings.
//!
//! Reading is lenient where nothing is lost: a numeric target accepts `Int`, `UInt` or
//! `Float` when the number converts exactly (`3.0` into a `u8`, `3` into an `f64`), a
//! struct also reads from a list of its fields, and bytes also read from a list of
//! integers. Extension values are transparent: a Python object reads as its constructor
//! data, so a LangChain message reads into a struct with fields `content`, `type`, `id`…,
//! a UUID as its 32-digit hex string, a datetime as its ISO string and a set as a list;
//! numpy arrays and delta snapshots read as their payload.
//!
//! # Values inside Rust types
//!
//! A [`Value`] field of a Rust type round-trips exactly: `Value`'s `Serialize` and
//! `Deserialize` implementations speak to this module's serializer and deserializer
//! through private magic names (as serde_json does for `RawValue`), so extension values
//! pass through untouched. The one exception is a `Value` behind `#[serde(flatten)]` or
//! inside an untagged enum: serde buffers those without the magic names, and extension
//! values there arrive as their data.
//!
//! # `Value` in other formats
//!
//! Other serde formats (serde_json…) see a plain rendering: `Nil` as unit (JSON `null`),
//! numbers, strings, lists and maps as themselves, `Bytes` as bytes (a JSON array of
//! integers) and an extension value as a map:
//!
//! * a Python object: `{"$ext": code, "module": …, "class": …, "data": …}`, plus
//!   `"method": …` when it has one, e.g. `{"$ext": 0, "module": "uuid", "class": "UUID",
//!   "data": "0123…"}`;
//! * a numpy array or a delta snapshot: `{"$ext": 6 or 7, "data": …}`.
//!
//! That rendering is for reading; a foreign format does not turn it back into an
//! extension value (nor a JSON array back into bytes).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::value::Value;

mod de;
mod protocol;
mod ser;
mod value;

/// Converts a Rust value to a [`Value`].
///
/// Fails with [`Error::Encode`](crate::Error::Encode) on an integer outside the 64-bit range, or when the
/// type's `Serialize` implementation itself fails.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value> {
    value.serialize(ser::ValueSerializer).map_err(|e| e.0)
}

/// Converts a [`Value`] to a Rust value, moving strings and containers out of it.
///
/// Fails with [`Error::InvalidData`](crate::Error::InvalidData) when the value does not have the shape of `T`.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T> {
    T::deserialize(de::ValueDeserializer(de::Src::Own(value))).map_err(|e| e.0)
}

/// Converts a borrowed [`Value`] to a Rust value that may borrow strings and bytes from it.
///
/// Fails with [`Error::InvalidData`](crate::Error::InvalidData) when the value does not have the shape of `T`.
pub fn from_value_ref<'de, T: Deserialize<'de>>(value: &'de Value) -> Result<T> {
    T::deserialize(de::ValueDeserializer(de::Src::Ref(value))).map_err(|e| e.0)
}
