//! The functional API (`stategraph::functional`): entrypoints and tasks, checkpointed as
//! the pinned Python LangGraph checkpoints them (golden trace), resumed without rerunning
//! finished tasks, with typed errors; and threads handed between Python and Rust.

mod support;

#[path = "functional/apps.rs"]
mod apps;
#[path = "functional/behaviour.rs"]
mod behaviour;
#[path = "functional/golden.rs"]
mod golden;
