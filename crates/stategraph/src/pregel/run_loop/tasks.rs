//! The tasks of one super-step: prepared from the checkpoint, run concurrently on tokio
//! (one task's attempts in `runner.rs`), each committed (its writes recorded and saved) as
//! soon as it finishes (docs/runtime.md#running-tasks).

use std::sync::Arc;
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use parking_lot::Mutex;
use stategraph_checkpoint::{Value, NULL_TASK_ID};
use tracing::Instrument;

use super::Loop;
use crate::channels::Channels;
use crate::error::{Error, Result};
use crate::pregel::algo::prepare_next_tasks;
use crate::pregel::cache::CacheKey;
use crate::pregel::context::RunScope;
use crate::pregel::graph::NodeRunner;
use crate::pregel::node_error::{NodeError, NodeErrorKind};
use crate::pregel::retry::RetryPolicy;
use crate::pregel::runner::{Attempts, TaskFuture, TaskScopeParts};
use crate::pregel::status::{read_task_statuses, CONTROL_WRITES};
use crate::pregel::stream_messages;
use crate::pregel::targets::check_targets;
use crate::pregel::task::interrupt_id;
use crate::types::Interrupt;

/// What happened in a step.
#[derive(Debug, Default)]
pub(super) struct StepOutcome {
    /// Interrupts raised by the step's tasks.
    pub interrupts: Vec<Interrupt>,
    /// The first failure, if any task failed.
    pub error: Option<Error>,
}

/// The cache keys of the step's tasks with a cache policy: `(task index, key, ttl)`.
type CacheKeys = Vec<(usize, CacheKey, Option<Duration>)>;

/// What every task of a step shares.
struct StepShared {
    channels: Arc<Channels>,
    null_resume: Arc<Mutex<Option<Value>>>,
    run: Arc<RunScope>,
}

impl Loop {
    /// Prepares the tasks of the next step and streams the checkpoint they come from.
    pub(super) fn prepare_tasks_and_emit(&mut self) -> Result<()> {
        self.tasks = prepare_next_tasks(
            &self.checkpoint,
            &self.p.graph,
            &self.channels,
            self.step,
            &self.p.ns,
            self.updated_channels.as_ref(),
        )?;
        self.emit_checkpoint();
        Ok(())
    }

    /// Gives finished tasks back the output they recorded before a failure or interrupt.
    pub(super) fn reapply_finished_writes(&mut self) {
        let statuses = read_task_statuses(
            self.writer
                .pending_writes()
                .iter()
                .map(|(t, c, v)| (t.as_str(), c.as_str(), v)),
        );
        for t in &mut self.tasks {
            if let Some(s) = statuses.get(&t.id) {
                t.writes.extend(s.output.iter().cloned());
                if self.delta.enabled {
                    self.delta.reapplied.insert(t.id.clone());
                }
            }
        }
    }

    /// Runs the step's tasks that have no writes yet, committing each as it finishes.
    pub(super) async fn run_step(&mut self) -> Result<StepOutcome> {
        let to_run: Vec<usize> = (0..self.tasks.len())
            .filter(|i| self.tasks[*i].writes.is_empty())
            .collect();
        let channels = Arc::new(std::mem::take(&mut self.channels));
        let outcome = self.run_tasks(&to_run, channels.clone()).await;
        self.channels = Arc::try_unwrap(channels).unwrap_or_else(|a| (*a).clone());
        outcome
    }

    /// What this step's tasks pass on to subgraphs.
    pub(crate) fn run_scope(&self) -> RunScope {
        let mut map = self.checkpoint_map();
        map.insert(self.p.ns.clone(), self.checkpoint.id.clone());
        RunScope {
            lease: self.writer.lease().cloned(),
            saver: self.p.saver.clone(),
            store: self.p.store.clone(),
            sources: self.p.sources.clone(),
            config: self.p.config.clone(),
            checkpoint_map: map,
            resuming: self.resuming,
        }
    }

    /// Runs the tasks at `indices` of the current step, each committed as it finishes.
    pub(super) async fn run_tasks(
        &mut self,
        indices: &[usize],
        channels: Arc<Channels>,
    ) -> Result<StepOutcome> {
        let shared = StepShared {
            channels,
            null_resume: self.null_resume(),
            run: Arc::new(self.run_scope()),
        };
        let mut futures: Vec<TaskFuture> = Vec::with_capacity(indices.len());
        let mut cache_keys = CacheKeys::new();
        let traced = crate::spans::enabled();
        for &i in indices {
            if let Some(f) = self
                .task_future(i, &shared, &mut cache_keys, traced)
                .await?
            {
                futures.push(f);
            }
        }
        self.drive(futures, &cache_keys).await
    }

