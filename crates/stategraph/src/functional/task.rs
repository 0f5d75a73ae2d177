//! Tasks: [`task`] turns an async function into a [`Task`] that an entrypoint (or another
//! task) calls with [`NodeContext::call`]; each call is a task of its own, checkpointed
//! as Python's `@task` calls are.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use stategraph_checkpoint::Value;

use super::convert::{decode, encode};
use crate::pregel::cache::CachePolicy;
use crate::pregel::context::NodeContext;
use crate::pregel::context::{Call, CallFn};
use crate::pregel::node_error::NodeError;
use crate::pregel::retry::RetryPolicy;

/// A task: a named async function whose calls are checkpointed (Python's `@task`). Make
/// one with [`task`]; call it with [`NodeContext::call`]. Cheap to clone.
pub struct Task<I, O> {
    pub(crate) template: Call,
    _types: PhantomData<fn(I) -> O>,
}

impl<I, O> Clone for Task<I, O> {
    fn clone(&self) -> Self {
        Task {
            template: self.template.clone(),
            _types: PhantomData,
        }
    }
}

impl<I, O> std::fmt::Debug for Task<I, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task")
            .field("name", &self.template.name)
            .finish_non_exhaustive()
    }
}

/// A function usable as a task taking `I` and returning `O`: `Fn(I) -> Fut` or
/// `Fn(I, NodeContext) -> Fut` (to interrupt, call tasks, reach the store), where `Fut`
/// returns `Result<O, NodeError>`. `M` only tells the two shapes apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a task taking `{I}` and returning `{O}`",
    note = "a task is `|x: I| async move {{ Ok(..) }}` or `|x: I, ctx: NodeContext| async move {{ Ok(..) }}`, returning `Result<O, NodeError>`"
)]
pub trait TaskFn<I, O, M>: Send + Sync + 'static {
    /// Runs the function.
    fn run(
        &self,
        input: I,
        ctx: NodeContext,
    ) -> futures::future::BoxFuture<'static, Result<O, NodeError>>;
}

impl<I, O, F, Fut> TaskFn<I, O, (I,)> for F
where
    F: Fn(I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, NodeError>> + Send + 'static,
{
    fn run(
        &self,
        input: I,
        _ctx: NodeContext,
    ) -> futures::future::BoxFuture<'static, Result<O, NodeError>> {
        (self)(input).boxed()
    }
}

impl<I, O, F, Fut> TaskFn<I, O, (I, NodeContext)> for F
where
    F: Fn(I, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, NodeError>> + Send + 'static,
{
    fn run(
        &self,
        input: I,
        ctx: NodeContext,
    ) -> futures::future::BoxFuture<'static, Result<O, NodeError>> {
        (self)(input, ctx).boxed()
    }
}

/// A task named `name` running `f` (Python's `@task(name=...)`). Its argument and result
/// are stored as msgpack (serde): a stored result that `O` cannot hold (a thread another
/// program wrote) fails the caller with a `TypeError` naming the task and its id.
///
/// ```
/// use stategraph::functional::task;
/// let add_one = task("add_one", |x: i64| async move { Ok(x + 1) });
/// # let _ = add_one;
/// ```
pub fn task<I, O, M>(name: impl Into<String>, f: impl TaskFn<I, O, M>) -> Task<I, O>
where
    I: DeserializeOwned + Send + 'static,
    O: Serialize + Send + 'static,
{
    let name: String = name.into();
    let f = Arc::new(f);
    let label = name.clone();
    let func: CallFn = Arc::new(move |input: Value, ctx: NodeContext| {
        let f = f.clone();
        let label = label.clone();
        async move {
            let arg: I = decode(&input).map_err(|e| {
                NodeError::named(
                    "TypeError",
                    format!(
                        "task {label:?} takes {}, got {input}: {e}",
                        std::any::type_name::<I>()
                    ),
                )
            })?;
            let out = f.run(arg, ctx).await?;
            encode(&out).map_err(|e| {
                NodeError::named(
                    "TypeError",
                    format!(
                        "task {label:?} returned a {} that cannot be stored: {e}",
                        std::any::type_name::<O>()
                    ),
                )
            })
        }
        .boxed()
    });
    Task {
        template: Call {
            name,
            func,
            input: Value::Nil,
            retry: None,
            cache: None,
            timeout: None,
        },
        _types: PhantomData,
    }
}

impl<I, O> Task<I, O> {
    /// The task's name.
    pub fn name(&self) -> &str {
        &self.template.name
    }

    /// Retries a failed call by `policy` (Python's `retry_policy=`).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.template.retry = Some(policy);
        self
    }

    /// Caches calls' results by argument (Python's `cache_policy=`), in the cache given
    /// to the entrypoint ([`super::Entrypoint::cache`]).
    pub fn cache(mut self, policy: CachePolicy) -> Self {
        self.template.cache = Some(policy);
        self
    }

    /// Bounds each attempt of a call (Python's `timeout=`).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.template.timeout = Some(limit);
        self
    }
}
