//! LangGraph's 81 conformance behaviours and the tightened ones, against `PostgresSaver`.
//!
//! Each test gets a fresh schema (dropped at its end) and an unfenced saver: the suite
//! re-puts old checkpoints and puts unrelated ones on one thread, which the fence refuses
//! by design (its own tests are in `tests/fence.rs`). Without a reachable server each
//! behaviour reports itself skipped (see `support`).

#[allow(dead_code)]
mod support;

use stategraph_checkpoint_conformance::{conformance_suite, Outcome};

conformance_suite!(
    make = {
        let Some(db) = support::TestDb::unfenced().await else {
            return Outcome::Skipped("Postgres is unreachable".into());
        };
        std::future::ready(db)
    }
);
