//! The checkpoint contract of stategraph: the types every other crate speaks, the saver
//! trait, LangGraph-compatible serde, and the in-memory saver.
//!
//! # Design
//!
//! This crate is deliberately small and stable (it is to stategraph what
//! `langgraph-checkpoint` is to LangGraph, or `tower-service` to tower): backends depend on
//! it and never on the engine. It has no SQL, no runtime and no engine code.
//!
//! * [`Value`] is the data model of everything stored: exactly what LangGraph's msgpack
//!   serializer can write, including its extension types, kept as inert data.
//! * [`Checkpoint`], [`CheckpointMetadata`], [`CheckpointTuple`], [`CheckpointConfig`] and
//!   [`ChannelVersion`] are the v4 format of docs/format.md#checkpoint, with key order preserved so
//!   that the
//!   bytes we write equal LangGraph's.
//! * [`CheckpointSaver`] is object-safe: the engine holds `Arc<dyn CheckpointSaver>`.
//! * [`serde`] reads and writes LangGraph's `(type tag, bytes)` pairs byte for byte. It
//!   never widens what Python allows: legacy `json` rows are revived by Python's own
//!   allowlist (what Python's reader refuses gives [`Error::Refused`] with the path inside
//!   the value, see [`serde::json_legacy`]), and [strict mode](serde::strict) --
//!   `StrictSerializer::new(JsonPlusSerializer, Allowlist::new())` as a saver's serializer,
//!   or `strict::check` on any value -- refuses stored objects outside LangGraph's safe
//!   types and the user's allowlist ([`Error::Unsafe`]), as `LANGGRAPH_STRICT_MSGPACK`.
//! * [`id`] and [`source`] mint checkpoint ids, timestamps and versions exactly as
//!   LangGraph does, from injectable clocks and random sources, so a test can reproduce
//!   the very ids of a Python trace.
//! * [`MemorySaver`] stores what LangGraph's `InMemorySaver` stores, laid out the same way.

pub mod checkpoint;
pub mod config;
pub mod delegate;
pub mod delta;
pub mod error;
pub mod ext;
pub mod fence;
mod fields;
mod float_repr;
pub mod id;
pub mod in_flight;
pub mod inspect;
pub mod list_cursor;
pub mod memory;
pub mod metadata;
pub mod py_objects;
pub mod raw;
pub mod rebuild;
pub mod saver;
pub mod serde;
pub mod source;
pub mod value;
pub mod version;
pub mod version_gen;

pub use checkpoint::{
    write_index, Checkpoint, CheckpointTuple, PendingWrite, CHECKPOINT_FORMAT, WRITES_IDX_MAP,
};
pub use config::{validate_config, CheckpointConfig, MAX_KEY_BYTES};
pub use delegate::DelegatingSaver;
pub use delta::DeltaChannelHistory;
pub use error::{Error, Result};
pub use ext::{Ext, Object, ObjectCode};
pub use in_flight::{InFlightHold, InFlightSaves};
pub use memory::MemorySaver;
pub use metadata::{CheckpointMetadata, CheckpointSource};
pub use rebuild::{rebuild_delta_values, DeltaValue, Fold};
pub use saver::{
    starts_branch, Capabilities, CheckpointSaver, ListOptions, PruneStrategy, SaveOp,
    CONFIG_KEY_BRANCH,
};
pub use value::{Bytes, List, Map, Str, Value};
pub use version::{ChannelVersion, ChannelVersions};

/// The task id of writes that no task produced (client `Command`s).
pub const NULL_TASK_ID: &str = "00000000-0000-0000-0000-000000000000";
