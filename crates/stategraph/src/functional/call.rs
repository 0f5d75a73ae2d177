//! What a running task or entrypoint does with the functional API through its
//! [`NodeContext`]: [`NodeContext::call`] a task, read [`NodeContext::previous`].

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::convert::{decode, encode};
use super::task::Task;
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// The result of a call ([`NodeContext::call`]): await it for the task's return value.
/// The task starts when it is called, so several calls run concurrently; awaiting one
/// that was interrupted gives the interrupt, to be returned with `?`.
#[must_use = "a call's result (or its interrupt) is only seen when it is awaited"]
pub struct CallFuture<O> {
    inner: BoxFuture<'static, Result<O, NodeError>>,
}

impl<O> Future for CallFuture<O> {
    type Output = Result<O, NodeError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

impl NodeContext {
    /// Calls `task` with `arg` (Python's calling a `@task` function): the call becomes a
    /// task of this step, checkpointed with its result as Python checkpoints it, so a run
    /// resumed after an interrupt or a failure gets the stored result back instead of
    /// running the task again. Only an entrypoint's run takes calls ([`super::Entrypoint`]);
    /// elsewhere the future fails with a `RuntimeError` saying so.
    pub fn call<I, O>(&self, task: &Task<I, O>, arg: I) -> CallFuture<O>
    where
        I: Serialize,
        O: DeserializeOwned + Send + 'static,
    {
        let name = task.template.name.clone();
        let fail = |e: NodeError| CallFuture {
            inner: async move { Err(e) }.boxed(),
        };
        let Some(scope) = &self.inner.calls else {
            return fail(NodeError::named(
                "RuntimeError",
                format!(
                    "task {name:?} called from node {:?}: tasks are called from an \
                     entrypoint (stategraph::functional::Entrypoint) or its tasks",
                    self.node()
                ),
            ));
        };
        let input = match encode(&arg) {
            Ok(v) => v,
            Err(e) => {
                return fail(NodeError::named(
                    "TypeError",
                    format!("the argument of task {name:?} cannot be stored: {e}"),
                ))
            }
        };
        let mut call = task.template.clone();
        call.input = input;
        let rx = scope.send(self.checkpoint_ns(), call);
        CallFuture {
            inner: async move {
                let reply = rx.await.map_err(|_| {
                    NodeError::named(
                        "RuntimeError",
                        format!("task {name:?} was not run: its step ended"),
                    )
                })?;
                let value = reply.result?;
                decode(&value).map_err(|e| {
                    NodeError::named(
                        "TypeError",
                        format!(
                            "task {name:?} (task id {}) returned {value}, which is not a {}: {e}",
                            reply.task_id,
                            std::any::type_name::<O>()
                        ),
                    )
                })
            }
            .boxed(),
        }
    }

    /// The value the thread's last entrypoint run saved (its return value, or what
    /// [`super::Final::save`] set): Python's `previous`. `None` on a new thread, and
    /// outside an entrypoint; a value `T` cannot hold is a `TypeError`.
    pub fn previous<T: DeserializeOwned>(&self) -> Result<Option<T>, NodeError> {
        let Some(ch) = self
            .inner
            .channels
            .get("__previous__")
            .filter(|c| c.is_available())
        else {
            return Ok(None);
        };
        let value = ch.get().unwrap_or_default();
        if value.is_nil() {
            return Ok(None);
        }
        decode(&value).map(Some).map_err(|e| {
            NodeError::named(
                "TypeError",
                format!(
                    "the previous value of {:?} is {value}, which is not a {}: {e}",
                    self.node(),
                    std::any::type_name::<T>()
                ),
            )
        })
    }
}
