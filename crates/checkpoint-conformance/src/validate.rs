//! Running the suite: one behaviour against a saver, or every group into a [`Report`].

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use stategraph_checkpoint::CheckpointSaver;

use crate::behaviour::{behaviours, Behaviour, Capability, Failure, Outcome};
use crate::report::{CapabilityReport, Report};

/// Runs one behaviour against `saver`, unless its capability is in `skip` or is optional
/// and not declared by the saver (then [`Outcome::Skipped`]). A panic inside the saver
/// fails the behaviour instead of unwinding.
pub async fn run_behaviour(
    saver: &dyn CheckpointSaver,
    behaviour: &Behaviour,
    skip: &[Capability],
) -> Outcome {
    let capability = behaviour.capability;
    if skip.contains(&capability) {
        return Outcome::Skipped(format!("{capability} is skipped by the caller"));
    }
    if !capability.declared_by(saver.capabilities()) {
        return Outcome::Skipped(format!("the saver does not declare {capability}"));
    }
    match AssertUnwindSafe((behaviour.run)(saver))
        .catch_unwind()
        .await
    {
        Ok(Ok(())) => Outcome::Passed,
        Ok(Err(failure)) => Outcome::Failed(failure),
        Err(panic) => Outcome::Failed(Failure::new(format!(
            "panicked: {}",
            panic_message(panic.as_ref())
        ))),
    }
}

/// The text of a panic payload.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(a non-string panic payload)"
    }
}

/// Runs every behaviour and reports per capability. `make` is called once per capability
/// group (in the order of [`Capability::ALL`]) for a fresh saver, as LangGraph's
/// `validate` does; the behaviours of a group share it, kept apart by fresh thread ids.
/// Gate on [`Report::passed_all_required`] or [`Report::passed_all`].
pub async fn validate<F, Fut, S>(make: F) -> Report
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: CheckpointSaver,
{
    validate_skipping(make, &[]).await
}

/// [`validate`], leaving out the capabilities in `skip` (reported as skipped; skipping a
/// required one makes [`Report::passed_all_required`] false).
pub async fn validate_skipping<F, Fut, S>(mut make: F, skip: &[Capability]) -> Report
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: CheckpointSaver,
{
    let all = behaviours();
    let mut results = Vec::with_capacity(Capability::ALL.len());
    for capability in Capability::ALL {
        let group: Vec<&Behaviour> = all.iter().filter(|b| b.capability == capability).collect();
        let mut result = CapabilityReport::new(capability);
        if skip.contains(&capability) {
            result.skip(group.len(), "skipped by the caller");
            results.push(result);
            continue;
        }
        let saver = make().await;
        if !capability.declared_by(saver.capabilities()) {
            result.skip(group.len(), "not declared by the saver");
            results.push(result);
            continue;
        }
        result.detected = true;
        for behaviour in group {
            result.record(behaviour.name, run_behaviour(&saver, behaviour, &[]).await);
        }
        results.push(result);
    }
    Report::new(results)
}
