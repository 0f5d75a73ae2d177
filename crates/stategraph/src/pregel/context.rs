//! What a running node sees besides its state ([`NodeContext`]), and what the tasks of a
//! step inherit from their run (for subgraphs).

use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;
use stategraph_checkpoint::Value;

use super::node_error::NodeError;
use super::stream::{StreamMode, StreamSink};
use crate::channels::Channels;
use crate::types::Interrupt;

/// What a running node can see and do besides its state: its identity, the custom
/// stream, and (with a checkpointer) `interrupt`.
#[derive(Clone)]
pub struct NodeContext {
    pub(crate) inner: Arc<TaskScope>,
}

/// The per-task state behind a [`NodeContext`].
pub(crate) struct TaskScope {
    pub task_id: String,
    pub name: String,
    pub step: i64,
    /// The run's step budget: the first step it may not run (see `managed.rs`).
    pub stop: i64,
    /// A push task (a `Send`'s): its input is the payload, without managed values.
    pub push: bool,
    /// This attempt of the task, from 1 (a retry policy's retries count up).
    pub attempt: usize,
    pub ns: String,
    pub thread_id: Option<String>,
    pub channels: Arc<Channels>,
    pub sink: Option<StreamSink>,
    pub scratchpad: Mutex<Scratchpad>,
    /// The client's resume value, shared by the tasks of the step (the first interrupt
    /// without an answer of its own consumes it).
    pub null_resume: Arc<Mutex<Option<Value>>>,
    /// Writes made during the body (resume bookkeeping), prepended to the output.
    pub body_writes: Mutex<Vec<(String, Value)>>,
    /// What a subgraph run inside this task inherits from the run.
    pub run: Option<Arc<RunScope>>,
}

/// What the tasks of a step inherit from their run, for subgraphs.
#[derive(Clone)]
pub(crate) struct RunScope {
    /// The root run's lease on the thread, shared by its subgraphs.
    pub lease: Option<Arc<crate::pregel::lease::ThreadLease>>,
    pub saver: Option<Arc<dyn stategraph_checkpoint::CheckpointSaver>>,
    /// The graph's long-term store.
    pub store: Option<Arc<dyn stategraph_store::BaseStore>>,
    pub sources: crate::pregel::sources::Sources,
    pub config: crate::config::RunConfig,
    /// Ancestor namespaces to checkpoint ids, this graph's current checkpoint included.
    pub checkpoint_map: indexmap::IndexMap<String, String>,
    /// Whether the run is resuming (subgraphs then resume too).
    pub resuming: bool,
}

/// Resume bookkeeping of one task (docs/runtime.md#interrupts).
#[derive(Default)]
pub(crate) struct Scratchpad {
    /// Resume values answered for this task, in order.
    pub resume: Vec<Value>,
    /// How many times `interrupt` was called in this run of the task.
    pub counter: usize,
}

impl NodeContext {
    /// The id of this task.
    pub fn task_id(&self) -> &str {
        &self.inner.task_id
    }

    /// The node name.
    pub fn node(&self) -> &str {
        &self.inner.name
    }

    /// The super-step number.
    pub fn step(&self) -> i64 {
        self.inner.step
    }

    /// The task's checkpoint namespace (`node:task_id`).
    pub fn checkpoint_ns(&self) -> &str {
        &self.inner.ns
    }

    /// The graph's long-term store (given with
    /// [`CompileOptions::store`](crate::graph::CompileOptions::store)), shared by every
    /// thread: Python's `runtime.store`. `None` without one, and outside a run
    /// (`update_state`).
    pub fn store(&self) -> Option<&Arc<dyn stategraph_store::BaseStore>> {
        self.inner.run.as_ref().and_then(|r| r.store.as_ref())
    }

    /// The thread, when the run has one.
    pub fn thread_id(&self) -> Option<&str> {
        self.inner.thread_id.as_deref()
    }

    /// Sends a value to the `custom` stream mode (ignored when nobody streams it).
    pub fn write_custom(&self, value: impl Into<Value>) {
        if let Some(sink) = &self.inner.sink {
            sink.emit(StreamMode::Custom, value.into());
        }
    }

    /// Whether someone streams the `messages` mode of this run: a chat model streams its
    /// answer then even when not asked to (LangChain streams when a streaming callback
    /// listens), so the chunks reach the caller as they come.
    pub fn streams_messages(&self) -> bool {
        self.inner
            .sink
            .as_ref()
            .is_some_and(|sink| sink.task_meta().is_some() && sink.wants(StreamMode::Messages))
    }

    /// Sends a chat-model chunk to the `messages` stream mode, with this task's metadata
    /// (ignored when nobody streams it). A [`ChatModel`](crate::messages) streaming its
    /// answer calls this for every chunk, as LangChain's callbacks feed Python's
    /// `stream_mode="messages"`. Chunks are always streamed (an AI chunk as an
    /// `AIMessageChunk`); their id is remembered, so the message the node then returns
    /// with the same id is not streamed again. Give the chunks of one answer and the
    /// answer itself the same id (LangChain uses `lc_run--<uuid>`): a chunk without id gets
    /// a fresh one, and an answer without id is streamed again when the node returns it.
    pub fn send_message_chunk(&self, chunk: &crate::messages::Message) {
        self.send_model_message(chunk, None, false);
    }