    /// The input's resume value for the step's tasks: the run's own, else its parent's.
    fn null_resume(&self) -> Arc<Mutex<Option<Value>>> {
        let own = self
            .writer
            .pending_writes()
            .iter()
            .find(|(t, c, _)| t == NULL_TASK_ID && c == "__resume__")
            .map(|(_, _, v)| v.clone());
        match (&own, &self.p.null_resume) {
            (None, Some(parent)) => parent.clone(),
            _ => Arc::new(Mutex::new(own)),
        }
    }

    /// The future that runs task `i` (in its span when one is recorded); `None` for a node
    /// that does not run and for a task whose writes the cache holds (committed here).
    async fn task_future(
        &mut self,
        i: usize,
        shared: &StepShared,
        cache_keys: &mut CacheKeys,
        traced: bool,
    ) -> Result<Option<TaskFuture>> {
        let task = &self.tasks[i];
        // Only what the task needs of its node is copied (not the node's names and lists).
        let Some(node) = self.p.graph.nodes.get(&task.name) else {
            return Ok(None);
        };
        let Some(runner) = node.run.clone() else {
            return Ok(None);
        };
        let (retry, timeout) = (node.retry.clone(), node.timeout);
        if let (Some(policy), Some(cache)) = (&node.cache, self.p.cache.clone()) {
            let key = policy.key_of(&task.name, &task.input);
            let ttl = policy.ttl;
            if let Some(writes) = cache.get(&key) {
                let task_id = task.id.clone();
                self.tasks[i].writes = writes.clone();
                self.record_cached_writes(&task_id, writes).await?;
                return Ok(None);
            }
            cache_keys.push((i, key, ttl));
        }
        let attempts = self.attempts(i, runner, retry, timeout, shared);
        let task = &self.tasks[i];
        let span = traced.then(|| {
            crate::spans::task_span(
                &task.name,
                self.step,
                &task.id,
                &self.checkpoint.id,
                self.p.config.thread_id.as_deref(),
            )
        });
        // Without a subscriber the task's future is not wrapped (nothing to enter).
        Ok(Some(match span.filter(|s| !s.is_disabled()) {
            Some(span) => attempts.run().instrument(span).boxed(),
            None => attempts.run().boxed(),
        }))
    }

    /// What task `i` needs to run its attempts: its input, and the scope each attempt's
    /// context is built from (its resume values among them).
    fn attempts(
        &self,
        i: usize,
        runner: NodeRunner,
        retry: Option<RetryPolicy>,
        timeout: Option<Duration>,
        shared: &StepShared,
    ) -> Attempts {
        let task = &self.tasks[i];
        let mut resume: Vec<Value> = self
            .writer
            .pending_writes()
            .iter()
            .filter(|(t, c, _)| *t == task.id && c == "__resume__")
            .flat_map(|(_, _, v)| match v {
                Value::List(l) => l.to_vec(),
                other => vec![other.clone()],
            })
            .collect();
        if let Some(map) = &self.resume_map {
            let next_id = interrupt_id(&task.ns, resume.len());
            if let Some((_, v)) = map.iter().find(|(id, _)| *id == next_id) {
                resume.push(v.clone());
            }
        }
        Attempts {
            index: i,
            runner,
            input: task.input.clone(),
            scope: TaskScopeParts {
                task_id: task.id.clone(),
                name: task.name.clone(),
                step: self.step,
                stop: self.stop,
                push: task.triggers.first().map(String::as_str) == Some(crate::pregel::task::PUSH),
                ns: task.ns.clone(),
                thread_id: self.p.config.thread_id.clone(),
                channels: shared.channels.clone(),
                sink: stream_messages::task_sink(
                    self.p.sink.as_ref(),
                    &self.p.config,
                    task,
                    self.step,
                ),
                resume,
                null_resume: shared.null_resume.clone(),
                run: shared.run.clone(),
            },
            retry,
            timeout,
        }
    }

