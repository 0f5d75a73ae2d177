//! The value model: everything LangGraph's serializer can write, and nothing that can run.
//!
//! A [`Value`] mirrors the msgpack data model that `JsonPlusSerializer` produces: nil,
//! booleans, 64-bit integers (signed, and unsigned above `i64::MAX`), float64, UTF-8
//! strings, bytes, lists, maps whose keys may be any value (kept in insertion order, as a
//! Python dict is), and the extension types LangGraph uses for Python objects
//! ([`Ext`](crate::Ext)).
//! Extension values are plain data: decoding one never constructs or runs anything.
//!
//! # Sharing
//!
//! Every payload (string, bytes, list, map, extension) is reference counted, so cloning a
//! [`Value`] is O(1) whatever its size: a value written once is never deep-copied again,
//! whether it is read by a node, held by a channel, put in a checkpoint or queued for a
//! save. Mutation is copy-on-write (see [`List`] and [`Map`]).

mod display;
pub mod json;
mod map;
pub mod repr;
mod shared;
mod types;

pub use display::Repr;
pub use json::{to_json, AsJson};
pub use map::{Map, INDEX_THRESHOLD};
pub use shared::{Bytes, List, Str};
pub(crate) use shared::{EncodedChunk, EncodedItems};
pub use types::Value;

/// Builds a [`Value::Map`] with string keys: `map! { "a" => 1, "b" => "x" }`.
#[macro_export]
macro_rules! map {
    () => { $crate::Value::Map($crate::Map::new()) };
    ($($k:expr => $v:expr),+ $(,)?) => {{
        let mut m = $crate::Map::new();
        $( m.insert($crate::Value::from($k), $crate::Value::from($v)); )+
        $crate::Value::Map(m)
    }};
}

/// Builds a [`Value::List`]: `list![1, "a"]`.
#[macro_export]
macro_rules! list {
    ($($v:expr),* $(,)?) => { $crate::Value::list(vec![$($crate::Value::from($v)),*]) };
}
