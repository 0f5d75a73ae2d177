//! [`Entrypoint`]: an async function made a graph (Python's `@entrypoint`), and
//! [`Final`], a return value with a different saved value (`entrypoint.final`).

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::FutureExt;
use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde::Serialize;
use stategraph_checkpoint::{CheckpointSaver, Value};

use super::channels::{END, PREVIOUS, START};
use super::compiled::CompiledEntrypoint;
use super::convert::{decode, encode};
use crate::channels::{Channel, EphemeralValue, LastValue};
use crate::error::Result;
use crate::graph::CompileOptions;
use crate::pregel::cache::{CachePolicy, NodeCache};
use crate::pregel::context::NodeContext;
use crate::pregel::graph::{NodeRunner, PregelGraph, PregelNode, Reads, WriterFn};
use crate::pregel::node_error::NodeError;
use crate::pregel::retry::RetryPolicy;

/// A return value and, apart from it, the value saved for the thread's next run
/// ([`NodeContext::previous`]): Python's `entrypoint.final(value=..., save=...)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Final<V, S = V> {
    /// What the run returns.
    pub value: V,
    /// What the next run of the thread sees as `previous`.
    pub save: S,
}

impl<V: Clone> Final<V, V> {
    /// Returns `value` and saves it too (until [`Final::save`] says otherwise).
    pub fn new(value: V) -> Self {
        Final {
            save: value.clone(),
            value,
        }
    }
}

impl<V, S> Final<V, S> {
    /// Saves `save` for the next run instead (builder style).
    pub fn save<T>(self, save: T) -> Final<V, T> {
        Final {
            value: self.value,
            save,
        }
    }
}

/// What an entrypoint function may return: its value (returned and saved), or a
/// [`Final`] (returned and saved apart).
pub trait EntrypointReturn: Send + 'static {
    /// The type the run returns.
    type Value: DeserializeOwned;
    /// The returned and the saved value, stored.
    fn split(self) -> std::result::Result<(Value, Value), String>;
}

impl<T: Serialize + DeserializeOwned + Send + 'static> EntrypointReturn for T {
    type Value = T;
    fn split(self) -> std::result::Result<(Value, Value), String> {
        let v = encode(&self)?;
        Ok((v.clone(), v))
    }
}

impl<V, S> EntrypointReturn for Final<V, S>
where
    V: Serialize + DeserializeOwned + Send + 'static,
    S: Serialize + Send + 'static,
{
    type Value = V;
    fn split(self) -> std::result::Result<(Value, Value), String> {
        Ok((encode(&self.value)?, encode(&self.save)?))
    }
}

/// An entrypoint function: `Fn(I, NodeContext) -> Fut`, `Fut` returning
/// `Result<R, NodeError>` with `R` an [`EntrypointReturn`].
pub trait EntrypointFn<I, R>: Send + Sync + 'static {
    /// Runs the function.
    fn run(
        &self,
        input: I,
        ctx: NodeContext,
    ) -> futures::future::BoxFuture<'static, Result<R, NodeError>>;
}

impl<I, R, F, Fut> EntrypointFn<I, R> for F
where
    F: Fn(I, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = std::result::Result<R, NodeError>> + Send + 'static,
{
    fn run(
        &self,
        input: I,
        ctx: NodeContext,
    ) -> futures::future::BoxFuture<'static, Result<R, NodeError>> {
        (self)(input, ctx).boxed()
    }
}

/// An entrypoint being set up: its function, then a checkpointer, store, cache, retry
/// policy; [`Entrypoint::compile`] makes the graph.
pub struct Entrypoint<I, O> {
    name: String,
    runner: NodeRunner,
    options: CompileOptions,
    retry: Option<RetryPolicy>,
    cache: Option<CachePolicy>,
    timeout: Option<std::time::Duration>,
    _types: PhantomData<fn(I) -> O>,
}

