//! Replaying a thread into another saver: every checkpoint (oldest first, each with its
//! parent), and every write with its task, task path and index, through the target
//! saver's own `put` and `put_writes`. `copy` replays into another database, `dump` into
//! a `MemorySaver`.
//!
//! `put` receives as `new_versions` the channels whose version differs from the parent
//! checkpoint's (all of them for a checkpoint without a parent), exactly what the run that
//! wrote the thread passed, so a saver that stores values per version (Postgres, memory)
//! stores the same blobs. Writes are replayed per task in index order, so that
//! [`write_index`](stategraph_checkpoint::write_index) gives each write its stored index.

use std::collections::HashMap;

use indicatif::ProgressBar;
use stategraph_checkpoint::{ChannelVersions, CheckpointConfig, CheckpointSaver, Error, Value};

use crate::db::Db;
use crate::error::CliError;
use crate::Result;

/// A task's id and path.
type TaskKey = (String, String);

/// One decoded write of a task: index, channel, value.
type TaskWrite = (i64, String, Value);

/// The checkpoints of a thread in replay order: `(namespace, id)` sorted by id.
pub async fn checkpoint_ids(db: &Db, thread: &str) -> Result<Vec<(String, String)>> {
    let mut ids: Vec<(String, String)> = db
        .checkpoint_bytes(thread)
        .await?
        .into_iter()
        .map(|(ns, id, _)| (ns, id))
        .collect();
    ids.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    Ok(ids)
}

/// Replays thread `thread` of `source` into `target` as thread `target_thread`; returns
/// how many checkpoints and writes were stored.
pub async fn thread(
    source: &Db,
    target: &dyn CheckpointSaver,
    thread: &str,
    target_thread: &str,
    bar: Option<&ProgressBar>,
) -> Result<(usize, usize)> {
    let ids = checkpoint_ids(source, thread).await?;
    let mut versions: HashMap<(String, String), ChannelVersions> = HashMap::new();
    let mut writes = 0usize;
    for (ns, id) in &ids {
        let config = CheckpointConfig::for_checkpoint(thread, ns.as_str(), id.as_str());
        let t = source.saver.get_tuple(&config).await?.ok_or_else(|| {
            CliError::NotFound(format!("checkpoint {id} vanished from thread {thread:?}"))
        })?;
        let parent = t
            .parent_config
            .as_ref()
            .and_then(|p| p.checkpoint_id.clone());
        let new_versions: ChannelVersions = match parent
            .as_ref()
            .and_then(|p| versions.get(&(ns.clone(), p.clone())))
        {
            Some(before) => t
                .checkpoint
                .channel_versions
                .iter()
                .filter(|(c, v)| before.get(*c) != Some(*v))
                .map(|(c, v)| (c.clone(), v.clone()))
                .collect(),
            None => t.checkpoint.channel_versions.clone(),
        };
        let mut put_config = CheckpointConfig::thread(target_thread).with_ns(ns.as_str());
        if let Some(p) = &parent {
            put_config = put_config.with_checkpoint_id(p.as_str());
        }
        target
            .put(&put_config, &t.checkpoint, &t.metadata, &new_versions)
            .await?;
        versions.insert((ns.clone(), id.clone()), t.checkpoint.channel_versions);

        let target_config =
            CheckpointConfig::for_checkpoint(target_thread, ns.as_str(), id.as_str());
        let mut groups: Vec<(TaskKey, Vec<TaskWrite>)> = Vec::new();
        for w in source.raw_writes(thread, ns, id).await? {
            let value = source.serde.loads_typed(&w.tag, &w.bytes)?;
            let key = (w.task_id, w.task_path);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push((w.idx, w.channel, value)),
                None => groups.push((key, vec![(w.idx, w.channel, value)])),
            }
        }
        for ((task_id, task_path), mut group) in groups {
            group.sort_by_key(|(idx, _, _)| if *idx < 0 { i64::MAX } else { *idx });
            let mut batch = Vec::with_capacity(group.len());
            for (position, (idx, channel, value)) in group.into_iter().enumerate() {
                if idx >= 0 && usize::try_from(idx).ok() != Some(position) {
                    return Err(Error::InvalidData(format!(
                        "checkpoint {id}: task {task_id} has writes at indexes with a gap \
                         (index {idx} at position {position}); they cannot be replayed"
                    ))
                    .into());
                }
                batch.push((channel, value));
            }
            writes += batch.len();
            target
                .put_writes(&target_config, &batch, &task_id, &task_path)
                .await?;
        }
        if let Some(bar) = bar {
            bar.inc(1);
        }
    }
    Ok((ids.len(), writes))
}
