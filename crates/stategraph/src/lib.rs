#![doc = include_str!("docs/guide.md")]
#![doc = include_str!("docs/persistence.md")]
#![doc = include_str!("docs/streaming.md")]
#![doc = include_str!("docs/interrupts.md")]
#![doc = include_str!("docs/time_travel.md")]
#![doc = include_str!("docs/agent.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

// `#[derive(State)]` names `::stategraph::...`; this lets the crate use it on its own types.
extern crate self as stategraph;

pub mod channels;
pub mod config;
#[doc(hidden)]
pub mod derive_support;
pub mod error;
pub mod functional;
pub mod graph;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod messages;
#[cfg(feature = "models")]
#[cfg_attr(docsrs, doc(cfg(feature = "models")))]
pub mod models;
pub mod overwrite;
pub mod prebuilt;
pub mod pregel;
pub mod reducers;
pub mod run_context;
pub mod spans;
pub mod state;
pub mod thread_head;
#[cfg(feature = "mcp")]
mod tls;
pub mod types;

pub use config::{AsRunConfig, Durability, RunConfig};
pub use error::{Error, InputFate, Result};
pub use graph::typed_stream::{FromWrites, MessageMetadata, StreamOptions, StreamPart};
pub use graph::{
    CompileOptions, CompiledGraph, IntoNodeOutput, NoInput, NodeContext, NodeError, NodeInput,
    NodeOptions, Outcome, RunStream, StateGraph, StateUpdate, COPY, END, INPUT, START,
};
pub use messages::{Message, Role, ToolCall};
pub use overwrite::Overwrite;
pub use pregel::managed::Managed;
pub use pregel::runtime_context::{ContextError, ContextType, ExecutionInfo, RunContext};
pub use pregel::sources::Sources;
pub use pregel::stream::{StreamEvent, StreamMode};
pub use state::{update, DynState, IntoUpdate, State};
#[doc(inline)]
pub use stategraph_derive::State;
pub use thread_head::ThreadHead;
pub use types::{Command, Goto, Interrupt, Resume, Send};

/// JSON schemas from Rust types (feature `schemars`, on by default): derive
/// `JsonSchema` on a tool's argument type for [`Tool::typed`](prebuilt::Tool::typed).
#[cfg(feature = "schemars")]
#[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
pub use schemars;
pub use stategraph_checkpoint as checkpoint;
pub use stategraph_checkpoint::{list, map, Map, Value};
/// The Postgres saver, `PostgresSaver` (feature `postgres`).
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;

#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use stategraph_checkpoint_postgres as postgres;
/// The SQLite saver (feature `sqlite`, on by default).
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use stategraph_checkpoint_sqlite as sqlite;
/// The long-term store (crate `stategraph-store`): [`BaseStore`](store::BaseStore),
/// [`InMemoryStore`](store::InMemoryStore), items, ops; `SqliteStore` with the `sqlite`
/// feature (on by default) and `PostgresStore` with `postgres`.
pub mod store {
    #[doc(inline)]
    pub use stategraph_store::*;
    /// The Postgres store's crate (`stategraph-store-postgres`; feature `postgres`):
    /// migrations and the vector backends besides [`PostgresStore`].
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use stategraph_store_postgres as postgres;
    /// The store on Python's `PostgresStore` tables (feature `postgres`).
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use stategraph_store_postgres::PostgresStore;
    /// The store on Python's `SqliteStore` tables (crate `stategraph-store-sqlite`; feature
    /// `sqlite`, on by default).
    #[cfg(feature = "sqlite")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
    pub use stategraph_store_sqlite::SqliteStore;
}
