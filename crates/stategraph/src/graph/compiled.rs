//! A compiled graph: run it (`invoke`, `stream`) on a thread, with or without a saver.

use std::marker::PhantomData;
use std::sync::Arc;

use futures::stream::{BoxStream, StreamExt};
use stategraph_checkpoint::{CheckpointSaver, Map, Value};

use super::compile::CompileOptions;
use super::outcome::Outcome;
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::pregel::graph::PregelGraph;
use crate::pregel::run_loop::{Loop, LoopParams, RunInput, RunOutcome};
use crate::pregel::sources::Sources;
use crate::pregel::stream::{StreamEvent, StreamMode, StreamSink};
use crate::state::{IntoUpdate, State};
use crate::types::Command;

/// "No input": continue the thread from where it stopped (LangGraph's `invoke(None)`).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoInput;

/// What a run may be given: an update of the state (new input), a [`Command`], or
/// [`NoInput`].
pub trait IntoInput {
    /// Converts to the run's input.
    fn into_input(self) -> Result<RunInput>;
}

impl<U: IntoUpdate> IntoInput for U {
    fn into_input(self) -> Result<RunInput> {
        let writes = self.into_writes()?;
        let map: Map = writes
            .into_iter()
            .map(|(k, v)| (Value::Str(k.into()), v))
            .collect();
        Ok(RunInput::Values(Value::Map(map)))
    }
}

impl<U: IntoUpdate> IntoInput for Command<U> {
    fn into_input(self) -> Result<RunInput> {
        let update = match self.update {
            Some(u) => Some(u.into_writes()?),
            None => None,
        };
        Ok(RunInput::Command(Command {
            graph: self.graph,
            update,
            resume: self.resume,
            goto: self.goto,
        }))
    }
}

impl IntoInput for NoInput {
    fn into_input(self) -> Result<RunInput> {
        Ok(RunInput::Resume)
    }
}

/// A graph ready to run. Cheap to clone; safe to share between tasks.
pub struct CompiledGraph<S> {
    pub(crate) graph: Arc<PregelGraph>,
    pub(crate) options: CompileOptions,
    pub(crate) sources: Sources,
    pub(crate) topology: Arc<super::draw::topology::Topology>,
    _state: PhantomData<fn() -> S>,
}

impl<S> Clone for CompiledGraph<S> {
    fn clone(&self) -> Self {
        CompiledGraph {
            graph: self.graph.clone(),
            options: self.options.clone(),
            sources: self.sources.clone(),
            topology: self.topology.clone(),
            _state: PhantomData,
        }
    }
}

impl<S: State> CompiledGraph<S> {
    pub(crate) fn new(
        graph: Arc<PregelGraph>,
        options: CompileOptions,
        topology: Arc<super::draw::topology::Topology>,
    ) -> Self {
        CompiledGraph {
            graph,
            options,
            sources: Sources::default(),
            topology,
            _state: PhantomData,
        }
    }

    /// Uses these id and clock sources (to reproduce a trace exactly).
    pub fn with_sources(mut self, sources: Sources) -> Self {
        self.sources = sources;
        self
    }

    /// The checkpointer, if the graph has one.
    pub fn checkpointer(&self) -> Option<&Arc<dyn CheckpointSaver>> {
        self.options.checkpointer.as_ref()
    }

    /// The graph's nodes and edges for drawing, as Python LangGraph's `get_graph()` finds
    /// them: `draw_mermaid()` on the result prints Python's Mermaid text. Subgraphs are
    /// drawn as single nodes (see [`CompiledGraph::get_graph_xray`]).
    ///
    /// ```
    /// # use stategraph::{DynState, StateGraph, START, END, channels::LastValue};
    /// let mut g = StateGraph::<DynState>::with_channels(vec![("n".into(), Box::new(LastValue::new()) as _)]);
    /// g.add_node("inc", |_s: DynState| async move { stategraph::update([("n", 1)]) });
    /// g.add_edge(START, "inc").add_edge("inc", END);
    /// let mermaid = g.compile().unwrap().get_graph().draw_mermaid();
    /// assert!(mermaid.contains("\t__start__ --> inc;\n\tinc --> __end__;\n"));
    /// ```
    pub fn get_graph(&self) -> super::draw::DrawGraph {
        super::draw::get_graph(&self.topology, 0)
    }

