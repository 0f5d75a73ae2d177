//! `get_delta_channel_history` on a [`MemorySaver`](super::MemorySaver): the parent chain
//! read straight from the store under one lock, decoding only the writes and blobs of the
//! channels still looking for their seed.

use indexmap::IndexMap;

use crate::checkpoint::{Checkpoint, PendingWrite};
use crate::config::CheckpointConfig;
use crate::delta::{empty_histories, Collector, DeltaChannelHistory};
use crate::error::Result;
use crate::serde::msgpack::DecodeMemo;
use crate::serde::Serializer;

use super::read::load;
use super::store::Store;

/// The histories of `channels` at the checkpoint `config` addresses (the latest one when
/// it names none).
pub(super) fn history(
    store: &Store,
    serde: &dyn Serializer,
    memo: &DecodeMemo,
    config: &CheckpointConfig,
    channels: &[String],
) -> Result<IndexMap<String, DeltaChannelHistory>> {
    let mut out = empty_histories(channels);
    let Some(namespace) = store.namespace(&config.thread_id, config.ns()) else {
        return Ok(out);
    };
    let target = match config.checkpoint_id.as_deref().filter(|id| !id.is_empty()) {
        Some(id) => namespace.checkpoints.get(id),
        None => namespace.checkpoints.last_key_value().map(|(_, e)| e),
    };
    let mut cursor = target.and_then(|e| e.parent.clone());
    let mut collector = Collector::new(channels);
    let mut visited = std::collections::HashSet::new();
    while let Some(id) = cursor.filter(|p| !p.is_empty()) {
        if collector.done() || !visited.insert(id.clone()) {
            break;
        }
        let Some(entry) = namespace.checkpoints.get(&id) else {
            break;
        };
        let checkpoint = Checkpoint::from_value(load(serde, &entry.checkpoint)?)?;
        let active = collector.active().to_vec();
        let mut writes = Vec::new();
        for (task_id, _, w) in namespace.ordered_writes(&id) {
            if active.contains(&w.channel) {
                writes.push(PendingWrite {
                    task_id: task_id.to_owned(),
                    channel: w.channel.clone(),
                    value: serde.loads_typed(&w.value.tag, &w.value.bytes.contiguous())?,
                });
            }
        }
        let mut seeds = IndexMap::new();
        for c in &active {
            if let Some(version) = checkpoint.channel_versions.get(c) {
                if let Some(value) = namespace.value(serde, memo, c, version)? {
                    seeds.insert(c.clone(), value);
                }
            }
        }
        collector.visit(writes, |c| seeds.swap_remove(c));
        cursor = entry.parent.clone();
    }
    collector.finish(&mut out);
    Ok(out)
}

/// The ancestors of `latest` that its DeltaChannels are rebuilt from (docs/format.md#deltachannel):
/// for each
/// channel its metadata counts updates for (`counters_since_delta_snapshot`) that has a
/// version and no stored value at `latest`, the parent chain up to the checkpoint that
/// stores its value. Empty for a thread without DeltaChannels. What `prune` must keep.
pub(super) fn chain_needed(
    namespace: &super::store::Namespace,
    serde: &dyn Serializer,
    latest: &str,
) -> Result<Vec<String>> {
    let Some(entry) = namespace.checkpoints.get(latest) else {
        return Ok(Vec::new());
    };
    let metadata = crate::metadata::CheckpointMetadata::from_value(load(serde, &entry.metadata)?)?;
    let Some(crate::value::Value::Map(counters)) =
        metadata.extra.get("counters_since_delta_snapshot")
    else {
        return Ok(Vec::new());
    };
    let checkpoint = Checkpoint::from_value(load(serde, &entry.checkpoint)?)?;
    let unresolved = |cp: &Checkpoint, channel: &str| {
        cp.channel_versions
            .get(channel)
            .is_some_and(|v| namespace.blob(channel, v).is_none())
    };
    let mut active: Vec<String> = counters
        .keys()
        .filter_map(|k| k.as_str())
        .filter(|k| unresolved(&checkpoint, k))
        .map(str::to_owned)
        .collect();
    let mut out = Vec::new();
    let mut cursor = entry.parent.clone();
    while let Some(id) = cursor.filter(|p| !p.is_empty()) {
        if active.is_empty() || out.contains(&id) {
            break;
        }
        let Some(entry) = namespace.checkpoints.get(&id) else {
            break;
        };
        let cp = Checkpoint::from_value(load(serde, &entry.checkpoint)?)?;
        active.retain(|c| {
            cp.channel_versions
                .get(c)
                .is_none_or(|v| namespace.blob(c, v).is_none())
        });
        out.push(id);
        cursor = entry.parent.clone();
    }
    Ok(out)
}
