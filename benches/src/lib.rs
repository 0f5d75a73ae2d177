//! Shared parts of stategraph's benchmarks: the savers compared, the scenario graphs of
//! `shared/bench/SCENARIOS.md`, checkpoint fixtures, and the reading of results.
//!
//! # Design
//!
//! The criterion benches (`benches/saver.rs`, `benches/engine.rs`) are one harness each,
//! generic over `Arc<dyn CheckpointSaver>`: every saver listed in [`savers::SaverKind`]
//! runs the same cases, so adding a backend is one variant there. The graphs are built
//! here rather than in the benches so that `profile` (a small binary run under
//! callgrind) profiles exactly the graph that is timed. `compare` reads criterion's
//! estimates and the Python driver's results and prints the Rust / Python table.

pub mod fixtures;
pub mod io_concurrency;
pub mod io_report;
pub mod io_runs;
pub mod io_store;
pub mod report;
pub mod savers;
pub mod scenarios;
pub mod scenarios_io;
pub mod temp_sqlite;
