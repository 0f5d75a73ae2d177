//! The conformance suite against `SqliteSaver`, in memory and on a file.

use stategraph_checkpoint_conformance::conformance_suite;
use stategraph_checkpoint_sqlite::SqliteSaver;

#[path = "suite/support.rs"]
#[allow(dead_code)]
mod support;

mod in_memory {
    use super::*;

    conformance_suite!(make = async { SqliteSaver::in_memory().expect("open in memory") });
}

mod on_file {
    use super::support::TempSaver;
    use super::*;

    // A fresh file per test, removed when the test's saver is dropped.
    conformance_suite!(make = async { TempSaver::new("conformance") });
}
