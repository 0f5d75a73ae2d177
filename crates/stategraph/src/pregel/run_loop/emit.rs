//! The stream events of a run's steps (docs/runtime.md#streams): checkpoints, task starts
//! and results, updates, values, and the `debug` mirror of each; the payloads are shaped in
//! `events.rs`.

use indexmap::IndexMap;
use stategraph_checkpoint::{Map, Value};

use super::Loop;
use crate::pregel::algo::read_channels;
use crate::pregel::events;
use crate::pregel::runtime_context;
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
            self.read_streamed(),
            &self.metadata,
            &self.tasks,
            self.writer.pending_writes(),
            self.stream_keys(),
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
            let mut payload = events::task_start_payload(t);
            let meta = runtime_context::task_event_metadata(&self.p.config, t, self.step);
            if let (Value::Map(m), Some(meta)) = (&mut payload, meta) {
                m.insert("metadata", Value::Map(meta));
            }
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
                .then(|| events::updates_payload(task, writes, self.stream_keys(), cached))
                .flatten()
            {
                sink.emit(StreamMode::Updates, u);
            }
        }
        if !cached && (sink.wants(StreamMode::Tasks) || sink.wants(StreamMode::Debug)) {
            let payload = events::task_result_payload(task, writes, self.stream_keys());
            self.emit_with_debug(sink, StreamMode::Tasks, payload, self.step, "task_result");
        }
    }

    /// Streams the output channels' values (`values`).
    pub(super) fn emit_values(&self) {
        if let Some(sink) = &self.p.sink {
            if sink.wants(StreamMode::Values) {
                sink.emit(
                    StreamMode::Values,
                    events::values_payload(self.read_streamed()),
                );
            }
        }
    }

    /// Streams the output channels' values with the interrupts that stopped the run.
    pub(super) fn emit_interrupt_values(&self, interrupts: &[Interrupt]) {
        if let Some(sink) = &self.p.sink {
            if sink.wants(StreamMode::Values) {
                let mut values = self.read_streamed();
                values.insert(
                    "__interrupt__".into(),
                    Value::List(interrupts.iter().map(Interrupt::to_value).collect()),
                );
                sink.emit(StreamMode::Values, events::values_payload(values));
            }
        }
    }

    /// The output channels' current values.
    pub(super) fn read_output(&self) -> IndexMap<String, Value> {
        read_channels(&self.channels, &self.p.graph.output_channels)
    }

    /// The channels this run streams: a root run's are the graph's stream channels, a
    /// subgraph's its output channels (as LangGraph, which invokes a subgraph).
    pub(super) fn stream_keys(&self) -> &[String] {
        if self.p.ns.is_empty() {
            &self.p.graph.stream_channels
        } else {
            &self.p.graph.output_channels
        }
    }

    /// The streamed channels' current values.
    pub(super) fn read_streamed(&self) -> IndexMap<String, Value> {
        read_channels(&self.channels, self.stream_keys())
    }
}
