//! Running the tasks of one super-step: concurrently on tokio, each committed (its writes
//! recorded and saved) as soon as it finishes (docs/runtime.md#running-tasks).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use parking_lot::Mutex;
use stategraph_checkpoint::{Value, NULL_TASK_ID};
use tracing::Instrument;


use super::cache::CacheKey;
use super::context::{NodeContext, RunScope, Scratchpad, TaskScope};
use super::node_error::{NodeError, NodeErrorKind};
use super::retry::RetryPolicy;
use super::run_loop::Loop;
use super::status::CONTROL_WRITES;
use super::task::interrupt_id;
use crate::channels::Channels;
use crate::error::{Error, Result};
use crate::types::Interrupt;

/// What happened in a step.
#[derive(Debug, Default)]
pub(crate) struct StepOutcome {
    /// Interrupts raised by the step's tasks.
    pub interrupts: Vec<Interrupt>,
    /// The first failure, if any task failed.
    pub error: Option<Error>,
}

type TaskFuture = BoxFuture<
    'static,
    (
        usize,
        Result<Vec<(String, Value)>, NodeError>,
        Vec<(String, Value)>,
    ),
>;

/// Everything one task needs to build a fresh context for each attempt.
struct Attempts {
    index: usize,
    runner: super::graph::NodeRunner,
    input: Value,
    scope: TaskScopeParts,
    retry: Option<RetryPolicy>,
    timeout: Option<std::time::Duration>,
}

/// The parts of a task's scope that do not change between attempts.
#[derive(Clone)]
struct TaskScopeParts {
    task_id: String,
    name: String,
    step: i64,
    ns: String,
    thread_id: Option<String>,
    channels: Arc<Channels>,
    sink: Option<super::stream::StreamSink>,
    resume: Vec<Value>,
    null_resume: Arc<Mutex<Option<Value>>>,
    run: Arc<RunScope>,
}

