//! Nodes: what a node function receives ([`NodeContext`]), what it may return
//! ([`IntoNodeOutput`]), and how it fails ([`NodeError`]).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use parking_lot::Mutex;
use stategraph_checkpoint::Value;

use crate::pregel::algo::Channels;
use crate::pregel::stream::{StreamMode, StreamSink};
use crate::state::IntoUpdate;
use crate::types::{Command, Goto, Interrupt, Send as SendPacket};

/// Why a node did not produce an output.
pub struct NodeError {
    pub(crate) kind: NodeErrorKind,
}

pub(crate) enum NodeErrorKind {
    /// The node called `interrupt` and no answer is available yet.
    Interrupt(Vec<Interrupt>),
    /// The node failed.
    Failed {
        /// `repr`-like text, stored in the `__error__` write.
        repr: String,
    },
    /// The node sent a command to the parent graph.
    ParentCommand(Box<Command>),
}

impl NodeError {
    /// A failure with a message; stored as `NodeError('message')`.
    pub fn msg(message: impl fmt::Display) -> NodeError {
        NodeError::named("NodeError", message)
    }

    /// A failure with an error type name and a message; stored as `Name('message')`,
    /// the way LangGraph stores `repr(exception)`.
    pub fn named(type_name: &str, message: impl fmt::Display) -> NodeError {
        NodeError {
            kind: NodeErrorKind::Failed {
                repr: python_repr_call(type_name, &message.to_string()),
            },
        }
    }

    /// A failure whose stored text is given as is.
    pub(crate) fn repr_only(repr: String) -> NodeError {
        NodeError {
            kind: NodeErrorKind::Failed { repr },
        }
    }

    /// A pause with these interrupts (what [`NodeContext::interrupt`] returns).
    pub(crate) fn interrupt(interrupts: Vec<Interrupt>) -> NodeError {
        NodeError {
            kind: NodeErrorKind::Interrupt(interrupts),
        }
    }

    /// A command for the parent graph.
    pub fn parent_command(command: Command) -> NodeError {
        NodeError {
            kind: NodeErrorKind::ParentCommand(Box::new(command)),
        }
    }

    /// The stored text of a failure, `None` for interrupts and parent commands.
    pub fn repr(&self) -> Option<&str> {
        match &self.kind {
            NodeErrorKind::Failed { repr } => Some(repr),
            _ => None,
        }
    }
}

fn python_repr_call(type_name: &str, message: &str) -> String {
    let quote = if message.contains('\'') && !message.contains('"') {
        '"'
    } else {
        '\''
    };
    let escaped = if quote == '\'' {
        message.replace('\\', "\\\\").replace('\'', "\\'")
    } else {
        message.replace('\\', "\\\\")
    };
    format!("{type_name}({quote}{escaped}{quote})")
}

impl fmt::Debug for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            NodeErrorKind::Interrupt(i) => write!(f, "Interrupt({i:?})"),
            NodeErrorKind::Failed { repr } => f.write_str(repr),
            NodeErrorKind::ParentCommand(c) => write!(f, "ParentCommand({c:?})"),
        }
    }
}

impl fmt::Display for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for NodeError {
    fn from(e: E) -> NodeError {
        let full = std::any::type_name::<E>();
        let short = full.rsplit("::").next().unwrap_or(full);
        let short = short.split('<').next().unwrap_or(short);
        NodeError {
            kind: NodeErrorKind::Failed {
                repr: python_repr_call(short, &e.to_string()),
            },
        }
    }
}

/// A node's result, normalised: state writes, where to go, and `Send`s.
#[derive(Debug, Default)]
pub struct NodeOutput {
    pub(crate) writes: Vec<(String, Value)>,
    pub(crate) goto: Vec<Goto>,
}

impl NodeOutput {
    /// An output that writes nothing.
    pub fn none() -> NodeOutput {
        NodeOutput::default()
    }
}

/// What a node function may return: an update (`<State>Update`, a map of values, `()`),
/// a [`Command`], a [`Send`] or a list of them, or a `Result` of any of these.
pub trait IntoNodeOutput {
    /// Normalises the return value.
    fn into_node_output(self) -> Result<NodeOutput, NodeError>;
}

impl<U: IntoUpdate> IntoNodeOutput for U {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        Ok(NodeOutput {
            writes: self
                .into_writes()
                .map_err(|e| NodeError::named("InvalidUpdateError", e))?,
            goto: Vec::new(),
        })
    }
}

impl<U: IntoUpdate> IntoNodeOutput for Command<U> {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        let writes = match self.update {
            Some(u) => u
                .into_writes()
                .map_err(|e| NodeError::named("InvalidUpdateError", e))?,
            None => Vec::new(),
        };
        if self.graph.as_deref() == Some(crate::types::PARENT) {
            return Err(NodeError::parent_command(Command {
                graph: self.graph,
                update: Some(writes),
                resume: self.resume,
                goto: self.goto,
            }));
        }
        Ok(NodeOutput {
            writes,
            goto: self.goto,
        })
    }
}

impl IntoNodeOutput for SendPacket {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        Ok(NodeOutput {
            writes: Vec::new(),
            goto: vec![Goto::Send(self)],
        })
    }
}

impl IntoNodeOutput for Vec<SendPacket> {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        Ok(NodeOutput {
            writes: Vec::new(),
            goto: self.into_iter().map(Goto::Send).collect(),
        })
    }
}

impl IntoNodeOutput for NodeOutput {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        Ok(self)
    }
}

impl<T: IntoNodeOutput, E: Into<NodeError>> IntoNodeOutput for Result<T, E> {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        self.map_err(Into::into)?.into_node_output()
    }
}

/// A function usable as a node over state `S`: `Fn(S) -> impl Future` or
/// `Fn(S, NodeContext) -> impl Future`, returning anything [`IntoNodeOutput`].
/// `M` only tells the two shapes apart.
pub trait NodeHandler<S, M>: Send + Sync + 'static {
    /// Runs the node.
    fn call(&self, state: S, ctx: NodeContext)
        -> BoxFuture<'static, Result<NodeOutput, NodeError>>;
}

impl<S, F, Fut, R> NodeHandler<S, (S,)> for F
where
    F: Fn(S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + std::marker::Send + 'static,
    R: IntoNodeOutput,
{
    fn call(
        &self,
        state: S,
        _ctx: NodeContext,
    ) -> BoxFuture<'static, Result<NodeOutput, NodeError>> {
        let fut = (self)(state);
        async move { fut.await.into_node_output() }.boxed()
    }
}

impl<S, F, Fut, R> NodeHandler<S, (S, NodeContext)> for F
where
    F: Fn(S, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + std::marker::Send + 'static,
    R: IntoNodeOutput,
{
    fn call(
        &self,
        state: S,
        ctx: NodeContext,
    ) -> BoxFuture<'static, Result<NodeOutput, NodeError>> {
        let fut = (self)(state, ctx);
        async move { fut.await.into_node_output() }.boxed()
    }
}

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

/// Resume bookkeeping of one task (spec §5.12).
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

    /// Pauses the graph to ask a human: returns the resume value when the run was
    /// resumed with one, else an error that the node must return (`?`) so the run stops
    /// with this interrupt. Each call in a node has its own answer, in order.
    pub fn interrupt(&self, value: impl Into<Value>) -> Result<Value, NodeError> {
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
            value: value.into(),
            id,
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
