//! An Agent Server for stategraph: LangGraph's HTTP API, as the official `langgraph-sdk`
//! client calls it, over graphs registered in Rust, with checkpoints, threads and the run
//! queue in one Postgres database.
//!
//! ```no_run
//! # async fn demo(graph: stategraph::StateGraph<stategraph::DynState>) -> stategraph_server::Result<()> {
//! use stategraph::CompileOptions;
//! use stategraph_server::{shutdown_signal, Server, ServerError};
//!
//! let server = Server::builder()
//!     .database_url("postgresql://postgres@127.0.0.1:5432/postgres")
//!     .workers(4)
//!     .graph("seed", move |saver| graph.compile_with(CompileOptions::new().checkpointer(saver)))
//!     .build()
//!     .await?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:2024")
//!     .await
//!     .map_err(|e| ServerError::Startup(e.to_string()))?;
//! // Serves until Ctrl-C or SIGTERM.
//! server.serve(listener, shutdown_signal()).await
//! # }
//! ```
//!
//! `examples/own_graph.rs` serves a graph of one's own state type, start to end.
//!
//! Runs are rows of the `runs` table, claimed by the workers of any process with
//! `FOR UPDATE SKIP LOCKED` and woken by `LISTEN/NOTIFY` (see [`db`]). A run's stream
//! events are rows of `run_events`, announced by `NOTIFY`, so an API process (even one
//! with no workers) streams a run whichever process works on it (see [`hub`]).
//!
//! A process with workers registers its graphs (id, drawing, description) in the
//! database; any process answers the assistants endpoints for those graphs too, queues
//! their runs for the workers that registered them, and reads their threads' state with
//! the graph rebuilt from its description (see [`registry`]; an API process built
//! without graphs is what the `stategraph serve` command runs).

mod app;
pub mod cors;
pub mod db;
pub mod demo;
mod durable;
pub mod error;
mod execute;
pub mod graph;
pub mod graph_input;
pub mod head_cache;
pub mod hub;
mod idle;
pub mod json;
mod message_log;
mod outbox;
pub mod registry;
mod replay;
mod routes;
pub mod run_config;
mod run_events;
pub mod server;
mod shutdown;
mod worker;

pub use cors::Cors;
pub use error::{Result, ServerError};
pub use graph::ServedGraph;
pub use server::{
    assistant_id, Server, ServerBuilder, DEFAULT_EVENT_RETENTION, DEFAULT_POLL, NAMESPACE_GRAPH,
};
pub use shutdown::shutdown_signal;
/// The runs' spans exported over OTLP (feature `otel`): `stategraph::otel`.
#[cfg(feature = "otel")]
pub use stategraph::otel;
