//! The raw entry points of [`MemorySaver`]: encoded parts in, stored pairs out.
//!
//! For a caller that encodes values itself (see [`crate::raw`]). A raw put stores the
//! caller's pair of the checkpoint without `channel_values` and one pair per channel of
//! `new_versions`, exactly the entries `InMemorySaver.put` makes from the same pairs; a
//! raw read hands those entries back. The checkpoint pair is decoded only for its
//! `channel_versions` (to find its blobs); channel values and writes are never decoded.
//! Validation, the fence and the layout are those of the trait methods.

use std::collections::HashMap;

use crate::checkpoint::{write_index, Checkpoint};
use crate::config::{validate_config, validate_key, CheckpointConfig};
use crate::error::{Error, Result};
use crate::fence;
use crate::list_cursor::ListCursor;
use crate::metadata::CheckpointMetadata;
use crate::raw::{RawMetadata, RawState, RawTuple, RawWrite};
use crate::saver::ListOptions;
use crate::serde::Typed;
use crate::version::ChannelVersions;

use super::read::{load, scan, some_id, At};
use super::store::{Entry, Namespace, NewBlob, NewWrite, StoredBlob};
use super::MemorySaver;

impl MemorySaver {
    /// Stores a checkpoint from its encoded parts: `checkpoint` is the pair of the
    /// checkpoint without `channel_values` (its id is `checkpoint_id`), `values` the pair of
    /// each channel of `new_versions` that has a value (a channel of `new_versions` without
    /// one gets the `empty` sentinel, as in [`CheckpointSaver::put`](crate::CheckpointSaver::put)).
    /// The metadata is stored as the trait's `put` stores it. Returns the stored
    /// checkpoint's config.
    pub fn put_raw(
        &self,
        config: &CheckpointConfig,
        checkpoint_id: &str,
        checkpoint: Typed,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
        values: Vec<(String, Typed)>,
    ) -> Result<CheckpointConfig> {
        validate_config(config)?;
        validate_key("checkpoint id", checkpoint_id)?;
        let mut values: HashMap<String, Typed> = values.into_iter().collect();
        let blobs = new_versions
            .iter()
            .map(|(channel, version)| {
                let blob = match values.remove(channel) {
                    Some(t) => StoredBlob {
                        tag: t.tag,
                        bytes: t.bytes.into(),
                    },
                    None => StoredBlob::empty(),
                };
                NewBlob {
                    channel: channel.clone(),
                    version: version.clone(),
                    blob,
                    value: None,
                }
            })
            .collect();
        let entry = Entry {
            checkpoint,
            metadata: self
                .serde
                .dumps_typed(&metadata.for_put(config).to_value())?,
            parent: config.checkpoint_id.clone(),
        };
        let ns = config.ns();
        let mut store = self.store.write();
        if self.fencing {
            let namespace = store.namespace(&config.thread_id, ns);
            let state = fence::PutState {
                head: namespace.and_then(Namespace::head),
                existing_parent: namespace
                    .and_then(|n| n.checkpoints.get(checkpoint_id))
                    .map(|e| e.parent.as_deref()),
            };
            fence::check_put(config, checkpoint_id, state)?;
        }
        store.put(
            &config.thread_id,
            ns,
            checkpoint_id.to_owned(),
            entry,
            blobs,
        );
        Ok(CheckpointConfig::for_checkpoint(
            config.thread_id.as_str(),
            ns,
            checkpoint_id,
        ))
    }

