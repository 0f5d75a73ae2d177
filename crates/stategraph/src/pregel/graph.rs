//! The compiled, Pregel form of a graph: channels, nodes with triggers, and node runners.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use indexmap::IndexMap;
use stategraph_checkpoint::Value;

use super::context::NodeContext;
use super::node_error::NodeError;
use crate::channels::Channel;

/// What a node reads as its input.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Reads {
    /// One channel's value; the task is skipped while the channel is empty.
    Single(String),
    /// A map of the available channels among these.
    Many(Vec<String>),
}

/// Runs a node's body and writers: takes the task input, returns the task's writes.
pub type NodeRunner = Arc<
    dyn Fn(Value, NodeContext) -> BoxFuture<'static, Result<Vec<(String, Value)>, NodeError>>
        + Send
        + Sync,
>;

/// Runs a node's writers on an output: state updates, gotos, edges, conditional edges
/// (what `update_state` runs for `as_node`).
pub type WriterFn = Arc<
    dyn Fn(super::node_output::NodeOutput, &NodeContext) -> Result<Vec<(String, Value)>, NodeError>
        + Send
        + Sync,
>;

/// A node of the Pregel graph.
#[derive(Clone)]
pub struct PregelNode {
    /// Its name.
    pub name: String,
    /// The channels whose updates trigger it.
    pub triggers: Vec<String>,
    /// What it reads.
    pub reads: Reads,
    /// Its body and writers; `None` for a node that never runs.
    pub run: Option<NodeRunner>,
    /// Its writers alone (what `update_state` runs).
    pub writers: WriterFn,
    /// The graph it runs, for a subgraph node.
    pub subgraph: Option<Arc<PregelGraph>>,
    /// Its retry policy.
    pub retry: Option<super::retry::RetryPolicy>,
    /// Its per-attempt timeout.
    pub timeout: Option<std::time::Duration>,
    /// Its cache policy.
    pub cache: Option<super::cache::CachePolicy>,
    /// Hidden nodes (START) are not streamed and not interrupted by `"*"`.
    pub hidden: bool,
    /// Its writers as data, when they are (a node without conditional edges): what a
    /// process without the node's code runs for `update_state` (see [`super::spec`]).
    pub writes: Option<super::writes_spec::WritesSpec>,
}

impl fmt::Debug for PregelNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PregelNode")
            .field("name", &self.name)
            .field("triggers", &self.triggers)
            .field("reads", &self.reads)
            .finish_non_exhaustive()
    }
}

/// A graph ready to run: channel specs in graph order, nodes, and the trigger index.
#[derive(Debug, Clone)]
pub struct PregelGraph {
    /// Channel specs (empty instances), in the order of docs/runtime.md#channels-of-a-graph.
    pub channels: IndexMap<String, Box<dyn Channel>>,
    /// Nodes in insertion order (START first).
    pub nodes: IndexMap<String, PregelNode>,
    /// Channel to the nodes it triggers, in node order.
    pub trigger_to_nodes: IndexMap<String, Vec<String>>,
    /// The state channels a run returns (the output schema's, LangGraph's
    /// `output_channels`); a subgraph's run streams them as `values` too.
    pub output_channels: Vec<String>,
    /// The channels a root run streams (`values`, `updates`, ...) and a snapshot shows
    /// (LangGraph's `stream_channels`): the state's and the input/output schemas' own.
    pub stream_channels: Vec<String>,
}

impl PregelGraph {
    /// Builds the trigger index from the nodes.
    pub fn index_triggers(&mut self) {
        let mut map: IndexMap<String, Vec<String>> = IndexMap::new();
        for (name, node) in &self.nodes {
            for t in &node.triggers {
                map.entry(t.clone()).or_default().push(name.clone());
            }
        }
        self.trigger_to_nodes = map;
    }
}
