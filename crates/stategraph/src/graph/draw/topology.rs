//! The shape of a compiled graph as the builder declared it: what drawing reads.

use std::sync::Arc;

/// One declared node: its name, whether it is deferred, and the shape of the graph it
/// runs when it is a subgraph.
#[derive(Clone, Debug)]
pub(crate) struct TopoNode {
    pub name: String,
    pub defer: bool,
    /// Declared `goto` targets with their labels (`NodeOptions::destinations`).
    pub destinations: Option<Vec<(String, Option<String>)>>,
    pub subgraph: Option<Arc<Topology>>,
    /// The tools a prebuilt `ToolNode` node runs (drawn as `__tools = a, b`, as
    /// LangGraph draws a node bound to a `ToolNode`).
    pub tools: Vec<String>,
}

/// A conditional edge as declared: its source and, when given, its path map as
/// `(label, target)` pairs (without a path map a drawing cannot know where it goes).
#[derive(Clone, Debug)]
pub(crate) struct TopoBranch {
    pub source: String,
    pub path_map: Option<Vec<(String, String)>>,
}

/// The declared structure of a graph, kept by the compiled graph for
/// [`CompiledGraph::get_graph`](crate::CompiledGraph::get_graph).
#[derive(Clone, Debug, Default)]
pub(crate) struct Topology {
    /// The nodes, in the order they were added (without `__start__`).
    pub nodes: Vec<TopoNode>,
    /// Plain edges, in the order they were added.
    pub edges: Vec<(String, String)>,
    /// Joins (`add_join`): every start must run before the end runs.
    pub waiting_edges: Vec<(Vec<String>, String)>,
    /// Conditional edges, in the order they were added.
    pub branches: Vec<TopoBranch>,
    /// The compile-time `interrupt_before` nodes.
    pub interrupt_before: Vec<String>,
    /// The compile-time `interrupt_after` nodes.
    pub interrupt_after: Vec<String>,
}