    /// Awaits the step's task futures, committing each as it finishes: one after another
    /// (one task, or `max_concurrency` 1), polled together outside tokio, or spawned on
    /// tokio (at most `max_concurrency` at a time).
    async fn drive(
        &mut self,
        futures: Vec<TaskFuture>,
        cache_keys: &CacheKeys,
    ) -> Result<StepOutcome> {
        let mut outcome = StepOutcome::default();
        let in_tokio = tokio::runtime::Handle::try_current().is_ok();
        let limit = self.p.config.max_concurrency.unwrap_or(usize::MAX).max(1);
        if futures.len() <= 1 || limit == 1 {
            // One after another, in task order. As in LangGraph, the tasks after a failed one
            // still run (their work is saved for the rerun); the first failure is reported.
            for f in futures {
                let (i, result, body) = f.await;
                self.remember(cache_keys, i, &result);
                self.commit(i, result, body, &mut outcome).await?;
            }
        } else if !in_tokio {
            let mut pending: FuturesUnordered<TaskFuture> = futures.into_iter().collect();
            while let Some((i, result, body)) = pending.next().await {
                self.remember(cache_keys, i, &result);
                if self.commit(i, result, body, &mut outcome).await? {
                    break;
                }
            }
        } else {
            self.drive_spawned(futures, limit, cache_keys, &mut outcome)
                .await?;
        }
        Ok(outcome)
    }

    /// [`Loop::drive`] on tokio: `limit` tasks at a time; after a failure, the tasks that
    /// already finished keep their work and the rest are cancelled.
    async fn drive_spawned(
        &mut self,
        futures: Vec<TaskFuture>,
        limit: usize,
        cache_keys: &CacheKeys,
        outcome: &mut StepOutcome,
    ) -> Result<()> {
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
            self.remember(cache_keys, i, &result);
            if self.commit(i, result, body, outcome).await? {
                while let Some(Ok((i, result, body))) = set.try_join_next() {
                    if result.is_ok() {
                        self.remember(cache_keys, i, &result);
                        self.commit(i, result, body, outcome).await?;
                    }
                }
                set.abort_all();
                break;
            }
        }
        Ok(())
    }

    /// Caches a successful result of a task with a cache policy.
    fn remember(
        &self,
        keys: &CacheKeys,
        i: usize,
        result: &Result<Vec<(String, Value)>, NodeError>,
    ) {
        if let (Ok(writes), Some(cache)) = (result, &self.p.cache) {
            if let Some((_, key, ttl)) = keys.iter().find(|(j, _, _)| *j == i) {
                cache.set(key.clone(), writes.clone(), *ttl);
            }
        }
    }

    /// Records one finished task. Returns true when the step must stop (a failure).
    async fn commit(
        &mut self,
        i: usize,
        result: Result<Vec<(String, Value)>, NodeError>,
        body: Vec<(String, Value)>,
        outcome: &mut StepOutcome,
    ) -> Result<bool> {
        let task_id = self.tasks[i].id.clone();
        let name = self.tasks[i].name.clone();
        let result = match result {
            Ok(writes) if !self.p.lenient_writes => {
                match check_targets(&self.p.graph, &name, &writes) {
                    Ok(()) => Ok(writes),
                    Err(e) => {
                        // Stored as the task's failure, so the thread shows it and a rerun
                        // runs the task again.
                        let repr = e.to_string();
                        let writes = vec![("__error__".to_owned(), repr.into())];
                        self.record_task_writes(&task_id, writes).await?;
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
                crate::reducers::give_written_message_ids(&self.p.graph.channels, &mut writes);
                if writes
                    .iter()
                    .all(|(c, _)| CONTROL_WRITES.contains(&c.as_str()))
                {
                    writes.push(("__no_writes__".into(), Value::Nil));
                }
                self.tasks[i].writes = writes.clone();
                self.record_task_writes(&task_id, writes).await?;
                Ok(false)
            }
            Err(err) => match err.kind {
                NodeErrorKind::Interrupt(interrupts) => {
                    let mut writes = vec![(
                        "__interrupt__".to_owned(),
                        Value::List(interrupts.iter().map(Interrupt::to_value).collect()),
                    )];
                    writes.extend(body.into_iter().filter(|(c, _)| c == "__resume__"));
                    self.record_task_writes(&task_id, writes).await?;
                    outcome.interrupts.extend(interrupts);
                    Ok(false)
                }
                NodeErrorKind::Failed { repr, .. } => {
                    let mut writes: Vec<(String, Value)> = body;
                    writes.push(("__error__".to_owned(), Value::Str(repr.clone().into())));
                    self.record_task_writes(&task_id, writes).await?;
                    outcome.error = Some(Error::Node {
                        node: name,
                        message: repr,
                    });
                    Ok(true)
                }
                NodeErrorKind::ParentCommand(cmd) => {
                    outcome.error = Some(if self.p.resuming.is_some() {
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
}
