//! What LangGraph's `Runtime` gives a node besides its store and stream writer: the run's
//! typed context (`context_schema`, `runtime.context`), its config, and the task's
//! execution info (`runtime.execution_info`).
//!
//! The context is given per run ([`RunConfig::context`]) as any `Send + Sync + 'static`
//! value, shared (an `Arc`) by every task of the run, its subgraphs and `Send` targets;
//! it is never stored in checkpoints, as in Python. A node reads it with
//! [`NodeContext::context`], which names the type it expected and the one it found when
//! they differ.

use std::any::TypeId;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use super::context::NodeContext;
use crate::config::RunConfig;
pub use crate::run_context::RunContext;

/// The type a graph declares for its runs' context
/// ([`StateGraph::context_type`](crate::StateGraph::context_type)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextType {
    id: TypeId,
    name: &'static str,
}

impl ContextType {
    /// The context type `C`.
    pub fn of<C: Send + Sync + 'static>() -> ContextType {
        ContextType {
            id: TypeId::of::<C>(),
            name: std::any::type_name::<C>(),
        }
    }

    /// Its full name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The [`crate::Error::ContextType`] of a run whose context is not of this type (a
    /// run without a context passes: its nodes' [`NodeContext::context`] says so).
    pub(crate) fn check(&self, config: &RunConfig) -> crate::Result<()> {
        match &config.context {
            Some(c) if c.type_id() != self.id => Err(crate::Error::ContextType {
                expected: self.name,
                actual: c.type_name(),
            }),
            _ => Ok(()),
        }
    }
}

/// [`NodeContext::context`] asked for a type the run's context is not, or the run has
/// none. Converts into a [`NodeError`](crate::NodeError) with `?` (named `ContextError`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextError {
    /// The type the node asked for.
    pub expected: &'static str,
    /// The type of the run's context; `None` when the run was given none.
    pub actual: Option<&'static str>,
    /// The node that asked.
    pub node: String,
}

impl fmt::Display for ContextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.actual {
            Some(actual) => write!(
                f,
                "node `{}` reads the run context as `{}`, but the run's context is a `{actual}`",
                self.node, self.expected
            ),
            None => write!(
                f,
                "node `{}` reads the run context as `{}`, but the run was given no context \
                 (RunConfig::context)",
                self.node, self.expected
            ),
        }
    }
}

impl std::error::Error for ContextError {}

/// What a task knows of its execution (Python's `runtime.execution_info`).
#[derive(Clone, Debug, PartialEq)]
pub struct ExecutionInfo {
    /// The checkpoint the task's step was prepared from (empty outside a run).
    pub checkpoint_id: String,
    /// The task's checkpoint namespace (`node:task_id`).
    pub checkpoint_ns: String,
    /// The task id.
    pub task_id: String,
    /// The run's thread, when it has one.
    pub thread_id: Option<String>,
    /// The run id ([`RunConfig::run_id`]), as a string.
    pub run_id: Option<String>,
    /// This attempt of the task, from 1.
    pub node_attempt: usize,
    /// When the task's first attempt started (`None` outside a run).
    pub node_first_attempt_time: Option<SystemTime>,
}

