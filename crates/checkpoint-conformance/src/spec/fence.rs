//! The one-writer-per-thread fence ([`stategraph_checkpoint::fence`]): an optional group,
//! run on savers that declare [`stategraph_checkpoint::Capabilities::fence`].
//!
//! Each behaviour plays both writers of a race from one task, in the order a lost race
//! leaves them: the winner's calls first, then the loser's, which must fail with
//! [`Error::Conflict`] and store nothing, while deliberate branches, retries and
//! identical repeats go through.

use stategraph_checkpoint::{
    CheckpointConfig, CheckpointSaver, Error, SaveOp, Value, CONFIG_KEY_BRANCH,
};

use crate::fixtures::{
    describe_writes, get_existing, ids, in_ns, list, loop_metadata, root, uuid4, write,
    NewCheckpoint,
};
use crate::Failure;

/// Fails unless `result` is a `Conflict`.
fn expect_conflict<T: std::fmt::Debug>(
    result: Result<T, Error>,
    what: &str,
) -> Result<(), Failure> {
    match result {
        Err(Error::Conflict(_)) => Ok(()),
        other => Err(Failure::new(format!(
            "{what}: expected a Conflict, got {other:?}"
        ))),
    }
}

/// A fresh thread with checkpoints `a` then `b` (child of `a`); returns the thread and
/// the stored configs of `a` and `b`.
async fn two_checkpoints(
    saver: &dyn CheckpointSaver,
) -> Result<(String, CheckpointConfig, CheckpointConfig), Failure> {
    let thread = uuid4();
    let a = NewCheckpoint::new()
        .put(saver, &root(&thread), &loop_metadata(0))
        .await?;
    let b = NewCheckpoint::new()
        .put(saver, &a, &loop_metadata(1))
        .await?;
    Ok((thread, a, b))
}

/// The config `config` marked as the start of a deliberate branch.
fn branch(config: &CheckpointConfig) -> CheckpointConfig {
    config.clone().with_configurable(CONFIG_KEY_BRANCH, true)
}

/// A put whose parent is no longer the head fails with `Conflict` and stores nothing.
pub async fn put_behind_the_head_conflicts(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, a, b) = two_checkpoints(saver).await?;
    let late = NewCheckpoint::new().value("who", "loser", 2);
    let versions = late.checkpoint().channel_versions.clone();
    expect_conflict(
        saver
            .put(&a, late.checkpoint(), &loop_metadata(1), &versions)
            .await,
        "a second child of a",
    )?;
    let listed = ids(&list(saver, &root(&thread), &Default::default()).await?);
    let want = [b.checkpoint_id.clone(), a.checkpoint_id.clone()].map(Option::unwrap);
    ensure_eq!(listed, want.to_vec(), "checkpoints after the refused put");
    let lost = CheckpointConfig::for_checkpoint(thread.as_str(), "", late.id());
    ensure!(
        saver.get_tuple(&lost).await?.is_none(),
        "the refused checkpoint was stored"
    );
    Ok(())
}

/// A put without a parent into a namespace that has checkpoints fails with `Conflict`.
pub async fn put_without_parent_into_a_used_namespace_conflicts(
    saver: &dyn CheckpointSaver,
) -> Result<(), Failure> {
    let (thread, _, _) = two_checkpoints(saver).await?;
    let late = NewCheckpoint::new();
    expect_conflict(
        saver
            .put(
                &root(&thread),
                late.checkpoint(),
                &loop_metadata(0),
                &Default::default(),
            )
            .await,
        "a parentless put into a used namespace",
    )?;
    Ok(())
}

/// A put marked as a deliberate branch is admitted behind the head and becomes the head.
pub async fn branch_put_is_admitted(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, a, _) = two_checkpoints(saver).await?;
    let fork = NewCheckpoint::new();
    fork.put(saver, &branch(&a), &loop_metadata(1)).await?;
    let head = get_existing(saver, &root(&thread)).await?;
    ensure_eq!(head.checkpoint.id, fork.id(), "the head after the branch");
    // Its followers chain from it without the mark.
    let next = CheckpointConfig::for_checkpoint(thread.as_str(), "", fork.id());
    NewCheckpoint::new()
        .put(saver, &next, &loop_metadata(2))
        .await?;
    Ok(())
}

