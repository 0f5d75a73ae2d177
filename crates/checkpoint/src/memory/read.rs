//! Reading a [`MemorySaver`](super::MemorySaver): `get_tuple` and `list`, decoding stored bytes.

use std::ops::Bound;

use crate::checkpoint::{Checkpoint, CheckpointTuple, PendingWrite};
use crate::config::CheckpointConfig;
use crate::error::Result;
use crate::list_cursor::{ListCursor, RowKey};
use crate::metadata::CheckpointMetadata;
use crate::saver::ListOptions;
use crate::serde::msgpack::DecodeMemo;
use crate::serde::{Serializer, Typed};

use super::store::{Entry, Namespace, Store};

/// Decodes one stored `(tag, bytes)` pair.
pub(super) fn load(serde: &dyn Serializer, typed: &Typed) -> Result<crate::value::Value> {
    serde.loads_typed(&typed.tag, &typed.bytes)
}

/// A checkpoint id as LangGraph reads it: an empty string counts as none.
pub(super) fn some_id(id: Option<&String>) -> Option<&str> {
    id.map(String::as_str).filter(|id| !id.is_empty())
}

/// `get_tuple`: the addressed checkpoint, or the greatest id of `(thread, ns)`.
pub(super) fn get_tuple(
    store: &Store,
    serde: &dyn Serializer,
    memo: &DecodeMemo,
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
            at.tuple(serde, memo, config.clone(), metadata).map(Some)
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
            at.tuple(serde, memo, own, metadata).map(Some)
        }
    }
}

/// The most checkpoints one page scans (matching the filter or not), so that a page with a
/// rare filter does not hold the store's lock for the whole store.
const MAX_SCAN_PER_PAGE: usize = 1024;

/// `list`: every tuple at once (one page without a size bound).
pub(super) fn list(
    store: &Store,
    serde: &dyn Serializer,
    memo: &DecodeMemo,
    config: Option<&CheckpointConfig>,
    options: &ListOptions,
) -> Result<Vec<CheckpointTuple>> {
    let mut cursor = ListCursor::new(config.cloned(), options.clone());
    let mut out = Vec::new();
    while !cursor.is_done() {
        out.extend(list_page(store, serde, memo, &mut cursor, usize::MAX)?);
    }
    Ok(out)
}

/// The next page of a listing: at most `max` tuples (at least one scanned checkpoint per
/// call), continuing where `cursor` stopped.
///
/// The order is LangGraph's `InMemorySaver.list`: threads in first-write order, then
/// namespaces in first-write order, then ids descending; `limit` counts the tuples
/// returned after `before` and the metadata filter. A thread or namespace removed between
/// two pages ends the part of the listing that was inside it.
pub(super) fn list_page(
    store: &Store,
    serde: &dyn Serializer,
    memo: &DecodeMemo,
    cursor: &mut ListCursor,
    max: usize,
) -> Result<Vec<CheckpointTuple>> {
    scan(store, cursor, max, |at, options| {
        let metadata = CheckpointMetadata::from_value(load(serde, &at.entry.metadata)?)?;
        if !options.matches(&metadata) {
            return Ok(None);
        }
        let own = CheckpointConfig::for_checkpoint(at.thread, at.ns, at.id);
        at.tuple(serde, memo, own, metadata).map(Some)
    })
}