    /// Stores one task's writes, each `(channel, value pair)`, by the rule and the fence of
    /// [`CheckpointSaver::put_writes`](crate::CheckpointSaver::put_writes).
    pub fn put_writes_raw(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, Typed)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        validate_config(config)?;
        validate_key("task id", task_id)?;
        let checkpoint_id = config
            .checkpoint_id
            .as_deref()
            .ok_or_else(|| Error::InvalidConfig("put_writes needs a checkpoint_id".into()))?;
        let (channels, values): (Vec<String>, Vec<Typed>) = writes.into_iter().unzip();
        let new_writes: Vec<NewWrite<'_>> = channels
            .iter()
            .zip(values)
            .enumerate()
            .map(|(i, (channel, value))| NewWrite {
                idx: write_index(channel, i),
                channel,
                value: StoredBlob {
                    tag: value.tag,
                    bytes: value.bytes.into(),
                },
            })
            .collect();
        let mut store = self.store.write();
        if self.fencing {
            if let Some(namespace) = store.namespace(&config.thread_id, config.ns()) {
                namespace.check_writes(
                    config,
                    checkpoint_id,
                    task_id,
                    &new_writes,
                    self.serde.as_ref(),
                )?;
            }
        }
        store.put_writes(
            &config.thread_id,
            config.ns(),
            checkpoint_id,
            task_id,
            task_path,
            new_writes,
        );
        Ok(())
    }

    /// The tuple [`CheckpointSaver::get_tuple`](crate::CheckpointSaver::get_tuple) reads, as
    /// stored ([`RawState::Split`], metadata as a pair).
    pub fn get_tuple_raw(&self, config: &CheckpointConfig) -> Result<Option<RawTuple>> {
        validate_config(config)?;
        let store = self.store.read();
        let ns = config.ns();
        let Some(namespace) = store.namespace(&config.thread_id, ns) else {
            return Ok(None);
        };
        let found = match some_id(config.checkpoint_id.as_ref()) {
            Some(id) => namespace.checkpoints.get_key_value(id),
            None => namespace.checkpoints.last_key_value(),
        };
        let Some((id, entry)) = found else {
            return Ok(None);
        };
        let at = At {
            thread: &config.thread_id,
            ns,
            namespace,
            id,
            entry,
        };
        self.raw_tuple(&at).map(Some)
    }

    /// The tuples [`CheckpointSaver::list`](crate::CheckpointSaver::list) reads, in its
    /// order, as stored. The metadata is decoded only when the listing has a filter.
    pub fn list_raw(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<RawTuple>> {
        if let Some(config) = config {
            validate_config(config)?;
        }
        let filtered = options.filter.as_ref().is_some_and(|f| !f.is_empty());
        let store = self.store.read();
        let mut cursor = ListCursor::new(config.cloned(), options.clone());
        let mut out = Vec::new();
        while !cursor.is_done() {
            out.extend(scan(&store, &mut cursor, usize::MAX, |at, options| {
                if filtered {
                    let metadata = load(self.serde.as_ref(), &at.entry.metadata)?;
                    if !options.matches(&CheckpointMetadata::from_value(metadata)?) {
                        return Ok(None);
                    }
                }
                self.raw_tuple(at).map(Some)
            })?);
        }
        Ok(out)
    }

    /// The values stored for `versions` (channel to version) in `(thread_id, checkpoint_ns)`,
    /// in their order, skipping channels with none (or `empty`): the second step of a raw
    /// read whose checkpoint the saver's serializer could not read ([`RawState::Split`]).
    pub fn blobs_raw(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        versions: &ChannelVersions,
    ) -> Vec<(String, Typed)> {
        let store = self.store.read();
        match store.namespace(thread_id, checkpoint_ns) {
            Some(namespace) => blobs(namespace, versions),
            None => Vec::new(),
        }
    }

    /// The stored entries of one checkpoint: its pair, the blobs of its own
    /// `channel_versions` (skipping `empty`; not looked up when the serializer cannot read
    /// the pair), its metadata pair and its writes in order.
    fn raw_tuple(&self, at: &At<'_>) -> Result<RawTuple> {
        let values = load(self.serde.as_ref(), &at.entry.checkpoint)
            .ok()
            .map(|plain| -> Result<_> {
                let plain = Checkpoint::from_value(plain)?;
                Ok(blobs(at.namespace, &plain.channel_versions))
            })
            .transpose()?;
        let pending_writes = at
            .namespace
            .ordered_writes(at.id)
            .into_iter()
            .map(|(task_id, _, w)| RawWrite {
                task_id: task_id.to_owned(),
                channel: w.channel.clone(),
                value: w.value.to_typed(),
            })
            .collect();
        Ok(RawTuple {
            thread_id: at.thread.to_owned(),
            checkpoint_ns: at.ns.to_owned(),
            checkpoint_id: at.id.to_owned(),
            parent_checkpoint_id: at.entry.parent.clone().filter(|p| !p.is_empty()),
            state: RawState::Split {
                checkpoint: at.entry.checkpoint.clone(),
                values,
            },
            metadata: RawMetadata::Typed(at.entry.metadata.clone()),
            pending_writes,
        })
    }
}

/// The non-empty blobs of `versions` in `namespace`, in the order of `versions`.
fn blobs(namespace: &Namespace, versions: &ChannelVersions) -> Vec<(String, Typed)> {
    versions
        .iter()
        .filter_map(|(channel, version)| {
            let blob = namespace.blob(channel, version)?;
            Some((channel.clone(), blob.to_typed()))
        })
        .collect()
}
