//! A compiled graph: run it (`invoke`, `stream`) on a thread, with or without a saver.

use std::marker::PhantomData;
use std::sync::Arc;

use futures::stream::BoxStream;
use stategraph_checkpoint::{CheckpointSaver, Map, Value};

use super::compile_options::CompileOptions;
use super::outcome::Outcome;
use crate::config::{AsRunConfig, RunConfig};
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

impl IntoInput for RunInput {
    fn into_input(self) -> Result<RunInput> {
        Ok(self)
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
    /// The declared type of the runs' context, checked before a run starts.
    pub(crate) context_type: Option<crate::pregel::runtime_context::ContextType>,
    pub(crate) options: CompileOptions,
    pub(crate) sources: Sources,
    pub(crate) topology: Arc<super::draw::topology::Topology>,
    /// What [`CompiledGraph::with_config`] set: merged under every call's config.
    pub(crate) defaults: Option<Arc<RunConfig>>,
    /// What the run's span is named after (see [`crate::spans`]).
    pub(crate) run_name: crate::spans::RunName,
    /// The JSON schemas of its state, input, output and context (see
    /// [`super::json_schema`]).
    pub(crate) schemas: Arc<super::io_spec::JsonSchemas>,
    _state: PhantomData<fn() -> S>,
}

impl<S> Clone for CompiledGraph<S> {
    fn clone(&self) -> Self {
        CompiledGraph {
            graph: self.graph.clone(),
            context_type: self.context_type,
            options: self.options.clone(),
            sources: self.sources.clone(),
            topology: self.topology.clone(),
            defaults: self.defaults.clone(),
            run_name: self.run_name.clone(),
            schemas: self.schemas.clone(),
            _state: PhantomData,
        }
    }
}

impl CompiledGraph<crate::state::DynState> {
    /// The graph a [`spec`](CompiledGraph::spec) describes, compiled with `options`
    /// (give it the checkpointer the threads are in): it reads threads (`get_state`,
    /// `get_state_with`, `get_state_history`) as the graph with the code does, and
    /// `update_state` works as a node without conditional edges; but its nodes cannot
    /// run, so a run, or an `update_state` as a node with conditional edges, is an error
    /// naming the node. An unknown reducer name is [`Error::InvalidGraph`].
    pub fn from_spec(
        spec: &crate::pregel::spec::GraphSpec,
        options: CompileOptions,
    ) -> Result<Self> {
        let graph = PregelGraph::from_spec(spec)?;
        Ok(CompiledGraph::new(
            Arc::new(graph),
            options,
            Default::default(),
        ))
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
            context_type: None,
            options,
            sources: Sources::default(),
            topology,
            defaults: None,
            run_name: crate::spans::RunName::Workflow,
            schemas: Default::default(),
            _state: PhantomData,
        }
    }

    /// The graph as data (see [`crate::pregel::spec`]): what a process without its code
    /// needs to read its threads' state. `None` when a channel cannot be described (a
    /// channel type or a reducer of one's own).
    pub fn spec(&self) -> Option<crate::pregel::spec::GraphSpec> {
        self.graph.spec()
    }

    /// Uses these id and clock sources (to reproduce a trace exactly).
    pub fn with_sources(mut self, sources: Sources) -> Self {
        self.sources = sources;
        self
    }

    /// This graph with `defaults` merged under the config of every call (`invoke`,
    /// `stream`, `batch`, `get_state`, `update_state`, ...), as Python's
    /// `graph.with_config(...)`: a call's own values win, see [`RunConfig::merged_over`].
    /// Calling it again merges the new defaults over the previous ones.
    ///
    /// ```
    /// # use stategraph::{DynState, RunConfig, StateGraph, START, END, channels::LastValue};
    /// let mut g = StateGraph::<DynState>::with_channels(vec![("n".into(), Box::new(LastValue::new()) as _)]);
    /// g.add_node("inc", |_s: DynState| async move { stategraph::update([("n", 1)]) });
    /// g.add_edge(START, "inc").add_edge("inc", END);
    /// let app = g.compile().unwrap().with_config(RunConfig::default().recursion_limit(5));
    /// # let _ = app;
    /// ```
    pub fn with_config(mut self, defaults: impl Into<RunConfig>) -> Self {
        let defaults = defaults.into();
        let merged = match &self.defaults {
            Some(previous) => defaults.merged_over(previous),
            None => defaults,
        };
        self.defaults = Some(Arc::new(merged));
        self
    }

