//! The serializer protocol ([`Serializer`]) and what it speaks: the `(type tag, bytes)`
//! pair ([`Typed`]) and LangGraph's type tags. Below every serializer that implements it;
//! `serde` re-exports it.

use std::borrow::Cow;
use std::fmt;

use crate::checkpoint::Checkpoint;
use crate::error::Result;
use crate::serde::msgpack::DecodeMemo;
use crate::serde::shared_bytes::SharedBytes;
use crate::value::Value;

/// A serialized value: LangGraph's `(type, bytes)` pair.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Typed {
    /// The type tag: `msgpack`, `bytes`, `bytearray`, `null`, `json`, `empty`, or an
    /// encrypted form such as `msgpack+aes`.
    pub tag: Cow<'static, str>,
    /// The bytes.
    pub bytes: Vec<u8>,
}

impl Typed {
    /// A pair from a tag and bytes.
    pub fn new(tag: impl Into<Cow<'static, str>>, bytes: Vec<u8>) -> Typed {
        Typed {
            tag: tag.into(),
            bytes,
        }
    }

    /// The `("empty", b"")` sentinel savers store for "no value at this version".
    pub fn empty() -> Typed {
        Typed::new(TAG_EMPTY, Vec::new())
    }

    /// True for the `empty` sentinel.
    pub fn is_empty_sentinel(&self) -> bool {
        self.tag == TAG_EMPTY
    }
}

impl fmt::Debug for Typed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({:?}, {} bytes)", self.tag, self.bytes.len())
    }
}

/// Tag of msgpack-encoded values.
pub const TAG_MSGPACK: &str = "msgpack";
/// Tag of raw bytes.
pub const TAG_BYTES: &str = "bytes";
/// Tag of a Python bytearray (read as bytes).
pub const TAG_BYTEARRAY: &str = "bytearray";
/// Tag of `None` (no bytes).
pub const TAG_NULL: &str = "null";
/// Tag of legacy JSON values (read only).
pub const TAG_JSON: &str = "json";
/// The savers' sentinel for "channel had no value at this version".
pub const TAG_EMPTY: &str = "empty";

/// LangGraph's serializer protocol: `dumps_typed` / `loads_typed`.
pub trait Serializer: Send + Sync + fmt::Debug {
    /// Serializes a value to a tag and bytes.
    fn dumps_typed(&self, value: &Value) -> Result<Typed>;

    /// Deserializes a tag and bytes. Never executes anything: unknown tags, malformed or
    /// hostile bytes give an error.
    fn loads_typed(&self, tag: &str, bytes: &[u8]) -> Result<Value>;

    /// [`Serializer::dumps_typed`] with the bytes as [`SharedBytes`]: a serializer that
    /// writes long lists with encode once may hand out their shared pieces instead of a
    /// copy. Provided: the bytes of `dumps_typed` as one piece.
    fn dumps_typed_shared(&self, value: &Value) -> Result<(Cow<'static, str>, SharedBytes)> {
        let typed = self.dumps_typed(value)?;
        Ok((typed.tag, typed.bytes.into()))
    }

    /// True when `loads_typed(dumps_typed(v))` always equals `v`, so that a saver may keep
    /// the value it was given instead of decoding the bytes it stored (MemorySaver does,
    /// for the latest version of each channel). Defaults to `false`.
    fn round_trips(&self) -> bool {
        false
    }

    /// Serializes a checkpoint (with or without its `channel_values`). The same as
    /// `dumps_typed(&checkpoint.to_value(with_values))`; serializers may write it more
    /// directly (savers call this once per super-step).
    fn dumps_checkpoint(&self, checkpoint: &Checkpoint, with_values: bool) -> Result<Typed> {
        self.dumps_typed(&checkpoint.to_value(with_values))
    }

    /// [`Serializer::loads_typed`], which may reuse the long lists `memo` remembers (see
    /// [`DecodeMemo`]); the value is the same. Provided: `loads_typed`.
    fn loads_typed_with_memo(&self, tag: &str, bytes: &[u8], memo: &DecodeMemo) -> Result<Value> {
        let _ = memo;
        self.loads_typed(tag, bytes)
    }
}