    /// [`CompiledGraph::get_graph`] with subgraphs expanded `depth` levels deep (Python's
    /// `get_graph(xray=depth)`; `usize::MAX` for `xray=True`). A subgraph's nodes get ids
    /// `name:inner`.
    pub fn get_graph_xray(&self, depth: usize) -> super::draw::DrawGraph {
        super::draw::get_graph(&self.topology, depth)
    }

    /// The long-term store given at compile time, if any.
    pub fn store(&self) -> Option<&Arc<dyn stategraph_store::BaseStore>> {
        self.options.store.as_ref()
    }

    /// The Pregel form of the graph (channels, nodes, triggers).
    pub fn pregel(&self) -> &PregelGraph {
        &self.graph
    }

    fn params(&self, config: &RunConfig, sink: Option<StreamSink>) -> LoopParams {
        LoopParams {
            graph: self.graph.clone(),
            saver: self.options.checkpointer.clone(),
            sources: self.sources.clone(),
            config: config.clone(),
            // An empty per-call list means "not given", as in LangGraph.
            interrupt_before: config
                .interrupt_before
                .clone()
                .filter(|l| !l.is_empty())
                .unwrap_or_else(|| self.options.interrupt_before.clone()),
            interrupt_after: config
                .interrupt_after
                .clone()
                .filter(|l| !l.is_empty())
                .unwrap_or_else(|| self.options.interrupt_after.clone()),
            sink,
            ns: String::new(),
            resuming: None,
            null_resume: None,
            cache: self.options.cache.clone(),
            store: self.options.store.clone(),
            lease: None,
        }
    }

    async fn run(
        &self,
        input: RunInput,
        config: &RunConfig,
        sink: Option<StreamSink>,
    ) -> Result<RunOutcome> {
        if config.recursion_limit < 1 {
            return Err(Error::InvalidGraph(
                "recursion_limit must be at least 1".into(),
            ));
        }
        let lp = Loop::start(self.params(config, sink), input).await?;
        lp.run().await
    }

    /// Waits until no run of `config`'s thread in this process (on this graph's saver) is
    /// under way or still storing the saves of a cancelled run. A run or `update_state`
    /// waits for this by itself; call it before handing a thread whose run was cancelled
    /// to another process (or another saver instance), so that the other side starts from
    /// everything the cancelled run stored. Returns at once without a saver or thread id.
    pub async fn settle(&self, config: &RunConfig) {
        if let (Some(saver), Some(thread_id)) = (&self.options.checkpointer, &config.thread_id) {
            drop(crate::pregel::lease::acquire(saver, thread_id).await);
        }
    }

    /// Runs the graph to the end or until it pauses, and returns the [`Outcome`]: the
    /// state (read its fields through it), and the interrupts or nodes that stopped it
    /// when it paused ([`Outcome::is_interrupted`], [`Outcome::done`]).
    pub async fn invoke(&self, input: impl IntoInput, config: &RunConfig) -> Result<Outcome<S>> {
        let outcome = self.run(input.into_input()?, config, None).await?;
        Ok(Outcome {
            state: S::from_values(&outcome.values)?,
            interrupts: outcome.interrupts,
            values: outcome.values,
            next: outcome.next,
        })
    }

    /// Runs the graph, yielding events of the given modes as they happen. A failure of
    /// the run is the stream's last item. Dropping the stream cancels the run, as dropping
    /// an `invoke` future does (see the README on what a cancelled run leaves).
    pub fn stream(
        &self,
        input: impl IntoInput,
        config: &RunConfig,
        modes: &[StreamMode],
    ) -> BoxStream<'static, Result<StreamEvent>> {
        let input = match input.into_input() {
            Ok(i) => i,
            Err(e) => return futures::stream::once(async move { Err(e) }).boxed(),
        };
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let sink = StreamSink::new(tx, modes);
        let this = self.clone();
        let config = config.clone();
        let handle = tokio::spawn(async move { this.run(input, &config, Some(sink)).await });
        let cancel = AbortOnDrop(handle.abort_handle());
        let events =
            futures::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|e| (Ok(e), rx)) },
            );
        let tail = futures::stream::once(async move {
            let _cancel = cancel;
            match handle.await {
                Ok(Ok(_)) => None,
                Ok(Err(e)) => Some(Err(e)),
                Err(e) => Some(Err(Error::Node {
                    node: String::new(),
                    message: format!("run task failed: {e}"),
                })),
            }
        })
        .filter_map(|x| async move { x });
        events.chain(tail).boxed()
    }
}

/// Cancels a streamed run when its stream is dropped before the run ended.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
