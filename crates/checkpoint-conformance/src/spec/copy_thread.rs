//! `copy_thread` (optional, behaviours #66–#73): a thread copied whole, the source unchanged.
//!
//! The target gets every checkpoint of the source with its id, values, metadata,
//! namespace and writes.

use stategraph_checkpoint::{
    CheckpointConfig, CheckpointSaver, CheckpointTuple, Error, ListOptions, Value,
};

use crate::fixtures::{
    describe_writes, get_existing, ids, in_ns, list, loop_step, root, uuid4, write, NewCheckpoint,
};
use crate::Failure;

/// The source fixture: in each namespace, `n` chained checkpoints on `thread`, checkpoint
/// `i` with `{step: i}` stored at version 1 every time (so savers that key values by
/// version may read back the last one for all; the behaviours compare source with
/// target only). Returns the stored configs.
async fn source(
    saver: &dyn CheckpointSaver,
    thread: &str,
    n: usize,
    namespaces: &[&str],
) -> Result<Vec<CheckpointConfig>, Failure> {
    let mut stored = Vec::new();
    for ns in namespaces {
        let mut parent: Option<String> = None;
        for i in 0..n {
            let cp = NewCheckpoint::new().value("step", i, 1);
            let config = match &parent {
                Some(id) => CheckpointConfig::for_checkpoint(thread, *ns, id.as_str()),
                None => in_ns(thread, ns),
            };
            stored.push(cp.put(saver, &config, &loop_step(i)).await?);
            parent = Some(cp.id().to_owned());
        }
    }
    Ok(stored)
}

/// The root-namespace checkpoints of a thread, newest first.
async fn listed(
    saver: &dyn CheckpointSaver,
    thread: &str,
) -> Result<Vec<CheckpointTuple>, Failure> {
    list(saver, &root(thread), &ListOptions::default()).await
}

/// #66: the copied checkpoints are listed on the target.
pub async fn basic(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (src, dst) = (uuid4(), uuid4());
    source(saver, &src, 3, &[""]).await?;
    saver.copy_thread(&src, &dst).await?;
    ensure_eq!(
        listed(saver, &dst).await?.len(),
        3,
        "checkpoints listed on the target"
    );
    Ok(())
}

/// #67: every checkpoint is copied, each with the source's values.
pub async fn all_checkpoints(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (src, dst) = (uuid4(), uuid4());
    source(saver, &src, 3, &[""]).await?;
    saver.copy_thread(&src, &dst).await?;
    let mut from = listed(saver, &src).await?;
    let mut to = listed(saver, &dst).await?;
    ensure_eq!(to.len(), from.len(), "checkpoints on the target");
    from.sort_by(|a, b| a.checkpoint.id.cmp(&b.checkpoint.id));
    to.sort_by(|a, b| a.checkpoint.id.cmp(&b.checkpoint.id));
    for (s, d) in from.iter().zip(&to) {
        ensure_eq!(
            d.checkpoint.channel_values,
            s.checkpoint.channel_values,
            "channel_values of the copy of {}",
            s.checkpoint.id
        );
    }
    Ok(())
}

/// #68: every metadata key of a source checkpoint is equal in its copy.
pub async fn preserves_metadata(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (src, dst) = (uuid4(), uuid4());
    source(saver, &src, 2, &[""]).await?;
    saver.copy_thread(&src, &dst).await?;
    let mut from = listed(saver, &src).await?;
    let mut to = listed(saver, &dst).await?;
    ensure_eq!(to.len(), from.len(), "checkpoints on the target");
    from.sort_by_key(|t| t.metadata.step);
    to.sort_by_key(|t| t.metadata.step);
    for (s, d) in from.iter().zip(&to) {
        let keys = ["source", "step", "parents"]
            .into_iter()
            .chain(s.metadata.extra.keys().map(String::as_str));
        for key in keys {
            ensure_eq!(
                d.metadata.get(key),
                s.metadata.get(key),
                "metadata {key:?} of the copy"
            );
        }
    }
    Ok(())
}

/// #69: every namespace is copied.
pub async fn preserves_namespaces(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (src, dst) = (uuid4(), uuid4());
    source(saver, &src, 1, &["", "child:1"]).await?;
    saver.copy_thread(&src, &dst).await?;
    for ns in ["", "child:1"] {
        let got = list(saver, &in_ns(&dst, ns), &ListOptions::default()).await?;
        ensure_eq!(
            got.len(),
            1,
            "checkpoints on the target in namespace {ns:?}"
        );
    }
    Ok(())
}

/// #70: pending writes are copied.
pub async fn preserves_writes(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (src, dst) = (uuid4(), uuid4());
    let stored = source(saver, &src, 1, &[""]).await?;
    saver
        .put_writes(&stored[0], &[write("ch", "write_val")], &uuid4(), "")
        .await?;
    saver.copy_thread(&src, &dst).await?;
    let tuple = get_existing(saver, &root(&dst)).await?;
    let w = &tuple.pending_writes;
    ensure!(
        w.len() == 1 && w[0].channel == "ch" && w[0].value == Value::from("write_val"),
        "expected the one write (ch, \"write_val\") on the copy, got {:?}",
        describe_writes(&tuple)
    );
    Ok(())
}

/// #71: copies keep their ids, so the target lists the same ids in the same order.
pub async fn preserves_ordering(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (src, dst) = (uuid4(), uuid4());
    source(saver, &src, 4, &[""]).await?;
    saver.copy_thread(&src, &dst).await?;
    let from = ids(&listed(saver, &src).await?);
    ensure_eq!(
        ids(&listed(saver, &dst).await?),
        from,
        "ids listed on the target"
    );
    Ok(())
}

/// #72: the source thread is unchanged.
pub async fn source_unchanged(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (src, dst) = (uuid4(), uuid4());
    source(saver, &src, 2, &[""]).await?;
    let before = ids(&listed(saver, &src).await?);
    saver.copy_thread(&src, &dst).await?;
    ensure_eq!(
        ids(&listed(saver, &src).await?),
        before,
        "ids listed on the source"
    );
    Ok(())
}

/// #73: copying an unknown thread does nothing or returns an error (but not
/// [`Error::Unsupported`]: the saver declared `copy_thread`); the target stays empty.
pub async fn nonexistent_source(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let dst = uuid4();
    if let Err(e @ Error::Unsupported(_)) = saver.copy_thread(&uuid4(), &dst).await {
        return Err(Failure::new(format!(
            "copy_thread is declared but returned {e}"
        )));
    }
    ensure_eq!(
        listed(saver, &dst).await?.len(),
        0,
        "checkpoints on the target"
    );
    Ok(())
}