impl TaskScopeParts {
    fn context(&self, retrying: bool) -> NodeContext {
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
    async fn run(
        self,
    ) -> (
        usize,
        Result<Vec<(String, Value)>, NodeError>,
        Vec<(String, Value)>,
    ) {
        // The task's span, when one is recorded (run_tasks wraps this future in it).
        let span = crate::spans::current();
        let mut attempt = 0;
        loop {
            attempt += 1;
            crate::spans::task_attempt(&span, attempt);
            let ctx = self.scope.context(attempt > 1);
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

/// Runs the tasks at `indices` of the loop's current step.
pub(crate) async fn run_tasks(
    lp: &mut Loop,
    indices: &[usize],
    channels: Arc<Channels>,
) -> Result<StepOutcome> {
    let own_null_resume = lp
        .pending_writes()
        .iter()
        .find(|(t, c, _)| t == NULL_TASK_ID && c == "__resume__")
        .map(|(_, _, v)| v.clone());
    let null_resume = match (&own_null_resume, &lp.params().null_resume) {
        (None, Some(parent)) => parent.clone(),
        _ => Arc::new(Mutex::new(own_null_resume)),
    };
    let run_scope = Arc::new(lp.run_scope());
    let mut outcome = StepOutcome::default();
    let mut futures: Vec<TaskFuture> = Vec::with_capacity(indices.len());
    let mut cache_keys: Vec<(usize, CacheKey, Option<std::time::Duration>)> = Vec::new();
    let traced = crate::spans::enabled();
    for &i in indices {
        let task = &lp.tasks()[i];
        // Only what the task needs of its node is copied (not the node's names and lists).
        let Some(node) = lp.params().graph.nodes.get(&task.name) else {
            continue;
        };
        let Some(runner) = node.run.clone() else {
            continue;
        };
        let (retry, timeout) = (node.retry.clone(), node.timeout);
        if let (Some(policy), Some(cache)) = (&node.cache, lp.params().cache.clone()) {
            let key = policy.key_of(&task.name, &task.input);
            let ttl = policy.ttl;
            if let Some(writes) = cache.get(&key) {
                let task_id = task.id.clone();
                lp.tasks_mut()[i].writes = writes.clone();
                lp.put_writes_cached(&task_id, writes).await?;
                continue;
            }
            cache_keys.push((i, key, ttl));
        }
        let task = &lp.tasks()[i];
        let mut resume: Vec<Value> = lp
            .pending_writes()
            .iter()
            .filter(|(t, c, _)| *t == task.id && c == "__resume__")
            .flat_map(|(_, _, v)| match v {
                Value::List(l) => l.to_vec(),
                other => vec![other.clone()],
            })
            .collect();
        if let Some(map) = lp.resume_map() {
            let next_id = interrupt_id(&task.ns, resume.len());
            if let Some((_, v)) = map.iter().find(|(id, _)| *id == next_id) {
                resume.push(v.clone());
            }
        }
        let attempts = Attempts {
            index: i,
            runner,
            input: task.input.clone(),
            scope: TaskScopeParts {
                task_id: task.id.clone(),
                name: task.name.clone(),
                step: lp.step(),
                ns: task.ns.clone(),
                thread_id: lp.params().config.thread_id.clone(),
                channels: channels.clone(),
                sink: super::stream_messages::task_sink(
                    lp.params().sink.as_ref(),
                    &lp.params().config,
                    task,
                    lp.step(),
                ),
                resume,
                null_resume: null_resume.clone(),
                run: run_scope.clone(),
            },
            retry,
            timeout,
        };
        let span = traced.then(|| {
            crate::spans::task_span(
                &task.name,
                lp.step(),
                &task.id,
                lp.checkpoint_id(),
                lp.params().config.thread_id.as_deref(),
            )
        });
        // Without a subscriber the task's future is not wrapped (nothing to enter).
        match span.filter(|s| !s.is_disabled()) {
            Some(span) => futures.push(attempts.run().instrument(span).boxed()),
            None => futures.push(attempts.run().boxed()),
        }
    }

    let cache_keys = Arc::new(cache_keys);
    let in_tokio = tokio::runtime::Handle::try_current().is_ok();
    let limit = lp
        .params()
        .config
        .max_concurrency
        .unwrap_or(usize::MAX)
        .max(1);
    if futures.len() <= 1 || limit == 1 {
        // One after another, in task order. As in LangGraph, the tasks after a failed one
        // still run (their work is saved for the rerun); the first failure is reported.
        for f in futures {
            let (i, result, body) = f.await;
            remember(lp, &cache_keys, i, &result);
            commit(lp, i, result, body, &mut outcome).await?;
        }
    } else if !in_tokio {
        let mut pending: FuturesUnordered<TaskFuture> = futures.into_iter().collect();
        while let Some((i, result, body)) = pending.next().await {
            remember(lp, &cache_keys, i, &result);
            if commit(lp, i, result, body, &mut outcome).await? {
                break;
            }
        }
    } else {
        let mut set = tokio::task::JoinSet::new();
        let mut queue = futures.into_iter();
        for f in queue.by_ref().take(limit) {
            set.spawn(f);
        }
        while let Some(joined) = set.join_next().await {
            if let Some(f) = queue.next() {
                set.spawn(f);
            }
            let (i, result, body) = match joined {
                Ok(x) => x,
                Err(e) => {
                    return Err(Error::Node {
                        node: String::new(),
                        message: format!("task join failed: {e}"),
                    })
                }
            };
            remember(lp, &cache_keys, i, &result);
            if commit(lp, i, result, body, &mut outcome).await? {
                // Tasks that already finished keep their work; the rest are cancelled.
                while let Some(Ok((i, result, body))) = set.try_join_next() {
                    if result.is_ok() {
                        remember(lp, &cache_keys, i, &result);
                        commit(lp, i, result, body, &mut outcome).await?;
                    }
                }
                set.abort_all();
                break;
            }
        }
    }
    Ok(outcome)
}

/// Caches a successful result of a task with a cache policy.
fn remember(
    lp: &Loop,
    keys: &[(usize, CacheKey, Option<std::time::Duration>)],
    i: usize,
    result: &Result<Vec<(String, Value)>, NodeError>,
) {
    if let (Ok(writes), Some(cache)) = (result, &lp.params().cache) {
        if let Some((_, key, ttl)) = keys.iter().find(|(j, _, _)| *j == i) {
            cache.set(key.clone(), writes.clone(), *ttl);
        }
    }
}

/// Records one finished task. Returns true when the step must stop (a failure).
async fn commit(
    lp: &mut Loop,
    i: usize,
    result: Result<Vec<(String, Value)>, NodeError>,
    body: Vec<(String, Value)>,
    outcome: &mut StepOutcome,
) -> Result<bool> {
    let task_id = lp.tasks()[i].id.clone();
    let name = lp.tasks()[i].name.clone();
    let result = match result {
        Ok(writes) if !lp.params().lenient_writes => {
            match super::targets::check_targets(&lp.params().graph, &name, &writes) {
                Ok(()) => Ok(writes),
                Err(e) => {
                    // Stored as the task's failure, so the thread shows it and a rerun
                    // runs the task again.
                    let repr = e.to_string();
                    lp.put_writes(&task_id, vec![("__error__".to_owned(), repr.into())])
                        .await?;
                    outcome.error = Some(e);
                    return Ok(true);
                }
            }
        }
        other => other,
    };
    match result {
        Ok(mut writes) => {
            // Messages get their ids as written, as Python's stored writes hold them.
            crate::reducers::give_written_message_ids(&lp.params().graph.channels, &mut writes);
            if writes
                .iter()
                .all(|(c, _)| CONTROL_WRITES.contains(&c.as_str()))
            {
                writes.push(("__no_writes__".into(), Value::Nil));
            }
            lp.tasks_mut()[i].writes = writes.clone();
            lp.put_writes(&task_id, writes).await?;
            Ok(false)
        }
        Err(err) => match err.kind {
            NodeErrorKind::Interrupt(interrupts) => {
                let mut writes = vec![(
                    "__interrupt__".to_owned(),
                    Value::List(interrupts.iter().map(Interrupt::to_value).collect()),
                )];
                writes.extend(body.into_iter().filter(|(c, _)| c == "__resume__"));
                lp.put_writes(&task_id, writes).await?;
                outcome.interrupts.extend(interrupts);
                Ok(false)
            }
            NodeErrorKind::Failed { repr, .. } => {
                let mut writes: Vec<(String, Value)> = body;
                writes.push(("__error__".to_owned(), Value::Str(repr.clone().into())));
                lp.put_writes(&task_id, writes).await?;
                outcome.error = Some(Error::Node {
                    node: name,
                    message: repr,
                });
                Ok(true)
            }
            NodeErrorKind::ParentCommand(cmd) => {
                outcome.error = Some(if lp.params().resuming.is_some() {
                    Error::ParentCommand(cmd)
                } else {
                    Error::InvalidUpdate(format!(
                        "node {name:?} sent a command to a parent graph, but this graph has no parent"
                    ))
                });
                Ok(true)
            }
        },
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
