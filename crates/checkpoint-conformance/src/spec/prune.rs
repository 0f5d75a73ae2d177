//! `prune` (optional, behaviours #74–#81): listed threads thinned, other threads untouched.
//!
//! `keep_latest` keeps the newest checkpoint of each namespace; `delete` removes all.

use stategraph_checkpoint::{CheckpointSaver, ListOptions, PruneStrategy, Value};

use crate::fixtures::{
    config_ids, describe_writes, get_existing, ids, in_ns, list, loop_step, put_chain, root, uuid4,
    write,
};
use crate::Failure;

/// The ids listed in `(thread, ns)`, newest first.
async fn listed_ids(
    saver: &dyn CheckpointSaver,
    thread: &str,
    ns: &str,
) -> Result<Vec<String>, Failure> {
    Ok(ids(&list(
        saver,
        &in_ns(thread, ns),
        &ListOptions::default(),
    )
    .await?))
}

/// Puts `n` chained checkpoints in `(thread, ns)`; returns the id of the last one.
async fn chain(
    saver: &dyn CheckpointSaver,
    thread: &str,
    ns: &str,
    n: usize,
) -> Result<String, Failure> {
    let stored = put_chain(saver, thread, ns, n, loop_step).await?;
    Ok(config_ids(&stored).pop().unwrap_or_default())
}

/// #74: `keep_latest` leaves only the last checkpoint put, listed under its own config.
pub async fn keep_latest_single_thread(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let latest = chain(saver, &thread, "", 4).await?;
    saver
        .prune(std::slice::from_ref(&thread), PruneStrategy::KeepLatest)
        .await?;
    let got = list(saver, &root(&thread), &ListOptions::default()).await?;
    ensure_eq!(got.len(), 1, "checkpoints left");
    ensure_eq!(
        got[0].config.checkpoint_id.as_deref(),
        Some(latest.as_str()),
        "config checkpoint_id of the one left"
    );
    Ok(())
}

/// #75: `keep_latest` on two threads leaves each its own latest.
pub async fn keep_latest_multiple_threads(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (t1, t2) = (uuid4(), uuid4());
    let l1 = chain(saver, &t1, "", 3).await?;
    let l2 = chain(saver, &t2, "", 2).await?;
    saver
        .prune(&[t1.clone(), t2.clone()], PruneStrategy::KeepLatest)
        .await?;
    for (thread, latest) in [(&t1, l1), (&t2, l2)] {
        ensure_eq!(
            listed_ids(saver, thread, "").await?,
            vec![latest],
            "ids left in {thread}"
        );
    }
    Ok(())
}

/// #76: "latest" is per namespace: each keeps its own.
pub async fn keep_latest_across_namespaces(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let root_latest = chain(saver, &thread, "", 3).await?;
    let child_latest = chain(saver, &thread, "child:1", 2).await?;
    saver
        .prune(std::slice::from_ref(&thread), PruneStrategy::KeepLatest)
        .await?;
    for (ns, latest) in [("", root_latest), ("child:1", child_latest)] {
        ensure_eq!(
            listed_ids(saver, &thread, ns).await?,
            vec![latest],
            "ids left in {ns:?}"
        );
    }
    Ok(())
}

/// #77: the kept checkpoint keeps its pending writes.
pub async fn keep_latest_preserves_writes(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let stored = put_chain(saver, &thread, "", 3, loop_step).await?;
    saver
        .put_writes(&stored[2], &[write("ch", "val")], &uuid4(), "")
        .await?;
    saver
        .prune(std::slice::from_ref(&thread), PruneStrategy::KeepLatest)
        .await?;
    let tuple = get_existing(saver, &root(&thread)).await?;
    let w = &tuple.pending_writes;
    ensure!(
        w.len() == 1 && w[0].channel == "ch" && w[0].value == Value::from("val"),
        "expected the one write (ch, \"val\") on the kept checkpoint, got {:?}",
        describe_writes(&tuple)
    );
    Ok(())
}

/// #78: the `delete` strategy removes every checkpoint of the thread.
pub async fn delete_all(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    chain(saver, &thread, "", 3).await?;
    saver
        .prune(std::slice::from_ref(&thread), PruneStrategy::Delete)
        .await?;
    ensure_eq!(
        listed_ids(saver, &thread, "").await?.len(),
        0,
        "checkpoints left"
    );
    Ok(())
}

/// #79: threads not listed are untouched.
pub async fn preserves_other_threads(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (t1, t2) = (uuid4(), uuid4());
    chain(saver, &t1, "", 3).await?;
    chain(saver, &t2, "", 2).await?;
    let before = listed_ids(saver, &t2, "").await?;
    saver
        .prune(std::slice::from_ref(&t1), PruneStrategy::KeepLatest)
        .await?;
    ensure_eq!(
        listed_ids(saver, &t2, "").await?,
        before,
        "ids of the other thread"
    );
    Ok(())
}

/// #80: an empty list of threads is not an error.
pub async fn empty_list_noop(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    saver.prune(&[], PruneStrategy::KeepLatest).await?;
    Ok(())
}

/// #81: an unknown thread is not an error.
pub async fn nonexistent_noop(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    saver.prune(&[uuid4()], PruneStrategy::KeepLatest).await?;
    Ok(())
}
