//! A step of a functional-API graph, whose tasks call tasks (`pregel/call.rs`): the step's
//! tasks and the tasks they call run together, each committed as it finishes; a call is
//! answered once the called task's writes are recorded, or at once when the checkpoint's
//! pending writes (or the cache) already hold its result, so a finished task never runs
//! again on resume (LangGraph's `accept_push` and `_call`).

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use stategraph_checkpoint::{ChannelVersion, Value};
use tokio::sync::{mpsc, oneshot};

use super::{CacheKeys, Loop, StepOutcome, StepShared};
use crate::error::Result;
use crate::pregel::algo::{apply_writes, node_namespace, read_channels, TaskWrites};
use crate::pregel::cache::CacheKey;
use crate::pregel::context::NodeContext;
use crate::pregel::context::{Call, CallReply, CallRequest};
use crate::pregel::events;
use crate::pregel::graph::NodeRunner;
use crate::pregel::node_error::{NodeError, NodeErrorKind};
use crate::pregel::runner::TaskFuture;
use crate::pregel::status::read_task_statuses;
use crate::pregel::stream::StreamMode;
use crate::pregel::task::{checkpoint_id_bytes, task_id, PathPart, Task, PUSH};
use crate::types::Interrupt;

/// A task's writes, or how it failed, and the writes its last attempt made in its body.
type TaskResult = (
    Result<Vec<(String, Value)>, NodeError>,
    Vec<(String, Value)>,
);

/// A finished task of the step: one the step prepared, or one a task called.
enum Finished {
    /// A task of the step, by index.
    Step(usize, TaskResult),
    /// A called task, by index, with where its result goes and its cache entry.
    Call(
        usize,
        TaskResult,
        oneshot::Sender<CallReply>,
        Option<(CacheKey, Option<std::time::Duration>)>,
    ),
}

type Running = FuturesUnordered<BoxFuture<'static, Finished>>;

impl Loop {
    /// Runs the step's task futures and the tasks they call, all polled together, each
    /// committed as it finishes; a failure of a step task stops the step (the tasks still
    /// running are dropped), a called task's failure goes to its caller.
    pub(super) async fn drive_with_calls(
        &mut self,
        futures: Vec<TaskFuture>,
        mut cache_keys: CacheKeys,
        shared: &StepShared,
        mut inbox: mpsc::UnboundedReceiver<CallRequest>,
    ) -> Result<StepOutcome> {
        let mut outcome = StepOutcome::default();
        let mut running: Running = futures
            .into_iter()
            .map(|f| f.map(|(i, r, b)| Finished::Step(i, (r, b))).boxed())
            .collect();
        loop {
            if running.is_empty() {
                // Calls a task made without awaiting them still run in this step.
                match inbox.try_recv() {
                    Ok(request) => self.accept_call(request, shared, &mut running).await?,
                    Err(_) => break,
                }
                continue;
            }
            tokio::select! {
                biased;
                Some(request) = inbox.recv() => {
                    self.accept_call(request, shared, &mut running).await?;
                }
                Some(done) = running.next() => match done {
                    Finished::Step(i, (result, body)) => {
                        self.remember(&cache_keys, i, &result);
                        if result.as_ref().is_err_and(|e| matches!(e.kind, NodeErrorKind::Interrupt(_))) {
                            // The values streamed with the interrupt are the step's channels
                            // (lent to the tasks until the step ends): a copy of the handles.
                            self.channels = (*shared.channels).clone();
                        }
                        if self.commit(i, result, body, &mut outcome).await? {
                            break;
                        }
                    }
                    Finished::Call(i, (result, body), reply, key) => {
                        if let Some((key, ttl)) = key {
                            cache_keys.push((i, key, ttl));
                        }
                        self.remember(&cache_keys, i, &result);
                        self.commit_call(i, result, body, reply).await?;
                    }
                },
            }
        }
        Ok(outcome)
    }

