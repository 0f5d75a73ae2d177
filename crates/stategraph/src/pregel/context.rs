//! What a running node sees besides its state ([`NodeContext`]), what the tasks of a
//! step inherit from their run (for subgraphs), and how a task calls tasks.
//!
//! Tasks calling tasks (the functional API's `call`, LangGraph's `CONFIG_KEY_CALL`): a
//! running task hands its run loop a [`Call`] to start another task in the same step. A
//! call is a push task with path `(__pregel_push, caller's path, n, true)`, `n` counting
//! the caller's calls (across its attempts, as Python's `call_counter`), and an id hashed
//! from the caller's namespace and that path, so a rerun of the caller finds the same
//! task and its stored result. The loop (`run_loop/calls.rs`) prepares the task, answers
//! at once from a stored or cached result, or runs it beside the step's other tasks and
//! answers once its writes are recorded (so the caller never sees a result that was not
//! saved first).

use std::fmt;
use std::sync::Arc;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use stategraph_checkpoint::Value;
use tokio::sync::{mpsc, oneshot};

use super::cache::CachePolicy;
use super::node_error::NodeError;
use super::retry::RetryPolicy;
use super::stream::{StreamMode, StreamSink};
use super::task::TaskPath;
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
    /// When the task's first attempt started (`None` outside a run).
    pub first_attempt: Option<std::time::SystemTime>,
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
    /// How this task calls tasks (functional-API graphs only).
    pub calls: Option<Arc<CallScope>>,
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
            let mut meta = super::stream_messages::chunk_metadata(task_meta, model_metadata);
            crate::run_context::add_tags(&mut meta, &self.config().tags);
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
                first_attempt: None,
                ns: String::new(),
                thread_id: None,
                channels,
                sink: None,
                scratchpad: Mutex::new(Scratchpad::default()),
                null_resume: Arc::new(Mutex::new(None)),
                body_writes: Mutex::new(Vec::new()),
                run: None,
                calls: None,
            }),
        }
    }
}

/// A called task's body: its argument in, its return value out.
pub type CallFn =
    Arc<dyn Fn(Value, NodeContext) -> BoxFuture<'static, Result<Value, NodeError>> + Send + Sync>;

/// One call of a task: what to run, with what, and how.
#[derive(Clone)]
pub struct Call {
    /// The task's name (its node name in ids, paths and streams).
    pub name: String,
    /// Its body.
    pub func: CallFn,
    /// Its argument.
    pub input: Value,
    /// Its retry policy.
    pub retry: Option<RetryPolicy>,
    /// Its cache policy (used when the graph has a cache).
    pub cache: Option<CachePolicy>,
    /// Its per-attempt timeout.
    pub timeout: Option<Duration>,
}

/// A call on its way to the run loop.
pub(crate) struct CallRequest {
    /// The calling task's namespace (`node:task_id`), the called task's parent namespace.
    pub caller_ns: String,
    /// The called task's path.
    pub path: TaskPath,
    /// What to run.
    pub call: Call,
    /// Where the result goes.
    pub reply: oneshot::Sender<CallReply>,
}

/// The answer to a call: the called task's id and its result.
pub(crate) struct CallReply {
    /// The id of the task the call became.
    pub task_id: String,
    /// Its return value, or how it failed (an interrupt among them).
    pub result: Result<Value, NodeError>,
}

/// What a task needs to call tasks: the loop's inbox and its own call counter.
pub(crate) struct CallScope {
    /// The run loop's inbox for the step.
    pub inbox: mpsc::UnboundedSender<CallRequest>,
    /// The calling task's path.
    pub path: TaskPath,
    /// Calls made so far (shared by the task's attempts).
    pub counter: AtomicUsize,
}

impl CallScope {
    /// A scope for the task at `path`, sending to `inbox`.
    pub(crate) fn new(inbox: mpsc::UnboundedSender<CallRequest>, path: TaskPath) -> Arc<Self> {
        Arc::new(CallScope {
            inbox,
            path,
            counter: AtomicUsize::new(0),
        })
    }

    /// Sends `call` to the loop; the receiver gets its result.
    pub(crate) fn send(&self, caller_ns: &str, call: Call) -> oneshot::Receiver<CallReply> {
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        let (reply, rx) = oneshot::channel();
        let request = CallRequest {
            caller_ns: caller_ns.to_owned(),
            path: TaskPath::call(&self.path, n),
            call,
            reply,
        };
        // A closed inbox (the step is over) drops the request, and the receiver reports it.
        let _ = self.inbox.send(request);
        rx
    }
}