impl NodeContext {
    /// The run's context as a `C` (Python's `runtime.context`): given with
    /// [`RunConfig::context`], shared by the run's tasks, subgraphs and `Send` targets.
    /// A [`ContextError`] naming both types when the context is of another type, or
    /// naming `C` when the run has none.
    ///
    /// ```
    /// # use stategraph::{NodeContext, NodeError};
    /// struct User { id: String }
    /// async fn greet(ctx: NodeContext) -> Result<String, NodeError> {
    ///     Ok(format!("hello {}", ctx.context::<User>()?.id))
    /// }
    /// # let _ = greet;
    /// ```
    pub fn context<C: Send + Sync + 'static>(&self) -> Result<&C, ContextError> {
        let error = |actual| ContextError {
            expected: std::any::type_name::<C>(),
            actual,
            node: self.inner.name.clone(),
        };
        match &self.config().context {
            Some(c) => c.get::<C>().ok_or_else(|| error(Some(c.type_name()))),
            None => Err(error(None)),
        }
    }

    /// The run's config (Python's `config` argument of a node): its thread, recursion
    /// limit, `configurable`, `metadata`, tags, run id and context. Inside a subgraph,
    /// the subgraph's (the parent's, addressing the subgraph's namespace). Outside a run
    /// (`update_state`'s writers), an empty config.
    pub fn config(&self) -> &RunConfig {
        static EMPTY: OnceLock<RunConfig> = OnceLock::new();
        match &self.inner.run {
            Some(run) => &run.config,
            None => EMPTY.get_or_init(RunConfig::default),
        }
    }

    /// This attempt of the task, from 1: a node under a
    /// [`RetryPolicy`](crate::pregel::retry::RetryPolicy) sees 2 on its first retry
    /// (Python's `runtime.execution_info.node_attempt`).
    pub fn node_attempt(&self) -> usize {
        self.inner.attempt
    }

    /// What the task knows of its execution (Python's `runtime.execution_info`).
    pub fn execution_info(&self) -> ExecutionInfo {
        let config = self.config();
        let checkpoint_id = self
            .inner
            .run
            .as_ref()
            .and_then(|r| r.checkpoint_map.last())
            .map(|(_, id)| id.clone())
            .unwrap_or_default();
        ExecutionInfo {
            checkpoint_id,
            checkpoint_ns: self.inner.ns.clone(),
            task_id: self.inner.task_id.clone(),
            thread_id: self.inner.thread_id.clone(),
            run_id: config.run_id.map(|id| id.to_string()),
            node_attempt: self.inner.attempt,
            node_first_attempt_time: self.inner.first_attempt,
        }
    }
}

/// The metadata keys Python's task events leave out (`EXCLUDED_METADATA_KEYS`), and the
/// one its `messages` handler adds.
const NOT_TASK_METADATA: [&str; 10] = [
    "thread_id",
    "checkpoint_id",
    "checkpoint_ns",
    "checkpoint_map",
    "langgraph_step",
    "langgraph_node",
    "langgraph_triggers",
    "langgraph_path",
    "langgraph_checkpoint_ns",
    "ls_integration",
];

/// The `metadata` of a task-start event (`tasks` and `debug` modes), as Python's
/// `map_debug_tasks`: the task's metadata without LangGraph's own keys, and the run's
/// tags; `None` when nothing is left (the event then has no `metadata`).
pub(crate) fn task_event_metadata(
    config: &RunConfig,
    task: &super::task::Task,
    step: i64,
) -> Option<stategraph_checkpoint::Map> {
    if config.metadata.is_empty() && config.tags.is_empty() && config.configurable.is_empty() {
        return None;
    }
    let full = super::stream_messages::task_metadata(config, task, step);
    let mut m = stategraph_checkpoint::Map::with_capacity(full.len());
    for (k, v) in full.iter() {
        if !k.as_str().is_some_and(|k| NOT_TASK_METADATA.contains(&k)) {
            m.insert(k.clone(), v.clone());
        }
    }
    crate::run_context::add_tags(&mut m, &config.tags);
    (!m.is_empty()).then_some(m)
}

impl RunConfig {
    /// Gives the run a typed context (Python's `invoke(..., context=...)`), read in nodes
    /// with [`NodeContext::context`] (builder style). It reaches every task of the run,
    /// its subgraphs, its `Send` targets and each run of a `batch`; it is never stored in
    /// checkpoints. A graph that declares a context type
    /// ([`StateGraph::context_type`](crate::StateGraph::context_type)) refuses a run whose
    /// context is of another type.
    pub fn context<C: Send + Sync + 'static>(mut self, context: C) -> Self {
        self.context = Some(RunContext::new(context));
        self
    }

    /// [`RunConfig::context`] with a context already shared (no copy).
    pub fn context_arc<C: Send + Sync + 'static>(mut self, context: Arc<C>) -> Self {
        self.context = Some(RunContext::from_arc(context));
        self
    }

    /// Adds tags to the run (Python's `config["tags"]`), builder style: the `messages`
    /// stream's metadata of a chat model's chunks and the `tasks` stream's task metadata
    /// carry them as `tags`, and the run's span as `stategraph.run.tags`.
    pub fn with_tags<I: IntoIterator<Item = T>, T: Into<String>>(mut self, tags: I) -> Self {
        self.tags.extend(tags.into_iter().map(Into::into));
        self
    }

    /// The run's tags.
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// Sets the run id (Python's `config["run_id"]`), builder style: in
    /// [`ExecutionInfo::run_id`] and on the run's span.
    pub fn run_id(mut self, id: uuid::Uuid) -> Self {
        self.run_id = Some(id);
        self
    }
}
