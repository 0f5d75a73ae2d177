//! What a run keeps and saves: the writes of its tasks (recorded in memory for the step and
//! handed to the writer), the channels they update, and the checkpoint of each step
//! (docs/runtime.md#saving-a-checkpoint), with the snapshots of its delta channels.

use std::collections::BTreeSet;
use std::sync::Arc;

use indexmap::IndexMap;
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Value,
};

use super::Loop;
use crate::channels::Channels;
use crate::config::Durability;
use crate::error::{Error, Result};
use crate::pregel::algo::{apply_writes, create_checkpoint, new_versions, TaskWrites};
use crate::pregel::conflict;
use crate::pregel::delta;

impl Loop {
    /// Applies task writes to the live channels and the checkpoint's versions.
    pub(super) fn apply(&mut self, tasks: &[TaskWrites<'_>]) -> Result<BTreeSet<String>> {
        let saver = self.p.saver.clone();
        let next = move |current: Option<&ChannelVersion>| match &saver {
            Some(s) => s.get_next_version(current),
            None => stategraph_checkpoint::version_gen::next_int_version(current),
        };
        apply_writes(
            &mut self.checkpoint,
            &mut self.channels,
            tasks,
            &next,
            &self.p.graph.trigger_to_nodes,
        )
    }

    /// Records the writes of a task: in memory for this step, in the saver (through the
    /// writer, by the durability mode), and in the stream.
    pub(super) async fn record_task_writes(
        &mut self,
        task_id: &str,
        writes: Vec<(String, Value)>,
    ) -> Result<()> {
        if writes.is_empty() {
            return Ok(());
        }
        let task = self.tasks.iter().position(|t| t.id == task_id);
        let path = task
            .map(|i| self.tasks[i].path.to_path_string())
            .unwrap_or_default();
        // Writes to an `UntrackedValue` channel are not stored (Python's loop drops them
        // from what it saves), though the step applies and streams them.
        let untracked = |c: &str| {
            self.p
                .graph
                .channels
                .get(c)
                .is_some_and(|ch| ch.kind() == "UntrackedValue")
        };
        let all = writes
            .iter()
            .any(|(c, _)| untracked(c))
            .then(|| writes.clone());
        let to_save: Vec<(String, Value)> = match &all {
            Some(_) => writes.into_iter().filter(|(c, _)| !untracked(c)).collect(),
            None => writes,
        };
        let saved = if to_save.is_empty() {
            to_save
        } else {
            self.writer
                .save_task_writes(&self.checkpoint.id, task_id, path, to_save)
                .await?
        };
        let writes = all.unwrap_or(saved);
        if let (Some(i), Some(_)) = (task, &self.p.sink) {
            self.output_writes(&self.tasks[i], &writes, false);
        }
        Ok(())
    }

    /// Records the writes a task got from the cache: saved like any writes, streamed as
    /// cached updates.
    pub(super) async fn record_cached_writes(
        &mut self,
        task_id: &str,
        writes: Vec<(String, Value)>,
    ) -> Result<()> {
        let sink = self.p.sink.take();
        let result = self.record_task_writes(task_id, writes.clone()).await;
        self.p.sink = sink;
        if let Some(t) = self.tasks.iter().find(|t| t.id == task_id) {
            self.output_writes(t, &writes, true);
        }
        result
    }

    /// Applies the step's writes and saves the next checkpoint
    /// (docs/runtime.md#saving-a-checkpoint).
    pub(super) async fn after_tick(&mut self) -> Result<()> {
        let tasks = std::mem::take(&mut self.tasks);
        if self.delta.enabled {
            let graph = &self.p.graph;
            let over = delta::overwritten(
                graph,
                tasks
                    .iter()
                    .flat_map(|t| t.writes.iter().map(|(c, v)| (c.as_str(), v))),
            );
            self.delta.forced.extend(over);
            let loaded = std::mem::take(&mut self.delta.loaded);
            let reapplied = std::mem::take(&mut self.delta.reapplied);
            self.delta.forced.extend(
                loaded
                    .into_iter()
                    .filter(|(t, _)| !reapplied.contains(t))
                    .map(|(_, c)| c),
            );
        }
        let writes: Vec<TaskWrites<'_>> = tasks.iter().map(TaskWrites::from).collect();
        let res = self.apply(&writes);
        drop(writes);
        self.tasks = tasks;
        let updated = res?;
        let outputs_changed = updated.iter().any(|c| self.stream_keys().contains(c));
        self.updated_channels = Some(updated);
        if outputs_changed {
            self.emit_values();
        }
        self.writer.clear_pending();
        self.is_replaying = false;
        self.save_next_checkpoint(CheckpointSource::Loop).await?;
        self.resuming = false;
        Ok(())
    }

    /// Creates the next checkpoint from the live channels and saves it.
    pub(super) async fn save_next_checkpoint(&mut self, source: CheckpointSource) -> Result<()> {
        let counters = self.delta.enabled.then(|| {
            let previous = delta::read_counters(&self.metadata);
            delta::advance_counters(&self.p.graph, &previous, self.updated_channels.as_ref())
        });
        let parents = self.checkpoint_map();
        self.metadata = CheckpointMetadata {
            source: Some(source),
            step: Some(self.step),
            parents: Some(parents),
            extra: IndexMap::new(),
        };
        let ts = self.p.sources.ts();
        let id = self.p.sources.ids().uuid6(self.step);
        let previous = std::mem::replace(&mut self.checkpoint, Checkpoint::empty("", ""));
        let mut next = create_checkpoint(
            previous,
            &self.channels,
            id,
            ts,
            self.updated_channels.as_ref(),
        );
        if let Some(counters) = counters {
            let stores = self.p.saver.is_some() && self.p.config.durability != Durability::Exit;
            let previous = self.writer.previous_versions().clone();
            delta_snapshots(
                DeltaParts {
                    checkpoint: &mut next,
                    metadata: &mut self.metadata,
                    channels: &self.channels,
                    forced: &mut self.delta.forced,
                    previous: &previous,
                    saver: self.p.saver.as_deref(),
                    trigger_to_nodes: &self.p.graph.trigger_to_nodes,
                },
                counters,
                stores,
                &BTreeSet::new(),
            );
        }
        if self.p.resuming.is_none() && self.p.saver.is_some() {
            self.stored.note(
                &next.id,
                self.metadata.source == Some(CheckpointSource::Input),
            );
        }
        let next = Arc::new(next);
        let saved = self
            .writer
            .put_checkpoint(next.clone(), &self.metadata)
            .await;
        self.checkpoint = without_values(next);
        saved?;
        self.step += 1;
        Ok(())
    }

    /// The ancestors' checkpoint ids (`checkpoint_map` of the config).
    pub(super) fn checkpoint_map(&self) -> IndexMap<String, String> {
        match self.p.config.configurable.get("checkpoint_map") {
            Some(Value::Map(m)) => m
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), v.as_str()?.to_owned())))
                .collect(),
            _ => IndexMap::new(),
        }
    }

    /// Waits for background saves (durability `async`), or saves the final checkpoint and
    /// the pending writes (durability `exit`).
    pub(super) async fn exit(&mut self, persist: bool) -> Result<()> {
        if self.delta.enabled && persist && self.p.config.durability == Durability::Exit {
            // Durability `exit` stores no intermediate checkpoint, so the writes of this
            // run are not stored where a replay would find them: every delta channel the
            // run wrote stores a snapshot in the final checkpoint.
            let previous = self.writer.previous_versions().clone();
            let graph = self.p.graph.clone();
            let saver = self.p.saver.clone();
            if let Some((checkpoint, metadata)) = self.writer.latest_mut() {
                let checkpoint = Arc::make_mut(checkpoint);
                let written: BTreeSet<String> =
                    new_versions(&previous, &checkpoint.channel_versions)
                        .into_keys()
                        .filter(|c| delta::is_delta(&graph, c))
                        .collect();
                let counters = delta::read_counters(metadata);
                delta_snapshots(
                    DeltaParts {
                        checkpoint,
                        metadata,
                        channels: &self.channels,
                        forced: &mut self.delta.forced,
                        previous: &previous,
                        saver: saver.as_deref(),
                        trigger_to_nodes: &graph.trigger_to_nodes,
                    },
                    counters,
                    true,
                    &written,
                );
            }
        }
        let tasks = &self.tasks;
        let path_of = |task_id: &str| {
            tasks
                .iter()
                .find(|t| t.id == task_id)
                .map(|t| t.path.to_path_string())
                .unwrap_or_default()
        };
        self.writer
            .finish(persist, &self.checkpoint.id, path_of)
            .await
    }

    /// `err`, a fence's refusal of a root run's save turned into [`Error::Conflict`] with
    /// the fate of the run's input (read once the run's saves have ended).
    pub(super) async fn with_fate(&mut self, err: Error) -> Error {
        match (&self.p.saver, &self.p.config.thread_id, self.p.resuming) {
            (Some(saver), Some(thread_id), None) => {
                // Owned, so that the future does not borrow the loop (which is not `Sync`).
                let (saver, thread_id) = (saver.clone(), thread_id.clone());
                let stored = std::mem::take(&mut self.stored);
                conflict::with_fate(err, saver.as_ref(), &thread_id, &stored).await
            }
            _ => err,
        }
    }
}

