//! The Pregel runtime: the pure step algorithm, the run loop with its I/O, task running.

pub mod algo;
pub(crate) mod background;
pub mod cache;
pub mod delta;
pub mod events;
pub mod graph;
pub mod retry;
pub mod run_loop;
pub(crate) mod runner;
pub mod snapshot;
pub mod sources;
pub mod status;
pub mod stream;
pub mod task;
