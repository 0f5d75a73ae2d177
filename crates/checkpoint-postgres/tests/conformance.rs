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

/// The optional `fence` group (and the tightened write rules) on a fenced saver: the same
/// behaviours SQLite and MemorySaver pass, so the three fences agree.
#[tokio::test]
async fn fence_group_on_a_fenced_saver() {
    use stategraph_checkpoint_conformance::{behaviours, run_behaviour, Capability};
    let chosen: Vec<_> = behaviours()
        .into_iter()
        .filter(|b| b.capability == Capability::Fence || b.name.starts_with("tightened::repeated_"))
        .collect();
    assert_eq!(chosen.len(), 8 + 3);
    for behaviour in chosen {
        let Some(db) = support::TestDb::create().await else {
            return;
        };
        let outcome = run_behaviour(&*db, &behaviour, &[]).await;
        assert_eq!(outcome, Outcome::Passed, "{}", behaviour.name);
    }
}
