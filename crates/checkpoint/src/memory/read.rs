//! Reading a [`MemorySaver`](super::MemorySaver): `get_tuple` and `list`, decoding stored bytes.

use std::ops::Bound;

use crate::checkpoint::{Checkpoint, CheckpointTuple, PendingWrite};
use crate::config::CheckpointConfig;
use crate::error::Result;
use crate::metadata::CheckpointMetadata;
use crate::saver::ListOptions;
use crate::serde::{Serializer, Typed};

use super::store::{Entry, Namespace, Store};

/// Decodes one stored `(tag, bytes)` pair.
pub(super) fn load(serde: &dyn Serializer, typed: &Typed) -> Result<crate::value::Value> {
    serde.loads_typed(&typed.tag, &typed.bytes)
}

/// A checkpoint id as LangGraph reads it: an empty string counts as none.
fn some_id(id: Option<&String>) -> Option<&str> {
    id.map(String::as_str).filter(|id| !id.is_empty())
}

/// `get_tuple`: the addressed checkpoint, or the greatest id of `(thread, ns)`.
pub(super) fn get_tuple(
    store: &Store,
    serde: &dyn Serializer,
    config: &CheckpointConfig,
) -> Result<Option<CheckpointTuple>> {
    let ns = config.ns();
    let Some(namespace) = store.namespace(&config.thread_id, ns) else {
        return Ok(None);
    };
    match some_id(config.checkpoint_id.as_ref()) {
        Some(id) => {
            let Some(entry) = namespace.checkpoints.get(id) else {
                return Ok(None);
            };
            // As LangGraph does, an explicit id returns the caller's config as given.
            let metadata = CheckpointMetadata::from_value(load(serde, &entry.metadata)?)?;
            let at = At {
                thread: &config.thread_id,
                ns,
                namespace,
                id,
                entry,
            };
            at.tuple(serde, config.clone(), metadata).map(Some)
        }
        None => {
            let Some((id, entry)) = namespace.checkpoints.last_key_value() else {
                return Ok(None);
            };
            let metadata = CheckpointMetadata::from_value(load(serde, &entry.metadata)?)?;
            let at = At {
                thread: &config.thread_id,
                ns,
                namespace,
                id,
                entry,
            };
            let own = CheckpointConfig::for_checkpoint(config.thread_id.as_str(), ns, id.as_str());
            at.tuple(serde, own, metadata).map(Some)
        }
    }
}

/// `list`: threads in first-write order, then namespaces in first-write order, then ids
/// descending, as LangGraph's `InMemorySaver.list` iterates; `limit` counts the tuples
/// returned after `before` and the metadata filter.
pub(super) fn list(
    store: &Store,
    serde: &dyn Serializer,
    config: Option<&CheckpointConfig>,
    options: &ListOptions,
) -> Result<Vec<CheckpointTuple>> {
    let mut out = Vec::new();
    let mut remaining = options.limit.unwrap_or(usize::MAX);
    if remaining == 0 {
        return Ok(out);
    }
    let only_id = config.and_then(|c| some_id(c.checkpoint_id.as_ref()));
    let only_ns = config.and_then(|c| c.checkpoint_ns.as_deref());
    let before = options
        .before
        .as_ref()
        .and_then(|b| some_id(b.checkpoint_id.as_ref()));
    let threads: Box<dyn Iterator<Item = (&String, &super::store::Thread)>> = match config {
        Some(c) => Box::new(
            store
                .threads
                .get_key_value(c.thread_id.as_str())
                .into_iter(),
        ),
        None => Box::new(store.threads.iter()),
    };
    for (thread, data) in threads {
        for (ns, namespace) in &data.namespaces {
            if only_ns.is_some_and(|only| only != ns) {
                continue;
            }
            let candidates: Box<dyn Iterator<Item = (&String, &Entry)>> = match (only_id, before) {
                (Some(id), _) => Box::new(
                    namespace
                        .checkpoints
                        .get_key_value(id)
                        .filter(|(id, _)| before.is_none_or(|b| id.as_str() < b))
                        .into_iter(),
                ),
                (None, Some(b)) => Box::new(
                    namespace
                        .checkpoints
                        .range::<str, _>((Bound::Unbounded, Bound::Excluded(b)))
                        .rev(),
                ),
                (None, None) => Box::new(namespace.checkpoints.iter().rev()),
            };
            for (id, entry) in candidates {
                let metadata = CheckpointMetadata::from_value(load(serde, &entry.metadata)?)?;
                if !options.matches(&metadata) {
                    continue;
                }
                let at = At {
                    thread,
                    ns,
                    namespace,
                    id,
                    entry,
                };
                let own =
                    CheckpointConfig::for_checkpoint(thread.as_str(), ns.as_str(), id.as_str());
                out.push(at.tuple(serde, own, metadata)?);
                remaining -= 1;
                if remaining == 0 {
                    return Ok(out);
                }
            }
        }
    }
    Ok(out)
}

/// One stored checkpoint and where it lives.
struct At<'a> {
    thread: &'a str,
    ns: &'a str,
    namespace: &'a Namespace,
    id: &'a str,
    entry: &'a Entry,
}

impl At<'_> {
    /// Builds the tuple: the checkpoint with `channel_values` rebuilt from the blobs of its
    /// own `channel_versions` (skipping `empty`), its parent, and its writes in order.
    fn tuple(
        &self,
        serde: &dyn Serializer,
        config: CheckpointConfig,
        metadata: CheckpointMetadata,
    ) -> Result<CheckpointTuple> {
        let mut checkpoint = Checkpoint::from_value(load(serde, &self.entry.checkpoint)?)?;
        let mut values = indexmap::IndexMap::with_capacity(checkpoint.channel_versions.len());
        for (channel, version) in &checkpoint.channel_versions {
            if let Some(value) = self.namespace.value(serde, channel, version)? {
                values.insert(channel.clone(), value);
            }
        }
        checkpoint.channel_values = values;
        let parent_config = self
            .entry
            .parent
            .as_deref()
            .filter(|p| !p.is_empty())
            .map(|p| CheckpointConfig::for_checkpoint(self.thread, self.ns, p));
        let pending_writes = self
            .namespace
            .ordered_writes(self.id)
            .into_iter()
            .map(|(task_id, _, w)| {
                Ok(PendingWrite {
                    task_id: task_id.to_owned(),
                    channel: w.channel.clone(),
                    value: serde.loads_typed(&w.value.tag, &w.value.bytes.contiguous())?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(CheckpointTuple {
            config,
            checkpoint,
            metadata,
            parent_config,
            pending_writes,
        })
    }
}