    /// A call's config with the [`CompiledGraph::with_config`] defaults merged under it.
    pub(crate) fn resolve(&self, config: impl AsRunConfig) -> RunConfig {
        let config = config.to_run_config();
        match &self.defaults {
            Some(defaults) => config.merged_over(defaults),
            None => config,
        }
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
            lenient_writes: self.options.lenient_writes,
            keep_head: false,
        }
    }

    pub(super) async fn run(
        &self,
        input: RunInput,
        config: &RunConfig,
        sink: Option<StreamSink>,
    ) -> Result<RunOutcome> {
        self.run_with(input, config, sink, false).await
    }

    /// [`CompiledGraph::run`]; with `keep_head`, the outcome carries the head the run left
    /// in the saver ([`RunOutcome::head`]).
    pub(super) async fn run_with(
        &self,
        input: RunInput,
        config: &RunConfig,
        sink: Option<StreamSink>,
        keep_head: bool,
    ) -> Result<RunOutcome> {
        if config.recursion_limit < 1 {
            return Err(Error::InvalidConfig(
                "recursion_limit must be at least 1".into(),
            ));
        }
        if let Some(expected) = &self.context_type {
            expected.check(config)?;
        }
        let mut params = self.params(config, sink);
        params.keep_head = keep_head;
        crate::spans::traced_run(&self.run_name, config, "", || async move {
            Loop::start(params, input).await?.run().await
        })
        .await
    }

    /// Names the graph in its traces: each run's span is `invoke_workflow {name}` (without
    /// a name: the Agent Server's `graph_id`, else `LangGraph`). Agents made by
    /// [`create_react_agent`](crate::prebuilt::create_react_agent) are `invoke_agent`
    /// spans instead, named by their `.name(...)`.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        let name: Arc<str> = Arc::from(name.into());
        self.run_name = match self.run_name {
            crate::spans::RunName::Agent(_) => crate::spans::RunName::Agent(Some(name)),
            _ => crate::spans::RunName::Named(name),
        };
        self
    }

    /// Waits until no run of `config`'s thread in this process (on this graph's saver) is
    /// under way or still storing the saves of a cancelled run. A run or `update_state`
    /// waits for this by itself, and the reads (`get_state`, `get_state_history`, the
    /// saver's own `get_tuple`/`list`) wait for a cancelled run's saves (not for a live
    /// run); call it before handing a thread whose run was cancelled to another process
    /// (or another saver instance), so that the other side starts from everything the
    /// cancelled run stored. Returns at once without a saver or thread id.
    pub async fn settle(&self, config: impl AsRunConfig) {
        let config = self.resolve(config);
        if let (Some(saver), Some(thread_id)) = (&self.options.checkpointer, &config.thread_id) {
            drop(crate::pregel::lease::acquire(saver, thread_id).await);
        }
    }

    /// Runs the graph to the end or until it pauses, and returns the [`Outcome`]: the
    /// state (read its fields through it), and the interrupts or nodes that stopped it
    /// when it paused ([`Outcome::is_interrupted`], [`Outcome::done`]).
    ///
    /// `config` is a [`RunConfig`] or anything that converts to one: `&RunConfig`, a
    /// snapshot's `config` / `parent_config`, the config `update_state` returns.
    pub async fn invoke(
        &self,
        input: impl IntoInput,
        config: impl AsRunConfig,
    ) -> Result<Outcome<S>> {
        let config = self.resolve(config);
        let outcome = self.run(input.into_input()?, &config, None).await?;
        Ok(Outcome {
            state: S::from_values(&outcome.values)?,
            interrupts: outcome.interrupts,
            values: outcome.values,
            next: outcome.next,
        })
    }

    /// Runs the graph once per input, concurrently, as Python's `batch`: the outcomes in
    /// the order of the inputs, each its own `Result` (one failing run does not stop the
    /// others). `configs` holds one config per input, or a single config for all of them;
    /// any other count is [`Error::InvalidConfig`]. Give runs on one saver distinct
    /// threads: runs of the same thread wait for each other.
    pub async fn batch<I, C>(
        &self,
        inputs: impl IntoIterator<Item = I>,
        configs: impl IntoIterator<Item = C>,
    ) -> Result<Vec<Result<Outcome<S>>>>
    where
        I: IntoInput,
        C: Into<RunConfig>,
    {
        let inputs: Vec<I> = inputs.into_iter().collect();
        let mut configs: Vec<RunConfig> = configs.into_iter().map(Into::into).collect();
        if configs.len() == 1 && inputs.len() != 1 {
            configs = vec![configs[0].clone(); inputs.len()];
        }
        if configs.len() != inputs.len() {
            return Err(Error::InvalidConfig(format!(
                "batch got {} inputs and {} configs (give one config per input, or one for all)",
                inputs.len(),
                configs.len()
            )));
        }
        let runs = inputs
            .into_iter()
            .zip(configs)
            .map(|(input, config)| async move { self.invoke(input, &config).await });
        Ok(futures::future::join_all(runs).await)
    }

    /// Runs the graph, yielding events of the given modes as they happen. A failure of
    /// the run is the stream's last item. Dropping the stream cancels the run, as dropping
    /// an `invoke` future does (see the README on what a cancelled run leaves). Each event's
    /// `data` is the payload as Python streams it; [`CompiledGraph::stream_typed`] yields
    /// typed events, and [`CompiledGraph::stream_with`] streams subgraphs' events too.
    pub fn stream(
        &self,
        input: impl IntoInput,
        config: impl AsRunConfig,
        modes: &[StreamMode],
    ) -> BoxStream<'static, Result<StreamEvent>> {
        self.stream_with(input, config, modes)
    }
}
