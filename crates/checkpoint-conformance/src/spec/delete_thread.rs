//! `delete_thread` (required, behaviours #54–#58): a thread goes, in every namespace, alone.

use stategraph_checkpoint::{CheckpointSaver, ListOptions};

use crate::fixtures::{
    describe_writes, get_existing, in_ns, list, loop_metadata, loop_step, put_chain, put_plain,
    root, uuid4, write,
};
use crate::Failure;

/// Fails unless `get_tuple` finds nothing in `(thread, ns)`.
async fn expect_gone(saver: &dyn CheckpointSaver, thread: &str, ns: &str) -> Result<(), Failure> {
    let got = saver.get_tuple(&in_ns(thread, ns)).await?;
    ensure!(
        got.is_none(),
        "namespace {ns:?} of the deleted thread still has a checkpoint: {:?}",
        got.map(|t| t.checkpoint.id)
    );
    Ok(())
}

/// #54: the thread's checkpoints can no longer be read or listed.
pub async fn removes_checkpoints(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    put_chain(saver, &thread, "", 3, loop_step).await?;
    get_existing(saver, &root(&thread)).await?;
    saver.delete_thread(&thread).await?;
    expect_gone(saver, &thread, "").await?;
    let listed = list(saver, &root(&thread), &ListOptions::default()).await?;
    ensure_eq!(listed.len(), 0, "checkpoints listed after delete_thread");
    Ok(())
}

/// #55: a thread with pending writes is deleted (see
/// `tightened::delete_thread_removes_write_rows` for the writes themselves).
pub async fn removes_writes(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let stored = put_plain(saver, &root(&thread), &loop_metadata(0)).await?;
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
    saver.delete_thread(&thread).await?;
    expect_gone(saver, &thread, "").await
}

/// #56: every namespace of the thread is deleted.
pub async fn removes_all_namespaces(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    for ns in ["", "child:1"] {
        put_plain(saver, &in_ns(&thread, ns), &loop_metadata(0)).await?;
        get_existing(saver, &in_ns(&thread, ns)).await?;
    }
    saver.delete_thread(&thread).await?;
    for ns in ["", "child:1"] {
        expect_gone(saver, &thread, ns).await?;
    }
    Ok(())
}

/// #57: other threads are untouched.
pub async fn preserves_other_threads(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (t1, t2) = (uuid4(), uuid4());
    for thread in [&t1, &t2] {
        put_plain(saver, &root(thread), &loop_metadata(0)).await?;
    }
    saver.delete_thread(&t1).await?;
    expect_gone(saver, &t1, "").await?;
    let kept = saver.get_tuple(&root(&t2)).await?;
    ensure!(kept.is_some(), "deleting one thread removed another");
    Ok(())
}

/// #58: deleting an unknown thread is not an error.
pub async fn nonexistent_noop(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    saver.delete_thread(&uuid4()).await?;
    Ok(())
}
