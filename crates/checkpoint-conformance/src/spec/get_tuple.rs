//! `get_tuple` (required, behaviours #28–#37): the addressed or latest checkpoint, or none.
//!
//! A found tuple carries its config, metadata, parent and pending writes.

use indexmap::IndexMap;
use stategraph_checkpoint::{
    CheckpointConfig, CheckpointSaver, CheckpointSource, PendingWrite, Value,
};

use crate::fixtures::{
    get_existing, id_of, in_ns, loop_metadata, loop_step, put_chain, put_plain, root, uuid4, write,
    NewCheckpoint,
};
use crate::Failure;

/// #28: an unknown thread reads as `None`, not an error.
pub async fn nonexistent_returns_none(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let got = saver.get_tuple(&root(&uuid4())).await?;
    ensure!(
        got.is_none(),
        "expected None for an unknown thread, got {got:?}"
    );
    Ok(())
}

/// #29: without a checkpoint id, the checkpoint with the greatest id is returned.
pub async fn latest_when_no_checkpoint_id(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let stored = put_chain(saver, &thread, "", 3, loop_step).await?;
    let tuple = get_existing(saver, &root(&thread)).await?;
    ensure_eq!(
        tuple.checkpoint.id,
        id_of(&stored[2], "third stored config")?,
        "latest id"
    );
    ensure_eq!(tuple.metadata.step, Some(2), "latest metadata step");
    Ok(())
}

/// #30: with a checkpoint id, that checkpoint is returned, not the latest.
pub async fn specific_checkpoint_id(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = put_chain(saver, &uuid4(), "", 2, loop_step).await?;
    let tuple = get_existing(saver, &stored[0]).await?;
    ensure_eq!(
        tuple.checkpoint.id,
        id_of(&stored[0], "first stored config")?,
        "checkpoint id"
    );
    Ok(())
}

/// #31: the tuple's config names the thread, the root namespace and the checkpoint.
pub async fn config_structure(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let cp = NewCheckpoint::new();
    let stored = cp.put(saver, &root(&thread), &loop_metadata(0)).await?;
    let config = get_existing(saver, &stored).await?.config;
    ensure_eq!(config.thread_id, thread, "tuple config thread_id");
    ensure_eq!(config.ns(), "", "tuple config checkpoint_ns");
    ensure_eq!(
        config.checkpoint_id.as_deref(),
        Some(cp.id()),
        "tuple config checkpoint_id"
    );
    Ok(())
}

/// #32: id, format version, timestamp, values and versions of the checkpoint come back.
pub async fn checkpoint_fields(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let cp = NewCheckpoint::new().value("k", "v", 1);
    let stored = cp.put(saver, &root(&uuid4()), &loop_metadata(0)).await?;
    let got = get_existing(saver, &stored).await?.checkpoint;
    ensure_eq!(got.id, cp.id(), "checkpoint id");
    ensure_eq!(got.v, cp.checkpoint().v, "checkpoint v");
    ensure!(!got.ts.is_empty(), "checkpoint ts is empty");
    let want: IndexMap<String, Value> = [("k".to_owned(), Value::from("v"))].into();
    ensure_eq!(got.channel_values, want, "channel_values");
    ensure!(
        got.channel_versions.contains_key("k"),
        "channel_versions lacks \"k\": {:?}",
        got.channel_versions
    );
    Ok(())
}

/// #33: source and a negative step come back.
pub async fn metadata(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let md = crate::fixtures::metadata(CheckpointSource::Input, -1);
    let stored = put_plain(saver, &root(&uuid4()), &md).await?;
    let got = get_existing(saver, &stored).await?.metadata;
    ensure_eq!(got.source, Some(CheckpointSource::Input), "metadata source");
    ensure_eq!(got.step, Some(-1), "metadata step");
    Ok(())
}

/// #34: a first checkpoint has no parent (`None`, not an empty config); its child names it.
pub async fn parent_config(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = put_chain(saver, &uuid4(), "", 2, loop_step).await?;
    let first = get_existing(saver, &stored[0]).await?;
    ensure!(
        first.parent_config.is_none(),
        "the first checkpoint should have no parent, got {:?}",
        first.parent_config
    );
    let second = get_existing(saver, &stored[1]).await?;
    ensure_eq!(
        second.parent_config.and_then(|p| p.checkpoint_id),
        Some(id_of(&stored[0], "first stored config")?.to_owned()),
        "parent checkpoint_id of the second checkpoint"
    );
    Ok(())
}

/// #35: a pending write comes back as the triple `(task_id, channel, value)`.
pub async fn pending_writes(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = put_plain(saver, &root(&uuid4()), &loop_metadata(0)).await?;
    let task = uuid4();
    saver
        .put_writes(&stored, &[write("ch", "val")], &task, "")
        .await?;
    let tuple = get_existing(saver, &stored).await?;
    let want = vec![PendingWrite {
        task_id: task,
        channel: "ch".into(),
        value: Value::from("val"),
    }];
    ensure_eq!(tuple.pending_writes, want, "pending writes");
    Ok(())
}

/// #36: checkpoints of two namespaces of a thread read back by their own configs.
pub async fn respects_namespace(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    for ns in ["", "child:1"] {
        let cp = NewCheckpoint::new();
        let stored = cp
            .put(saver, &in_ns(&thread, ns), &loop_metadata(0))
            .await?;
        let tuple = get_existing(saver, &stored).await?;
        ensure_eq!(
            tuple.checkpoint.id,
            cp.id(),
            "checkpoint id in namespace {ns:?}"
        );
    }
    Ok(())
}

/// #37: an unknown checkpoint id reads as `None`; it never falls back to the latest.
pub async fn nonexistent_checkpoint_id(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    put_plain(saver, &root(&thread), &loop_metadata(0)).await?;
    let config = CheckpointConfig::for_checkpoint(&thread, "", uuid4());
    let got = saver.get_tuple(&config).await?;
    ensure!(
        got.is_none(),
        "expected None for an unknown checkpoint id, got {got:?}"
    );
    Ok(())
}
