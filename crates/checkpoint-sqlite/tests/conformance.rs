//! The conformance suite against `SqliteSaver`, in memory and on a file.
//!
//! The suite runs unfenced (it re-puts old checkpoints and puts unrelated ones into one
//! namespace, which the fence refuses by design); the fence group and the tightened
//! write rules run on fenced savers in `fenced`.

use stategraph_checkpoint_conformance::conformance_suite;
use stategraph_checkpoint_sqlite::SqliteSaver;

#[path = "suite/support.rs"]
#[allow(dead_code)]
mod support;

mod in_memory {
    use super::*;

    conformance_suite!(
        make = async {
            SqliteSaver::in_memory()
                .expect("open in memory")
                .with_fencing(false)
        }
    );
}

mod on_file {
    use super::support::TempSaver;
    use super::*;

    // A fresh file per test, removed when the test's saver is dropped.
    conformance_suite!(make = async { TempSaver::unfenced("conformance") });
}

mod fenced {
    use super::support::TempSaver;
    use super::*;
    use stategraph_checkpoint_conformance::{behaviours, run_behaviour, Capability, Outcome};

    use stategraph_checkpoint_conformance::Behaviour;

    /// The fence group, and the tightened write rules (checked on fenced savers too).
    fn chosen() -> Vec<Behaviour> {
        let chosen: Vec<Behaviour> = behaviours()
            .into_iter()
            .filter(|b| {
                b.capability == Capability::Fence || b.name.starts_with("tightened::repeated_")
            })
            .collect();
        assert_eq!(chosen.len(), 8 + 3);
        chosen
    }

    async fn check(saver: &SqliteSaver, behaviour: &Behaviour) {
        let outcome = run_behaviour(saver, behaviour, &[]).await;
        assert_eq!(outcome, Outcome::Passed, "{}", behaviour.name);
    }

    #[tokio::test]
    async fn in_memory() {
        for behaviour in chosen() {
            check(&SqliteSaver::in_memory().expect("open"), &behaviour).await;
        }
    }

    #[tokio::test]
    async fn on_file() {
        for behaviour in chosen() {
            check(&TempSaver::new("fence"), &behaviour).await;
        }
    }
}