    /// Prepares the task a call becomes and answers it from the checkpoint's pending
    /// writes or the cache, or starts it.
    async fn accept_call(
        &mut self,
        request: CallRequest,
        shared: &StepShared,
        running: &mut Running,
    ) -> Result<()> {
        let CallRequest {
            caller_ns,
            path,
            call,
            reply,
        } = request;
        let task = self.call_task(&caller_ns, path, &call);
        if let Some(t) = self.tasks.iter().find(|t| t.id == task.id) {
            // The same call again (a caller retried by hand): answer from what it wrote.
            let result = returned(&t.writes).ok_or_else(|| {
                NodeError::msg(format!("task {:?} ({}) is already running", t.name, t.id))
            });
            let _ = reply.send(CallReply {
                task_id: task.id,
                result,
            });
            return Ok(());
        }
        self.emit_call_start(&task);
        let id = task.id.clone();
        self.tasks.push(task);
        let i = self.tasks.len() - 1;
        let stored = read_task_statuses(
            self.writer
                .pending_writes()
                .iter()
                .filter(|(t, _, _)| *t == id)
                .map(|(t, c, v)| (t.as_str(), c.as_str(), v)),
        );
        if let Some(status) = stored.get(&id).filter(|s| s.finished()) {
            self.tasks[i].writes = status.output.clone();
            return answer(reply, id, &status.output);
        }
        let key = match (&call.cache, &self.p.cache) {
            (Some(policy), Some(cache)) => {
                let key = policy.key_of(&call.name, &call.input);
                if let Some(writes) = cache.get(&key) {
                    self.tasks[i].writes = writes.clone();
                    self.record_cached_writes(&id, writes.clone()).await?;
                    return answer(reply, id, &writes);
                }
                Some((key, policy.ttl))
            }
            _ => None,
        };
        let attempts = self.attempts(i, call_runner(&call), call.retry, call.timeout, shared);
        running.push(
            attempts
                .run()
                .map(move |(i, r, b)| Finished::Call(i, (r, b), reply, key))
                .boxed(),
        );
        Ok(())
    }

    /// The push task of a call: its id hashed from the caller's namespace, this step, the
    /// task's name, the caller's path and the call's index, as LangGraph's
    /// `prepare_push_task_functional` does.
    fn call_task(&self, caller_ns: &str, path: crate::pregel::task::TaskPath, call: &Call) -> Task {
        let node_ns = node_namespace(caller_ns, &call.name);
        let parent = match path.0.get(1) {
            Some(PathPart::Path(p)) => p.to_path_string(),
            _ => String::new(),
        };
        let index = match path.0.get(2) {
            Some(PathPart::Int(n)) => n.to_string(),
            _ => String::new(),
        };
        let step = self.step.to_string();
        let id = task_id(
            &checkpoint_id_bytes(&self.checkpoint.id),
            &[&node_ns, &step, &call.name, PUSH, &parent, &index],
        );
        Task {
            ns: format!("{node_ns}:{id}"),
            id,
            name: call.name.clone(),
            path,
            triggers: vec![PUSH.to_owned()],
            // Python's `(args, kwargs)` of the call, as the `tasks` stream shows it.
            input: Value::list(vec![
                Value::list(vec![call.input.clone()]),
                Value::Map(Default::default()),
            ]),
            writes: Vec::new(),
        }
    }

    /// What LangGraph does when a step stops on an interrupt while some of its tasks
    /// finished (the calls before the interrupt): it applies their writes to streams the
    /// `values` they give, on a copy here (nothing of it is saved), and takes a channel
    /// version for it from the saver, as Python's does, so that the versions of the
    /// thread's next checkpoints are the ones Python mints.
    pub(super) fn apply_at_interrupt(&mut self) -> Result<()> {
        if self.writer.pending_writes().is_empty() || self.tasks.iter().all(|t| t.writes.is_empty())
        {
            return Ok(());
        }
        let mut checkpoint = self.checkpoint.clone();
        let mut channels = self.channels.clone();
        let saver = self.p.saver.clone();
        let next = move |current: Option<&ChannelVersion>| match &saver {
            Some(s) => s.get_next_version(current),
            None => stategraph_checkpoint::version_gen::next_int_version(current),
        };
        let writes: Vec<TaskWrites<'_>> = self.tasks.iter().map(TaskWrites::from).collect();
        let updated = apply_writes(
            &mut checkpoint,
            &mut channels,
            &writes,
            &next,
            &self.p.graph.trigger_to_nodes,
        )?;
        let outputs = &self.p.graph.output_channels;
        if let Some(sink) = self.p.sink.as_ref().filter(|s| s.wants(StreamMode::Values)) {
            if updated.iter().any(|c| outputs.contains(c)) {
                let values = read_channels(&channels, outputs);
                sink.emit(
                    StreamMode::Values,
                    values.into_values().next().unwrap_or_default(),
                );
            }
        }
        Ok(())
    }