/// The run's working copy of a checkpoint handed to the writer: its versions, without the
/// values (the live channels hold those). No copy when the writer is done with it.
fn without_values(checkpoint: Arc<Checkpoint>) -> Checkpoint {
    match Arc::try_unwrap(checkpoint) {
        Ok(mut c) => {
            c.channel_values = IndexMap::new();
            c
        }
        Err(c) => Checkpoint {
            v: c.v,
            ts: c.ts.clone(),
            id: c.id.clone(),
            channel_values: IndexMap::new(),
            channel_versions: c.channel_versions.clone(),
            versions_seen: c.versions_seen.clone(),
            updated_channels: c.updated_channels.clone(),
            pending_sends: c.pending_sends.clone(),
            extra: c.extra.clone(),
        },
    }
}

/// What [`delta_snapshots`] works on: the new checkpoint and its metadata, and the run's
/// state it reads.
struct DeltaParts<'a> {
    checkpoint: &'a mut Checkpoint,
    metadata: &'a mut CheckpointMetadata,
    channels: &'a Channels,
    forced: &'a mut BTreeSet<String>,
    /// The channel versions of the last checkpoint handed to the saver.
    previous: &'a ChannelVersions,
    saver: Option<&'a dyn CheckpointSaver>,
    trigger_to_nodes: &'a IndexMap<String, Vec<String>>,
}

