//! Serialization compatible with LangGraph's `JsonPlusSerializer`, byte for byte.
//!
//! A serializer turns a [`Value`](crate::Value) into `(type tag, bytes)` and back ([`Serializer`]).
//! [`JsonPlusSerializer`] writes the tags `msgpack`, `bytes` and `null`, and reads those
//! plus `bytearray`, `empty` and the legacy `json`. [`EncryptedSerializer`] wraps any
//! serializer with AES-EAX, in LangGraph's `EncryptedSerializer` format. The msgpack codec
//! itself lives in [`msgpack`]; conversion between Rust types and [`Value`](crate::Value) in [`rust`].
//!
//! Two rules keep stategraph from widening what Python accepts. The legacy `json` tag is
//! read by Python's own allowlist ([`json_legacy`]): what Python's reader refuses is
//! refused ([`crate::Error::Refused`], with the path inside the value), and what it revives
//! is revived to the value Python would store. [`strict`] mode (off by default, as in
//! Python) refuses on read any stored object outside LangGraph's safe types and a user
//! allowlist ([`crate::Error::Unsafe`]), as `LANGGRAPH_STRICT_MSGPACK=true` does in Python:
//! wrap the serializer, `StrictSerializer::new(JsonPlusSerializer, Allowlist::new())`.

pub mod encrypted;
pub mod json_legacy;
pub mod json_text;
pub mod jsonplus;
mod lc_allowlist;
mod lc_construct;
pub mod msgpack;
pub mod rust;
mod shared_bytes;
pub mod strict;
mod types;
pub(crate) mod unsafe_object;

pub use encrypted::{AesCipher, Cipher, EncryptedSerializer};
pub use jsonplus::JsonPlusSerializer;
pub use shared_bytes::SharedBytes;
pub use strict::{Allowlist, StrictSerializer};
pub use types::{
    Serializer, Typed, TAG_BYTEARRAY, TAG_BYTES, TAG_EMPTY, TAG_JSON, TAG_MSGPACK, TAG_NULL,
};
pub use unsafe_object::UnsafeObject;