    /// Streams the start of a called task (`tasks`, `debug`).
    fn emit_call_start(&self, task: &Task) {
        if let Some(sink) = &self.p.sink {
            if sink.wants(StreamMode::Tasks) || sink.wants(StreamMode::Debug) {
                let payload = events::task_start_payload(task);
                self.emit_with_debug(sink, StreamMode::Tasks, payload, self.step, "task");
            }
        }
    }

    /// Records a called task's writes, then answers its caller: its return value, or its
    /// failure or interrupt (which the caller raises in turn, so the run stops on the
    /// caller's, not on this one).
    async fn commit_call(
        &mut self,
        i: usize,
        result: Result<Vec<(String, Value)>, NodeError>,
        body: Vec<(String, Value)>,
        reply: oneshot::Sender<CallReply>,
    ) -> Result<()> {
        let task_id = self.tasks[i].id.clone();
        let (writes, answer) = match result {
            Ok(writes) => {
                let value = returned(&writes).unwrap_or_default();
                (writes, Ok(value))
            }
            Err(err) => match err.kind {
                NodeErrorKind::Interrupt(interrupts) => {
                    let mut writes = vec![(
                        "__interrupt__".to_owned(),
                        Value::List(interrupts.iter().map(Interrupt::to_value).collect()),
                    )];
                    writes.extend(body.into_iter().filter(|(c, _)| c == "__resume__"));
                    (writes, Err(NodeError::interrupt(interrupts)))
                }
                NodeErrorKind::Failed { repr } => {
                    let mut writes = body;
                    writes.push(("__error__".to_owned(), Value::Str(repr.clone().into())));
                    (writes, Err(NodeError::repr_only(repr)))
                }
                NodeErrorKind::ParentCommand(_) => (Vec::new(), Err(err)),
            },
        };
        if answer.is_ok() {
            self.tasks[i].writes = writes.clone();
        }
        self.record_task_writes(&task_id, writes).await?;
        let _ = reply.send(CallReply {
            task_id,
            result: answer,
        });
        Ok(())
    }
}

/// A called task's return value among its writes.
fn returned(writes: &[(String, Value)]) -> Option<Value> {
    writes
        .iter()
        .find(|(c, _)| c == "__return__")
        .map(|(_, v)| v.clone())
}

/// Answers a call from the writes a finished task left.
fn answer(
    reply: oneshot::Sender<CallReply>,
    task_id: String,
    writes: &[(String, Value)],
) -> Result<()> {
    let _ = reply.send(CallReply {
        task_id,
        result: Ok(returned(writes).unwrap_or_default()),
    });
    Ok(())
}

/// A called task's body as a node runner: its return value becomes its `__return__`
/// write, after the resume bookkeeping its body made.
fn call_runner(call: &Call) -> NodeRunner {
    let func = call.func.clone();
    Arc::new(move |input: Value, ctx: NodeContext| {
        let func = func.clone();
        // The task's input is `[[arg], {}]` (see `call_task`).
        let arg = match &input {
            Value::List(parts) => parts
                .first()
                .and_then(Value::as_list)
                .and_then(|args| args.first())
                .cloned()
                .unwrap_or_default(),
            _ => Value::Nil,
        };
        async move {
            let value = func(arg, ctx.clone()).await?;
            let mut writes = std::mem::take(&mut *ctx.inner.body_writes.lock());
            writes.push(("__return__".to_owned(), value));
            Ok(writes)
        }
        .boxed()
    })
}
