//! Stream modes and events: what a run reports while it goes (docs/runtime.md#streams).

use std::collections::HashSet;
use std::sync::Arc;

use parking_lot::Mutex;
use stategraph_checkpoint::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;

/// What a stream reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamMode {
    /// The full state after each step that changed it.
    Values,
    /// Each task's writes, by node.
    Updates,
    /// Each checkpoint, as `get_state` would show it.
    Checkpoints,
    /// Task starts and results.
    Tasks,
    /// Checkpoints and tasks with step and timestamp.
    Debug,
    /// Whatever nodes send with `NodeContext::write_custom`.
    Custom,
    /// Chat-model message chunks as a model produces them, each with the metadata of the
    /// node that called the model (`NodeContext::send_message_chunk`).
    Messages,
}

impl StreamMode {
    /// The mode's name as LangGraph spells it.
    pub fn as_str(&self) -> &'static str {
        match self {
            StreamMode::Values => "values",
            StreamMode::Updates => "updates",
            StreamMode::Checkpoints => "checkpoints",
            StreamMode::Tasks => "tasks",
            StreamMode::Debug => "debug",
            StreamMode::Custom => "custom",
            StreamMode::Messages => "messages",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// One streamed event.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamEvent {
    /// The namespace of the graph that emitted it (empty at the root).
    pub ns: Vec<String>,
    /// The mode.
    pub mode: StreamMode,
    /// The payload, in the shape LangGraph streams.
    pub data: Value,
}

/// Where a run sends its events, and which modes are wanted.
#[derive(Clone, Debug)]
pub struct StreamSink {
    tx: UnboundedSender<StreamEvent>,
    modes: u8,
    ns: Vec<String>,
    /// Whether subgraphs stream their events too (Python's `subgraphs=True`).
    subgraphs: bool,
    /// The ids of the messages the `messages` mode has streamed, or seen in a node's
    /// input, in the whole run (subgraphs included): a node's output repeats none of them.
    seen: Arc<Mutex<HashSet<String>>>,
    /// The `messages` metadata of the task this sink was handed to.
    task_meta: Option<Arc<Map>>,
}

impl StreamSink {
    /// A sink for these modes (subgraphs do not stream).
    pub fn new(tx: UnboundedSender<StreamEvent>, modes: &[StreamMode]) -> StreamSink {
        StreamSink {
            tx,
            modes: modes.iter().fold(0, |m, x| m | x.bit()),
            ns: Vec::new(),
            subgraphs: false,
            seen: Arc::default(),
            task_meta: None,
        }
    }

    /// The same sink, with subgraphs streaming their events (under their namespace) or
    /// not (builder style).
    pub fn with_subgraphs(mut self, subgraphs: bool) -> StreamSink {
        self.subgraphs = subgraphs;
        self
    }

    /// True when `mode` is streamed.
    pub fn wants(&self, mode: StreamMode) -> bool {
        self.modes & mode.bit() != 0
    }

    /// The namespace of the graph this sink streams for (empty at the root).
    pub fn ns(&self) -> &[String] {
        &self.ns
    }

    /// Sends an event if its mode is wanted (a closed receiver is ignored).
    pub fn emit(&self, mode: StreamMode, data: Value) {
        if self.wants(mode) {
            let _ = self.tx.send(StreamEvent {
                ns: self.ns.clone(),
                mode,
                data,
            });
        }
    }

    /// The same sink for a subgraph's namespace.
    pub fn nested(&self, ns: Vec<String>) -> StreamSink {
        StreamSink {
            ns,
            task_meta: None,
            ..self.clone()
        }
    }

    /// The sink of a subgraph run by the task whose namespace is `task_ns`
    /// (`node:task_id`, `|`-joined under subgraphs): `None` unless subgraphs stream.
    pub fn for_subgraph(&self, task_ns: &str) -> Option<StreamSink> {
        self.subgraphs
            .then(|| self.nested(task_ns.split('|').map(str::to_owned).collect()))
    }

    /// The sink handed to one task's context: it knows the task's `messages` metadata.
    pub(crate) fn for_task(&self, meta: Map) -> StreamSink {
        StreamSink {
            task_meta: Some(Arc::new(meta)),
            ..self.clone()
        }
    }

    /// The `messages` metadata of this sink's task, if it was handed to one.
    pub(crate) fn task_meta(&self) -> Option<&Map> {
        self.task_meta.as_deref()
    }

    /// Records a streamed message id; false when it was already streamed or seen.
    pub(crate) fn mark_seen(&self, id: &str) -> bool {
        self.seen.lock().insert(id.to_owned())
    }

    /// True when a message id was streamed or seen in a node's input.
    pub(crate) fn was_seen(&self, id: &str) -> bool {
        self.seen.lock().contains(id)
    }
}
