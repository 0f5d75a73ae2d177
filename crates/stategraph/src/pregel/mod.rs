//! The Pregel runtime: the pure step algorithm, the run loop with its I/O, task running.

pub mod algo;
pub mod cache;
pub(crate) mod conflict;
pub mod context;
pub mod delta;
pub mod events;
pub mod graph;
pub(crate) mod head;
pub(crate) mod in_flight;
pub mod lease;
pub mod managed;
pub mod node_error;
pub mod node_output;
pub mod retry;
pub mod run_loop;
pub(crate) mod runner;
pub(crate) mod runtime_context;
pub mod snapshot;
pub mod sources;
pub mod spec;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub mod sqlite_cache;
pub mod status;
pub mod stream;
pub(crate) mod stream_messages;
pub(crate) mod targets;
pub mod task;
pub mod writer;
pub mod writes_spec;