/// Putting the head again with the same parent (a retry) is admitted.
pub async fn retried_put_is_admitted(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let a = NewCheckpoint::new()
        .put(saver, &root(&thread), &loop_metadata(0))
        .await?;
    let b = NewCheckpoint::new().value("n", 1, 1);
    b.put(saver, &a, &loop_metadata(1)).await?;
    b.put(saver, &a, &loop_metadata(1)).await?;
    let listed = list(saver, &root(&thread), &Default::default()).await?;
    ensure_eq!(listed.len(), 2, "checkpoints after the retry");
    Ok(())
}

/// Namespaces are fenced apart: a head in one says nothing about another.
pub async fn namespaces_are_fenced_apart(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, _, _) = two_checkpoints(saver).await?;
    NewCheckpoint::new()
        .put(saver, &in_ns(&thread, "child:1"), &loop_metadata(0))
        .await?;
    Ok(())
}

/// Task writes against a checkpoint that has a child fail with `Conflict` and store
/// nothing; marked as a branch, they are admitted.
pub async fn writes_behind_the_head_conflict(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (_, a, _) = two_checkpoints(saver).await?;
    let task = uuid4();
    expect_conflict(
        saver.put_writes(&a, &[write("ch", 1)], &task, "").await,
        "writes against a checkpoint with a child",
    )?;
    let tuple = get_existing(saver, &a).await?;
    ensure!(
        tuple.pending_writes.is_empty(),
        "the refused writes were stored: {:?}",
        describe_writes(&tuple)
    );
    saver
        .put_writes(&branch(&a), &[write("ch", 1)], &task, "")
        .await?;
    let tuple = get_existing(saver, &a).await?;
    ensure_eq!(tuple.pending_writes.len(), 1, "writes of a branch");
    Ok(())
}

/// A task's different result at a stored normal index fails with `Conflict`, storing
/// nothing of the call (not even its new indexes); an identical repeat is idempotent and
/// a reserved index still takes the last value.
pub async fn different_result_for_a_stored_task_conflicts(
    saver: &dyn CheckpointSaver,
) -> Result<(), Failure> {
    let (_, _, b) = two_checkpoints(saver).await?;
    let task = uuid4();
    saver
        .put_writes(&b, &[write("ch", "winner")], &task, "")
        .await?;
    expect_conflict(
        saver
            .put_writes(&b, &[write("ch", "loser"), write("more", 1)], &task, "")
            .await,
        "a different result of the same task",
    )?;
    saver
        .put_writes(&b, &[write("ch", "winner")], &task, "")
        .await?;
    saver
        .put_writes(&b, &[write("__error__", "e1")], &task, "")
        .await?;
    saver
        .put_writes(&b, &[write("__error__", "e2")], &task, "")
        .await?;
    let tuple = get_existing(saver, &b).await?;
    let got: Vec<(String, Value)> = tuple
        .pending_writes
        .iter()
        .map(|w| (w.channel.clone(), w.value.clone()))
        .collect();
    ensure_eq!(
        got,
        vec![write("__error__", "e2"), write("ch", "winner")],
        "pending writes"
    );
    Ok(())
}

/// In a batch, each op is fenced as its own call: the ops before a refused one are
/// stored, the refused one and those after it are not.
pub async fn batch_stops_at_the_refused_op(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, a, b) = two_checkpoints(saver).await?;
    let task = uuid4();
    let c = NewCheckpoint::new();
    let d = NewCheckpoint::new();
    let ops = [
        SaveOp::PutWrites {
            config: b.clone(),
            writes: vec![write("ch", 1)],
            task_id: task.clone(),
            task_path: String::new(),
        },
        SaveOp::Put {
            config: b.clone(),
            checkpoint: c.checkpoint().clone().into(),
            metadata: loop_metadata(2),
            new_versions: Default::default(),
        },
        SaveOp::Put {
            config: a.clone(),
            checkpoint: d.checkpoint().clone().into(),
            metadata: loop_metadata(1),
            new_versions: Default::default(),
        },
        SaveOp::PutWrites {
            config: b.clone(),
            writes: vec![write("late", 1)],
            task_id: uuid4(),
            task_path: String::new(),
        },
    ];
    expect_conflict(saver.put_batch(&ops).await, "a batch with a stale put")?;
    let listed = ids(&list(saver, &root(&thread), &Default::default()).await?);
    let want = vec![
        c.id().to_owned(),
        b.checkpoint_id.clone().unwrap_or_default(),
        a.checkpoint_id.clone().unwrap_or_default(),
    ];
    ensure_eq!(listed, want, "checkpoints after the batch");
    let tuple = get_existing(saver, &b).await?;
    ensure_eq!(
        describe_writes(&tuple).len(),
        1,
        "writes of b after the batch (only the first op's)"
    );
    Ok(())
}
