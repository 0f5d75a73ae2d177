//! Behaviour of the engine as a user sees it: compile errors, reducers, parallel steps,
//! `Send` and per-node input types, loops and the recursion limit, failing nodes, `Command`, and streaming. The
//! expected values are what Python LangGraph does with the same graph.
#![allow(clippy::unwrap_used)]

#[path = "engine/commands.rs"]
mod commands;
#[path = "engine/compile_errors.rs"]
mod compile_errors;
#[path = "engine/failures.rs"]
mod failures;
#[path = "engine/inputs.rs"]
mod inputs;
#[path = "engine/loops.rs"]
mod loops;
#[path = "engine/messages_mode.rs"]
mod messages_mode;
#[path = "engine/outcomes.rs"]
mod outcomes;
#[path = "engine/parallel.rs"]
mod parallel;
#[path = "engine/reducers.rs"]
mod reducers;
#[path = "engine/streaming.rs"]
mod streaming;
#[path = "engine/typed_stream.rs"]
mod typed_stream;
#[path = "engine/util.rs"]
mod util;