impl<I: DeserializeOwned + Send + 'static, O> Entrypoint<I, O> {
    /// The entrypoint `name` (the node the graph runs, Python's function name) running `f`
    /// on each input; `f` returns a value or a [`Final`].
    pub fn new<R, F>(name: impl Into<String>, f: F) -> Self
    where
        R: EntrypointReturn<Value = O>,
        F: EntrypointFn<I, R>,
    {
        let name = name.into();
        Entrypoint {
            runner: runner::<I, R, F>(name.clone(), Arc::new(f)),
            name,
            options: CompileOptions::new(),
            retry: None,
            cache: None,
            timeout: None,
            _types: PhantomData,
        }
    }
}

impl<I, O> Entrypoint<I, O> {
    /// Saves its threads in `saver` (Python's `checkpointer=`).
    pub fn checkpointer(mut self, saver: Arc<dyn CheckpointSaver>) -> Self {
        self.options = self.options.checkpointer(saver);
        self
    }

    /// Gives its runs this long-term store ([`NodeContext::store`]).
    pub fn store(mut self, store: Arc<dyn stategraph_store::BaseStore>) -> Self {
        self.options = self.options.store(store);
        self
    }

    /// Keeps the results of tasks with a cache policy here (Python's `cache=`).
    pub fn cache(mut self, cache: Arc<dyn NodeCache>) -> Self {
        self.options = self.options.cache(cache);
        self
    }

    /// Caches the entrypoint's own results by input (Python's `cache_policy=`).
    pub fn cache_policy(mut self, policy: CachePolicy) -> Self {
        self.cache = Some(policy);
        self
    }

    /// Retries the entrypoint's function by `policy` (Python's `retry_policy=`).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Bounds each attempt of the entrypoint's function (Python's `timeout=`).
    pub fn timeout(mut self, limit: std::time::Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// The graph: one node (the entrypoint) triggered by `__start__`, writing its return
    /// value to `__end__` and its saved value to `__previous__`, as Python's `@entrypoint`
    /// builds it.
    pub fn compile(self) -> Result<CompiledEntrypoint<I, O>> {
        let mut channels: IndexMap<String, Box<dyn Channel>> = IndexMap::new();
        channels.insert(START.into(), Box::new(EphemeralValue::new(true)));
        channels.insert(END.into(), Box::new(LastValue::new()));
        channels.insert(PREVIOUS.into(), Box::new(LastValue::new()));
        let writers: WriterFn = Arc::new(|output, _| Ok(output.writes));
        let node = PregelNode {
            name: self.name.clone(),
            triggers: vec![START.into()],
            reads: Reads::Single(START.into()),
            run: Some(self.runner),
            writers,
            subgraph: None,
            retry: self.retry,
            timeout: self.timeout,
            cache: self.cache,
            hidden: false,
            writes: None,
        };
        let mut nodes = IndexMap::new();
        nodes.insert(self.name, node);
        let mut graph = PregelGraph {
            channels,
            nodes,
            trigger_to_nodes: IndexMap::new(),
            output_channels: vec![END.into()],
            stream_channels: vec![END.into()],
            functional: true,
        };
        graph.index_triggers();
        Ok(CompiledEntrypoint::new(graph, self.options))
    }
}

/// The entrypoint's node body: the input decoded, the function run, its return value to
/// `__end__` and its saved value to `__previous__` (after its resume bookkeeping).
fn runner<I, R, F>(name: String, f: Arc<F>) -> NodeRunner
where
    I: DeserializeOwned + Send + 'static,
    R: EntrypointReturn,
    F: EntrypointFn<I, R>,
{
    Arc::new(move |input: Value, ctx: NodeContext| {
        let f = f.clone();
        let name = name.clone();
        async move {
            let arg: I = decode(&input).map_err(|e| {
                NodeError::named(
                    "TypeError",
                    format!(
                        "entrypoint {name:?} takes {}, got {input}: {e}",
                        std::any::type_name::<I>()
                    ),
                )
            })?;
            let out = f.run(arg, ctx.clone()).await?;
            let (value, save) = out.split().map_err(|e| {
                NodeError::named(
                    "TypeError",
                    format!("entrypoint {name:?} returned a value that cannot be stored: {e}"),
                )
            })?;
            let mut writes = std::mem::take(&mut *ctx.inner.body_writes.lock());
            writes.push((END.to_owned(), value));
            writes.push((PREVIOUS.to_owned(), save));
            Ok(writes)
        }
        .boxed()
    })
}
