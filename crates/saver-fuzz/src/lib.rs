//! Differential testing of the checkpoint savers (redb's `fuzz_redb` idea): random
//! sequences of saver operations run against [`MemorySaver`] as the reference model and
//! against the savers under test, every answer compared.
//!
//! One op model ([`op`]) serves two drivers: the cargo-fuzz target
//! `fuzz/fuzz_targets/saver_ops.rs`, which reads a [`Script`] from the fuzzer's bytes
//! through `arbitrary`, and `tests/differential.rs`, which makes scripts from seeds
//! ([`seeded`]) and runs in CI. [`world`] turns the op's small numbers into arguments,
//! [`run`] makes the calls and compares, [`answer`] normalizes what a saver answered
//! (and names the one documented difference it removes; the listing order is the other,
//! in [`run`]).
//!
//! [`MemorySaver`]: stategraph_checkpoint::MemorySaver

pub mod answer;
pub mod op;
pub mod run;
pub mod seeded;
pub mod world;

pub use answer::{Answer, Shape};
pub use op::Script;
pub use run::{clear, run_script, run_script_with, Mismatch, Subject};

use stategraph_checkpoint::MemorySaver;
use stategraph_checkpoint_sqlite::SqliteSaver;

/// Runs `script` on a fresh MemorySaver and a fresh in-memory SqliteSaver (small list
/// pages, so that `list_stream` crosses pages): the fuzz target's check.
pub async fn check_in_memory(script: &Script) -> Result<(), Mismatch> {
    let reference = MemorySaver::new()
        .with_fencing(script.fenced)
        .with_list_page(2);
    let sqlite = SqliteSaver::in_memory()
        .expect("an in-memory SQLite database opens")
        .with_fencing(script.fenced)
        .with_list_page(2);
    let subjects = [Subject {
        name: "sqlite (in memory)",
        saver: &sqlite,
        shape: Shape::default(),
    }];
    run_script(script, &reference, &subjects).await
}
