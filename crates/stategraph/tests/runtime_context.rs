//! The runtime a node sees besides its state: LangGraph's managed values
//! (`RemainingSteps`, `IsLastStep`), the run's typed context (`context_schema`,
//! `Runtime.context`), its config and tags, and the task's execution info.
//!
//! The Python sides are the scripts in `tests/runtime_context/`, run with
//! `STATEGRAPH_PYTHON` or the workspace's `target/langgraph-venv`; without one the
//! interop tests print a note and pass, unless `STATEGRAPH_INTEROP=1`.
#![allow(clippy::unwrap_used)]

mod support;

#[path = "runtime_context/managed.rs"]
mod managed;
