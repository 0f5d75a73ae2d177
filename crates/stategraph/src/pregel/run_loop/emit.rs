//! The stream events of a run's steps (docs/runtime.md#streams): checkpoints, task starts
//! and results, updates, values, and the `debug` mirror of each; the payloads are shaped in
//! `events.rs`.

use indexmap::IndexMap;
use stategraph_checkpoint::{Map, Value};

use super::Loop;
use crate::pregel::algo::{apply_writes, read_channels, TaskWrites};
use crate::pregel::events;
use crate::pregel::stream::{StreamMode, StreamSink};
use crate::pregel::stream_messages;
use crate::pregel::task::Task;
use crate::types::Interrupt;

impl Loop {
    /// Streams the checkpoint the step's tasks were planned from (`checkpoints`, `debug`).
    pub(super) fn emit_checkpoint(&self) {
        if self.p.saver.is_none() {
            return;
        }
        let Some(sink) = &self.p.sink else {
            return;
        };
        if !(sink.wants(StreamMode::Checkpoints) || sink.wants(StreamMode::Debug)) {
            return;
        }
        let mut cfg = self.writer.config().clone();
        cfg.checkpoint_id = Some(self.checkpoint.id.clone());
        let payload = events::checkpoint_payload(
            &cfg,
            self.writer.prev_config(),
            self.read_output(),
            &self.metadata,
            &self.tasks,
            self.writer.pending_writes(),
            &self.p.graph.output_channels,
        );
        self.emit_with_debug(
            sink,
            StreamMode::Checkpoints,
            payload,
            self.step - 1,
            "checkpoint",
        );
    }

    /// Streams `payload` in `mode`, and its `debug` event of `kind` when debug is streamed.
    pub(super) fn emit_with_debug(
        &self,
        sink: &StreamSink,
        mode: StreamMode,
        payload: Value,
        step: i64,
        kind: &str,
    ) {
        if sink.wants(StreamMode::Debug) {
            let mut m = Map::with_capacity(4);
            m.insert("step", step);
            m.insert("timestamp", self.p.sources.debug_ts());
            m.insert("type", kind);
            m.insert("payload", payload.clone());
            sink.emit(mode, payload);
            sink.emit(StreamMode::Debug, Value::Map(m));
        } else {
            sink.emit(mode, payload);
        }
    }

    /// Streams the start of each visible task of the step (`tasks`, `debug`).
    pub(super) fn emit_task_starts(&self) {
        let Some(sink) = &self.p.sink else {
            return;
        };
        if !(sink.wants(StreamMode::Tasks) || sink.wants(StreamMode::Debug)) {
            return;
        }
        for t in &self.tasks {
            if self.is_hidden(&t.name) {
                continue;
            }
            let payload = events::task_start_payload(t);
            self.emit_with_debug(sink, StreamMode::Tasks, payload, self.step, "task");
        }
    }

    /// Whether node `name` is hidden from the stream (START).
    pub(super) fn is_hidden(&self, name: &str) -> bool {
        self.p.graph.nodes.get(name).is_some_and(|n| n.hidden)
    }

    /// Streams `updates` and `tasks` events for one task's committed writes.
    pub(super) fn output_writes(&self, task: &Task, writes: &[(String, Value)], cached: bool) {
        let Some(sink) = &self.p.sink else {
            return;
        };
        if self.is_hidden(&task.name) || writes.is_empty() {
            return;
        }
        let first = writes[0].0.as_str();
        if first == "__interrupt__" {
            if sink.wants(StreamMode::Updates) {
                sink.emit(StreamMode::Updates, events::interrupt_update(writes));
            }
        } else if first != "__error__" {
            if !cached {
                stream_messages::emit_node_messages(sink, &self.p.config, task, self.step, writes);
            }
            if let Some(u) = sink
                .wants(StreamMode::Updates)
                .then(|| {
                    events::updates_payload(task, writes, &self.p.graph.output_channels, cached)
                })
                .flatten()
            {
                sink.emit(StreamMode::Updates, u);
            }
        }
        if !cached && (sink.wants(StreamMode::Tasks) || sink.wants(StreamMode::Debug)) {
            let payload = events::task_result_payload(task, writes, &self.p.graph.output_channels);
            self.emit_with_debug(sink, StreamMode::Tasks, payload, self.step, "task_result");
        }
    }

    /// Streams the output channels' values (`values`).
    pub(super) fn emit_values(&self) {
        if let Some(sink) = &self.p.sink {
            if sink.wants(StreamMode::Values) {
                sink.emit(
                    StreamMode::Values,
                    events::values_payload(self.read_output()),
                );
            }
        }
    }

    /// Streams the output channels' values with the interrupts that stopped the run.
    pub(super) fn emit_interrupt_values(&self, interrupts: &[Interrupt]) {
        if let Some(sink) = &self.p.sink {
            if sink.wants(StreamMode::Values) {
                let mut values = match &self.interrupted_output {
                    Some(values) => values.clone(),
                    None => self.read_output(),
                };
                values.insert(
                    "__interrupt__".into(),
                    Value::List(interrupts.iter().map(Interrupt::to_value).collect()),
                );
                sink.emit(StreamMode::Values, events::values_payload(values));
            }
        }
    }

    /// On an interrupt, LangGraph's last `values`: when tasks of the step finished (their
    /// writes pending), the output with those writes applied, or `None` when there are
    /// none, they touch no output channel, or the graph is a subgraph (Python does it at
    /// the root only). Applied to copies, as the step's checkpoint
    /// is saved without them; like Python, it takes a channel version from the saver.
    pub(super) fn output_with_pending_writes(
        &self,
    ) -> crate::error::Result<Option<IndexMap<String, Value>>> {
        let nested = self.p.resuming.is_some();
        if nested
            || self.writer.pending_writes().is_empty()
            || self.tasks.iter().all(|t| t.writes.is_empty())
        {
            return Ok(None);
        }
        let mut checkpoint = self.checkpoint.clone();
        let mut channels: crate::channels::Channels = self
            .channels
            .iter()
            .map(|(k, c)| (k.clone(), c.clone_box()))
            .collect();
        let writes: Vec<TaskWrites<'_>> = self.tasks.iter().map(TaskWrites::from).collect();
        let saver = self.p.saver.clone();
        let next = move |current: Option<&stategraph_checkpoint::ChannelVersion>| match &saver {
            Some(s) => s.get_next_version(current),
            None => stategraph_checkpoint::version_gen::next_int_version(current),
        };
        let graph = &self.p.graph;
        let updated = apply_writes(
            &mut checkpoint,
            &mut channels,
            &writes,
            &next,
            &graph.trigger_to_nodes,
        )?;
        if !graph.output_channels.iter().any(|c| updated.contains(c)) {
            return Ok(None);
        }
        Ok(Some(read_channels(&channels, &graph.output_channels)))
    }

    /// The output channels' current values.
    pub(super) fn read_output(&self) -> IndexMap<String, Value> {
        read_channels(&self.channels, &self.p.graph.output_channels)
    }
}