/// The walk of [`list_page`]: `visit` turns each candidate checkpoint into an item, or
/// `None` when the listing's filter leaves it out; at most `max` items per call.
pub(super) fn scan<T>(
    store: &Store,
    cursor: &mut ListCursor,
    max: usize,
    mut visit: impl FnMut(&At<'_>, &ListOptions) -> Result<Option<T>>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    if cursor.done {
        return Ok(out);
    }
    let config = cursor.config.as_ref();
    let only_id = config.and_then(|c| some_id(c.checkpoint_id.as_ref()));
    let only_ns = config.and_then(|c| c.checkpoint_ns.as_deref());
    let before = cursor
        .options
        .before
        .as_ref()
        .and_then(|b| some_id(b.checkpoint_id.as_ref()));
    // The threads a listing visits: the config's one, or every thread.
    let (mut first_thread, last_thread) = match config {
        Some(c) => match store.threads.get_index_of(c.thread_id.as_str()) {
            Some(t) => (t, t + 1),
            None => (0, 0),
        },
        None => (0, store.threads.len()),
    };
    // Where the last page stopped: that thread, namespace and id bound.
    let (mut first_ns, mut resume_id) = (0, None);
    if let Some(RowKey {
        thread_id: thread,
        checkpoint_ns: ns,
        checkpoint_id: id,
    }) = &cursor.after
    {
        let Some(t) = store.threads.get_index_of(thread.as_str()) else {
            cursor.done = true;
            return Ok(out);
        };
        first_thread = t;
        match store.threads[t].namespaces.get_index_of(ns.as_str()) {
            Some(n) => (first_ns, resume_id) = (n, Some(id.as_str())),
            None => first_thread = t + 1,
        }
    }
    let max = max.max(1);
    let mut scanned = 0usize;
    let mut stopped_at: Option<(&str, &str, &str)> = None;
    let threads = store.threads.iter().enumerate();
    'threads: for (t, (thread, data)) in threads.take(last_thread).skip(first_thread) {
        let ns_start = if t == first_thread { first_ns } else { 0 };
        for (n, (ns, namespace)) in data.namespaces.iter().enumerate().skip(ns_start) {
            if only_ns.is_some_and(|only| only != ns) {
                continue;
            }
            let resume = if t == first_thread && n == first_ns {
                resume_id
            } else {
                None
            };
            let upper = match (before, resume) {
                (Some(b), Some(r)) => Some(b.min(r)),
                (b, r) => b.or(r),
            };
            for (id, entry) in candidates(namespace, only_id, upper) {
                scanned += 1;
                let at = At {
                    thread,
                    ns,
                    namespace,
                    id,
                    entry,
                };
                if let Some(item) = visit(&at, &cursor.options)? {
                    out.push(item);
                    cursor.remaining -= 1;
                    if cursor.remaining == 0 {
                        cursor.done = true;
                        return Ok(out);
                    }
                }
                if out.len() >= max || scanned >= MAX_SCAN_PER_PAGE {
                    stopped_at = Some((thread, ns, id));
                    break 'threads;
                }
            }
        }
    }
    match stopped_at {
        Some((thread, ns, id)) => {
            cursor.after = Some(RowKey {
                checkpoint_id: id.to_owned(),
                thread_id: thread.to_owned(),
                checkpoint_ns: ns.to_owned(),
            });
        }
        None => cursor.done = true,
    }
    Ok(out)
}

/// The checkpoints of a namespace a listing visits, newest first: only `only_id` when
/// set, and only ids below `upper` when set.
fn candidates<'a>(
    namespace: &'a Namespace,
    only_id: Option<&'a str>,
    upper: Option<&'a str>,
) -> Box<dyn Iterator<Item = (&'a String, &'a Entry)> + 'a> {
    match (only_id, upper) {
        (Some(id), _) => Box::new(
            namespace
                .checkpoints
                .get_key_value(id)
                .filter(move |(id, _)| upper.is_none_or(|b| id.as_str() < b))
                .into_iter(),
        ),
        (None, Some(b)) => Box::new(
            namespace
                .checkpoints
                .range::<str, _>((Bound::Unbounded, Bound::Excluded(b)))
                .rev(),
        ),
        (None, None) => Box::new(namespace.checkpoints.iter().rev()),
    }
}

/// One stored checkpoint and where it lives.
pub(super) struct At<'a> {
    pub(super) thread: &'a str,
    pub(super) ns: &'a str,
    pub(super) namespace: &'a Namespace,
    pub(super) id: &'a str,
    pub(super) entry: &'a Entry,
}

impl At<'_> {
    /// Builds the tuple: the checkpoint with `channel_values` rebuilt from the blobs of its
    /// own `channel_versions` (skipping `empty`), its parent, and its writes in order.
    fn tuple(
        &self,
        serde: &dyn Serializer,
        memo: &DecodeMemo,
        config: CheckpointConfig,
        metadata: CheckpointMetadata,
    ) -> Result<CheckpointTuple> {
        let mut checkpoint = Checkpoint::from_value(load(serde, &self.entry.checkpoint)?)?;
        let mut values = indexmap::IndexMap::with_capacity(checkpoint.channel_versions.len());
        for (channel, version) in &checkpoint.channel_versions {
            if let Some(value) = self.namespace.value(serde, memo, channel, version)? {
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
