//! Running one task of a super-step: its attempts, each with a fresh [`NodeContext`], retried
//! by its policy, bounded by its timeout, a panic turned into its failure
//! (docs/runtime.md#running-tasks). The step's tasks are run together, and committed, by
//! the run loop (`run_loop/tasks.rs`).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use parking_lot::Mutex;
use stategraph_checkpoint::Value;

use super::context::{NodeContext, RunScope, Scratchpad, TaskScope};
use super::graph::NodeRunner;
use super::node_error::{NodeError, NodeErrorKind};
use super::retry::RetryPolicy;
use super::stream::StreamSink;
use crate::channels::Channels;

/// The future of one task: its index in the step, its result, and the writes its last
/// attempt made during the body.
pub(crate) type TaskFuture = BoxFuture<
    'static,
    (
        usize,
        Result<Vec<(String, Value)>, NodeError>,
        Vec<(String, Value)>,
    ),
>;

/// Everything one task needs to build a fresh context for each attempt.
pub(crate) struct Attempts {
    /// The task's index in its step.
    pub index: usize,
    /// The node's body and writers.
    pub runner: NodeRunner,
    /// The task's input.
    pub input: Value,
    /// What each attempt's context is built from.
    pub scope: TaskScopeParts,
    /// The node's retry policy.
    pub retry: Option<RetryPolicy>,
    /// The node's per-attempt timeout.
    pub timeout: Option<std::time::Duration>,
}

/// The parts of a task's scope that do not change between attempts.
#[derive(Clone)]
pub(crate) struct TaskScopeParts {
    /// The task id.
    pub task_id: String,
    /// The node's name.
    pub name: String,
    /// The step.
    pub step: i64,
    /// The run's step budget (the first step it may not run).
    pub stop: i64,
    /// Whether the task is a push task (a `Send`'s).
    pub push: bool,
    /// The task's checkpoint namespace.
    pub ns: String,
    /// The run's thread.
    pub thread_id: Option<String>,
    /// The step's channels (what the node reads besides its input).
    pub channels: Arc<Channels>,
    /// The task's stream sink (with its `messages` metadata).
    pub sink: Option<StreamSink>,
    /// The values that answer its interrupts, in order.
    pub resume: Vec<Value>,
    /// The input's resume value, shared by the step's tasks.
    pub null_resume: Arc<Mutex<Option<Value>>>,
    /// What the task passes on to subgraphs.
    pub run: Arc<RunScope>,
}

impl TaskScopeParts {
    fn context(&self, attempt: usize) -> NodeContext {
        let retrying = attempt > 1;
        let run = if retrying && !self.run.resuming {
            let mut scope = (*self.run).clone();
            scope.resuming = true;
            Arc::new(scope)
        } else {
            self.run.clone()
        };
        NodeContext {
            inner: Arc::new(TaskScope {
                task_id: self.task_id.clone(),
                name: self.name.clone(),
                step: self.step,
                stop: self.stop,
                push: self.push,
                attempt,
                ns: self.ns.clone(),
                thread_id: self.thread_id.clone(),
                channels: self.channels.clone(),
                sink: self.sink.clone(),
                scratchpad: Mutex::new(Scratchpad {
                    resume: self.resume.clone(),
                    counter: 0,
                }),
                null_resume: self.null_resume.clone(),
                body_writes: Mutex::new(Vec::new()),
                run: Some(run),
            }),
        }
    }
}

impl Attempts {
    /// Runs the task, retrying by its policy; returns its result and the writes its last
    /// attempt made during the body.
    pub(crate) async fn run(
        self,
    ) -> (
        usize,
        Result<Vec<(String, Value)>, NodeError>,
        Vec<(String, Value)>,
    ) {
        // The task's span, when one is recorded (the run loop wraps this future in it).
        let span = crate::spans::current();
        let mut attempt = 0;
        loop {
            attempt += 1;
            crate::spans::task_attempt(&span, attempt);
            let ctx = self.scope.context(attempt);
            let fut = (self.runner)(self.input.clone(), ctx.clone());
            let guarded = AssertUnwindSafe(fut).catch_unwind();
            let result = match self.timeout {
                Some(limit) => match tokio::time::timeout(limit, guarded).await {
                    Ok(r) => r,
                    Err(_) => Ok(Err(NodeError::named(
                        "NodeTimeoutError",
                        format!("node {:?} timed out after {limit:?}", self.scope.name),
                    ))),
                },
                None => guarded.await,
            };
            let result = match result {
                Ok(r) => r,
                Err(panic) => Err(NodeError::named("Panic", panic_message(&*panic))),
            };
            let body = std::mem::take(&mut *ctx.inner.body_writes.lock());
            if let (Err(e), Some(policy)) = (&result, &self.retry) {
                let failed = matches!(e.kind, NodeErrorKind::Failed { .. });
                if failed && attempt < policy.max_attempts && (policy.retry_on)(e) {
                    tracing::info!(node = %self.scope.name, attempt, error = %e, "retrying node");
                    let wait = policy
                        .wait(attempt)
                        .max(e.retry_after().unwrap_or_default());
                    tokio::time::sleep(wait).await;
                    continue;
                }
            }
            crate::spans::task_result(&span, &result);
            return (self.index, result, body);
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "node panicked".to_owned()
    }
}
