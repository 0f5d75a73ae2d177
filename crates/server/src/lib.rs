//! An Agent Server for stategraph: LangGraph's HTTP API, as the official `langgraph-sdk`
//! client calls it, over graphs registered in Rust, with checkpoints, threads and the run
//! queue in one Postgres database.
//!
//! ```no_run
//! # async fn demo(graph: stategraph::StateGraph<stategraph::DynState>) -> stategraph_server::Result<()> {
//! use stategraph::CompileOptions;
//! use stategraph_server::Server;
//!
//! let server = Server::builder()
//!     .database_url("postgresql://postgres@127.0.0.1:5432/postgres")
//!     .workers(4)
//!     .graph("seed", move |saver| graph.compile_with(CompileOptions::new().checkpointer(saver)))
//!     .build()
//!     .await?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:2024").await
//!     .map_err(|e| stategraph_server::ServerError::Startup(e.to_string()))?;
//! let (_stop, shutdown) = tokio::sync::watch::channel(false);
//! server.serve(listener, shutdown).await
//! # }
//! ```
//!
//! Runs are rows of the `runs` table, claimed by the workers of any process with
//! `FOR UPDATE SKIP LOCKED` and woken by `LISTEN/NOTIFY` (see [`db`]). A run's stream
//! events are rows of `run_events`, announced by `NOTIFY`, so an API process (even one
//! with no workers) streams a run whichever process works on it (see [`hub`]).
//!
//! A process with workers registers its graphs (id and drawing) in the database; a
//! process built without graphs answers the assistants endpoints from those rows and
//! queues runs for the workers that registered them (see [`registry`]; this is what the
//! `stategraph serve` command runs).

pub mod db;
pub mod demo;
mod durable;
pub mod error;
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
mod worker;

pub use error::{Result, ServerError};
pub use graph::ServedGraph;
pub use server::{
    assistant_id, Server, ServerBuilder, DEFAULT_EVENT_RETENTION, DEFAULT_POLL, NAMESPACE_GRAPH,
};
