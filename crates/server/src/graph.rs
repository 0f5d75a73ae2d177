//! A registered graph behind one object-safe interface, whatever its state type.

use async_trait::async_trait;
use futures::TryStreamExt;
use indexmap::IndexMap;
use stategraph::checkpoint::{CheckpointConfig, ListOptions};
use stategraph::graph::draw::DrawGraph;
use stategraph::pregel::snapshot::StateSnapshot;
use stategraph::pregel::spec::GraphSpec;
use stategraph::{CompiledGraph, RunConfig, RunStream, State, StreamMode, Value};

use crate::graph_input::GraphInput;

/// What the server needs of a compiled graph: run it as a stream, read and change a
/// thread's state, draw it. Implemented for every [`CompiledGraph`], so any state type
/// (a `#[derive(State)]` struct or [`stategraph::DynState`]) can be served; values cross
/// the boundary as channel-name-to-value maps.
#[async_trait]
pub trait ServedGraph: Send + Sync + 'static {
    /// Runs the graph on `config`'s thread, yielding events of `modes`; once the stream
    /// has ended, [`RunStream::final_state`] is the thread's state when the run ended
    /// normally (read [`ServedGraph::state`] otherwise).
    fn run(&self, input: GraphInput, config: RunConfig, modes: Vec<StreamMode>) -> RunStream;
    /// The thread's state (at `config.checkpoint_id` when given).
    async fn state(&self, config: RunConfig) -> stategraph::Result<StateSnapshot>;
    /// The thread's checkpoints, newest first.
    async fn history(
        &self,
        config: RunConfig,
        options: ListOptions,
    ) -> stategraph::Result<Vec<StateSnapshot>>;
    /// `update_state`: writes `values` as if `as_node` had returned them.
    async fn update(
        &self,
        config: RunConfig,
        values: IndexMap<String, Value>,
        as_node: Option<String>,
    ) -> stategraph::Result<CheckpointConfig>;
    /// The graph's drawing.
    fn drawing(&self) -> DrawGraph;
    /// The graph as data, registered so that processes without its code read its
    /// threads' state (see [`crate::registry`]); `None` (the default) when it cannot be
    /// described.
    fn spec(&self) -> Option<GraphSpec> {
        None
    }
    /// Waits until a cancelled run of the thread has stored what it was storing.
    async fn settle(&self, config: RunConfig);
}

#[async_trait]
impl<S: State> ServedGraph for CompiledGraph<S> {
    fn run(&self, input: GraphInput, config: RunConfig, modes: Vec<StreamMode>) -> RunStream {
        match input {
            GraphInput::Values(v) => self.stream_run(v, &config, modes),
            GraphInput::Command(c) => self.stream_run(c, &config, modes),
            GraphInput::None => self.stream_run(stategraph::NoInput, &config, modes),
        }
    }

    async fn state(&self, config: RunConfig) -> stategraph::Result<StateSnapshot> {
        self.get_state(&config).await
    }

    async fn history(
        &self,
        config: RunConfig,
        options: ListOptions,
    ) -> stategraph::Result<Vec<StateSnapshot>> {
        self.get_state_history_stream(&config, options)
            .try_collect()
            .await
    }

    async fn update(
        &self,
        config: RunConfig,
        values: IndexMap<String, Value>,
        as_node: Option<String>,
    ) -> stategraph::Result<CheckpointConfig> {
        self.update_state(&config, values, as_node.as_deref()).await
    }

    fn drawing(&self) -> DrawGraph {
        self.get_graph()
    }

    fn spec(&self) -> Option<GraphSpec> {
        CompiledGraph::spec(self)
    }

    async fn settle(&self, config: RunConfig) {
        CompiledGraph::settle(self, &config).await
    }
}
