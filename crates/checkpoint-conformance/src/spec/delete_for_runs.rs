//! `delete_for_runs` (optional, behaviours #59–#65): the listed runs go, the others stay.
//!
//! A run's checkpoints are removed in every thread and namespace.

use std::collections::BTreeSet;

use stategraph_checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions, Value};

use crate::fixtures::{
    describe_writes, get_existing, in_ns, list, loop_metadata, put_plain, uuid4, write,
};
use crate::Failure;

/// Puts a plain checkpoint of run `run` in `(thread, ns)`, the child of `parent` if given;
/// returns the stored config.
pub(crate) async fn put_run(
    saver: &dyn CheckpointSaver,
    thread: &str,
    ns: &str,
    run: &str,
    parent: Option<&CheckpointConfig>,
) -> Result<CheckpointConfig, Failure> {
    let config = match parent.and_then(|p| p.checkpoint_id.as_deref()) {
        Some(id) => CheckpointConfig::for_checkpoint(thread, ns, id),
        None => in_ns(thread, ns),
    };
    put_plain(saver, &config, &loop_metadata(0).with("run_id", run)).await
}

/// The `run_id`s of the checkpoints listed in `(thread, ns)`.
pub(crate) async fn runs_in(
    saver: &dyn CheckpointSaver,
    thread: &str,
    ns: &str,
) -> Result<BTreeSet<String>, Failure> {
    let tuples = list(saver, &in_ns(thread, ns), &ListOptions::default()).await?;
    Ok(tuples
        .iter()
        .filter_map(|t| match t.metadata.get("run_id") {
            Some(Value::Str(s)) => Some(s.to_string()),
            _ => None,
        })
        .collect())
}

/// Fails unless the runs listed in `(thread, ns)` include all of `present` and none of `absent`.
async fn expect_runs(
    saver: &dyn CheckpointSaver,
    thread: &str,
    ns: &str,
    present: &[&String],
    absent: &[&String],
) -> Result<(), Failure> {
    let runs = runs_in(saver, thread, ns).await?;
    for run in present {
        ensure!(
            runs.contains(*run),
            "run {run} missing from namespace {ns:?}: {runs:?}"
        );
    }
    for run in absent {
        ensure!(
            !runs.contains(*run),
            "run {run} still in namespace {ns:?}: {runs:?}"
        );
    }
    Ok(())
}

/// #59: deleting one run keeps the other run of the thread.
pub async fn single(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, r1, r2) = (uuid4(), uuid4(), uuid4());
    let s1 = put_run(saver, &thread, "", &r1, None).await?;
    put_run(saver, &thread, "", &r2, Some(&s1)).await?;
    expect_runs(saver, &thread, "", &[&r1, &r2], &[]).await?;
    saver.delete_for_runs(std::slice::from_ref(&r1)).await?;
    expect_runs(saver, &thread, "", &[&r2], &[&r1]).await
}

/// #60: deleting two runs of a chain of three keeps the third.
pub async fn multiple(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, r1, r2, r3) = (uuid4(), uuid4(), uuid4(), uuid4());
    let s1 = put_run(saver, &thread, "", &r1, None).await?;
    let s2 = put_run(saver, &thread, "", &r2, Some(&s1)).await?;
    put_run(saver, &thread, "", &r3, Some(&s2)).await?;
    saver.delete_for_runs(&[r1.clone(), r2.clone()]).await?;
    expect_runs(saver, &thread, "", &[&r3], &[&r1, &r2]).await
}

/// #61: a run not listed is kept (see `tightened::delete_for_runs_removes_the_run`).
pub async fn preserves_other_runs(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, keep, delete) = (uuid4(), uuid4(), uuid4());
    put_run(saver, &thread, "", &keep, None).await?;
    put_run(saver, &thread, "", &delete, None).await?;
    expect_runs(saver, &thread, "", &[&keep, &delete], &[]).await?;
    saver.delete_for_runs(std::slice::from_ref(&delete)).await?;
    expect_runs(saver, &thread, "", &[&keep], &[]).await
}

/// #62: a deleted run's checkpoint with pending writes cannot be read any more (see
/// `tightened::delete_for_runs_removes_write_rows` for the writes themselves).
pub async fn removes_writes(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, run) = (uuid4(), uuid4());
    let stored = put_run(saver, &thread, "", &run, None).await?;
    saver
        .put_writes(&stored, &[write("ch", "val")], &uuid4(), "")
        .await?;
    let before = get_existing(saver, &stored).await?;
    ensure_eq!(
        before.pending_writes.len(),
        1,
        "pending writes before delete: {:?}",
        describe_writes(&before)
    );
    saver.delete_for_runs(&[run]).await?;
    let got = saver.get_tuple(&stored).await?;
    ensure!(
        got.is_none(),
        "the deleted run's checkpoint is still readable"
    );
    Ok(())
}

/// #63: an empty list of runs is not an error.
pub async fn empty_list_noop(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    saver.delete_for_runs(&[]).await?;
    Ok(())
}

/// #64: an unknown run is not an error.
pub async fn nonexistent_noop(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    saver.delete_for_runs(&[uuid4()]).await?;
    Ok(())
}

/// #65: a run is deleted in every namespace it wrote to.
pub async fn across_namespaces(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, run) = (uuid4(), uuid4());
    for ns in ["", "child:1"] {
        put_run(saver, &thread, ns, &run, None).await?;
        expect_runs(saver, &thread, ns, &[&run], &[]).await?;
    }
    saver.delete_for_runs(std::slice::from_ref(&run)).await?;
    for ns in ["", "child:1"] {
        expect_runs(saver, &thread, ns, &[], &[&run]).await?;
    }
    Ok(())
}