/// Stores the due snapshots of delta channels (by `counters`, forced, or in `extra`) in the
/// new checkpoint when it will be stored (`stores`), and the counters in its metadata
/// (docs/format.md#deltachannel).
fn delta_snapshots(
    parts: DeltaParts<'_>,
    counters: delta::Counters,
    stores: bool,
    extra: &BTreeSet<String>,
) {
    let to_snapshot: BTreeSet<String> = if stores {
        let mut due = delta::due_by_counters(
            parts.channels,
            &counters,
            &parts.checkpoint.channel_versions,
        );
        due.extend(parts.forced.iter().cloned());
        due.extend(extra.iter().cloned());
        due
    } else {
        BTreeSet::new()
    };
    if !to_snapshot.is_empty() {
        let saver = parts.saver;
        let next = move |current: Option<&ChannelVersion>| match saver {
            Some(s) => s.get_next_version(current),
            None => stategraph_checkpoint::version_gen::next_int_version(current),
        };
        delta::apply_snapshots(
            parts.checkpoint,
            parts.channels,
            &to_snapshot,
            parts.previous,
            &next,
            parts.trigger_to_nodes,
        );
        parts.forced.retain(|c| !to_snapshot.contains(c));
    }
    delta::write_counters(parts.metadata, counters, &to_snapshot);
}