    /// [`NodeContext::send_message_chunk`] with the model's own metadata keys (LangChain
    /// adds `ls_provider`, `ls_model_type`, ...) after LangGraph's.
    pub fn send_message_chunk_with(
        &self,
        chunk: &crate::messages::Message,
        model_metadata: &stategraph_checkpoint::Map,
    ) {
        self.send_model_message(chunk, Some(model_metadata), false);
    }

    /// Sends a chat model's whole answer to the `messages` stream mode when it was not
    /// streamed as chunks (Python's `on_llm_end`): skipped when a message with its id was
    /// already streamed.
    pub fn send_message(&self, message: &crate::messages::Message) {
        self.send_model_message(message, None, true);
    }

    fn send_model_message(
        &self,
        message: &crate::messages::Message,
        model_metadata: Option<&stategraph_checkpoint::Map>,
        dedupe: bool,
    ) {
        let Some(sink) = &self.inner.sink else {
            return;
        };
        let Some(task_meta) = sink.task_meta() else {
            return;
        };
        if sink.wants(StreamMode::Messages) {
            let meta = super::stream_messages::chunk_metadata(task_meta, model_metadata);
            let value = if dedupe {
                message.to_value()
            } else {
                super::stream_messages::chunk_value(message)
            };
            super::stream_messages::emit_message(sink, &value, &meta, dedupe);
        }
    }

    /// Pauses the graph to ask a human: returns the resume value when the run was
    /// resumed with one, else an error that the node must return (`?`) so the run stops
    /// with this interrupt. Each call in a node has its own answer, in order.
    pub fn interrupt(&self, value: impl Into<Value>) -> Result<Value, NodeError> {
        self.ask(value.into(), None)
    }

    /// [`NodeContext::interrupt`] with the JSON Schema of the answer the node expects
    /// (Python's `interrupt(value, response_schema={...})`): the schema travels with the
    /// interrupt to the caller (in [`Outcome::interrupts`](crate::Outcome::interrupts)
    /// and `get_state().interrupts`) and is stored with it as Python stores it. The
    /// answer is returned as given, not checked against the schema.
    ///
    /// ```
    /// # use stategraph::{NodeContext, NodeError, Value, map};
    /// async fn ask(ctx: NodeContext) -> Result<Value, NodeError> {
    ///     ctx.interrupt_with("approve?", map! {"type" => "boolean"})
    /// }
    /// # let _ = ask;
    /// ```
    pub fn interrupt_with(
        &self,
        value: impl Into<Value>,
        response_schema: impl Into<Value>,
    ) -> Result<Value, NodeError> {
        self.ask(value.into(), Some(response_schema.into()))
    }

    fn ask(&self, value: Value, response_schema: Option<Value>) -> Result<Value, NodeError> {
        let mut pad = self.inner.scratchpad.lock();
        let idx = pad.counter;
        pad.counter += 1;
        if idx < pad.resume.len() {
            let answered = Value::list(pad.resume[..=idx].to_vec());
            self.inner
                .body_writes
                .lock()
                .push(("__resume__".into(), answered));
            return Ok(pad.resume[idx].clone());
        }
        if let Some(v) = self.inner.null_resume.lock().take() {
            pad.resume.push(v.clone());
            let all = Value::List(pad.resume.clone().into());
            self.inner
                .body_writes
                .lock()
                .push(("__resume__".into(), all));
            return Ok(v);
        }
        let id = crate::pregel::task::interrupt_id(&self.inner.ns, pad.resume.len());
        Err(NodeError::interrupt(vec![Interrupt {
            value,
            id,
            response_schema,
        }]))
    }
}

impl fmt::Debug for NodeContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeContext")
            .field("task_id", &self.inner.task_id)
            .field("node", &self.inner.name)
            .field("step", &self.inner.step)
            .finish()
    }
}

impl NodeContext {
    /// A context outside a run (for `update_state`, which runs a node's writers).
    pub(crate) fn detached(
        task_id: String,
        name: String,
        step: i64,
        channels: Arc<Channels>,
    ) -> NodeContext {
        NodeContext {
            inner: Arc::new(TaskScope {
                task_id,
                name,
                step,
                // Python's update_state gives its writers a budget of one step.
                stop: step + 1,
                push: false,
                attempt: 1,
                ns: String::new(),
                thread_id: None,
                channels,
                sink: None,
                scratchpad: Mutex::new(Scratchpad::default()),
                null_resume: Arc::new(Mutex::new(None)),
                body_writes: Mutex::new(Vec::new()),
                run: None,
            }),
        }
    }
}
