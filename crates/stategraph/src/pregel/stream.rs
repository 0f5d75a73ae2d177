//! Stream modes and events: what a run reports while it goes (docs/runtime.md#streams).

use stategraph_checkpoint::Value;
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
}

impl StreamSink {
    /// A sink for these modes.
    pub fn new(tx: UnboundedSender<StreamEvent>, modes: &[StreamMode]) -> StreamSink {
        StreamSink {
            tx,
            modes: modes.iter().fold(0, |m, x| m | x.bit()),
            ns: Vec::new(),
        }
    }

    /// True when `mode` is streamed.
    pub fn wants(&self, mode: StreamMode) -> bool {
        self.modes & mode.bit() != 0
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
            tx: self.tx.clone(),
            modes: self.modes,
            ns,
        }
    }
}
