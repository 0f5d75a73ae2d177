//! Fuzzes the savers against each other (redb's `fuzz_redb` idea): the input is read as a
//! script of saver operations (`stategraph_saver_fuzz::Script`, through `arbitrary`), run
//! on a fresh MemorySaver (the reference model) and a fresh in-memory SqliteSaver, and
//! every answer must be the same (crates/saver-fuzz says what is compared and which
//! documented differences are normalized). Nothing may panic. The seeded test
//! `crates/saver-fuzz/tests/differential.rs` runs the same kind of scripts in CI.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use stategraph_saver_fuzz::{check_in_memory, Script};

/// One runtime for the whole run (a runtime per input would cost more than the input).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

fuzz_target!(|script: Script| {
    if let Err(mismatch) = runtime().block_on(check_in_memory(&script)) {
        panic!("{mismatch}\nscript: {script:#?}");
    }
});
