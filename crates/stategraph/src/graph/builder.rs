//! `StateGraph`: the builder of nodes, edges and conditional edges over a state schema.

use std::marker::PhantomData;
use std::sync::Arc;

use futures::future::BoxFuture;
use indexmap::IndexMap;

use super::branch::{Branch, BranchTargets, ContextPath};
use super::compile_options::CompileOptions;
use super::compiled::CompiledGraph;
use super::input::InputSpec;
use super::node::{NodeContext, NodeError, NodeHandler, NodeOutput};
use crate::channels::Channel;
use crate::error::Result;
use crate::state::State;
use stategraph_checkpoint::Value;

pub use super::virtual_nodes::{END, START};

/// A node function behind its input conversion: takes the task's input (the map of
/// channels it read, or a `Send`'s payload).
pub(crate) type BoxedHandler = Arc<
    dyn Fn(Value, NodeContext) -> BoxFuture<'static, Result<NodeOutput, NodeError>> + Send + Sync,
>;

pub(crate) enum NodeKind {
    /// A function of the state or of another input type.
    Function(BoxedHandler),
    /// A compiled graph run as a node, in its own checkpoint namespace.
    Subgraph(
        Arc<crate::pregel::graph::PregelGraph>,
        CompileOptions,
        Arc<super::draw::topology::Topology>,
    ),
}

pub(crate) struct NodeSpec {
    pub kind: NodeKind,
    /// How a function node reads its input (`None` for a subgraph).
    pub input: Option<InputSpec>,
    pub options: NodeOptions,
}

/// Per-node options: deferral, retries, a timeout, a cache policy.
#[derive(Clone, Debug, Default)]
pub struct NodeOptions {
    /// Run only when nothing else is left to run (LangGraph's `defer=True`).
    pub defer: bool,
    /// Retry failures by this policy.
    pub retry: Option<crate::pregel::retry::RetryPolicy>,
    /// Fail an attempt that runs longer than this (`NodeTimeoutError`, retryable).
    pub timeout: Option<std::time::Duration>,
    /// Reuse the writes of an earlier run with the same input.
    pub cache: Option<crate::pregel::cache::CachePolicy>,
    /// Where the node may route with `Command::goto`, each with an optional edge label
    /// (LangGraph's `destinations`). Used only to draw the graph: a drawing cannot see
    /// inside the node, so without this its `goto` routes are not drawn.
    pub destinations: Option<Vec<(String, Option<String>)>>,
}

impl NodeOptions {
    /// Default options.
    pub fn new() -> NodeOptions {
        NodeOptions::default()
    }

    /// Defers the node (builder style).
    pub fn defer(mut self) -> Self {
        self.defer = true;
        self
    }

    /// Sets the retry policy (builder style).
    pub fn retry(mut self, policy: crate::pregel::retry::RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Sets the per-attempt timeout (builder style).
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the cache policy (builder style).
    pub fn cache(mut self, policy: crate::pregel::cache::CachePolicy) -> Self {
        self.cache = Some(policy);
        self
    }

    /// Declares the nodes (or `END`) this node may `goto`, for drawing (Python's
    /// `destinations=("a", "b")`).
    pub fn destinations<I: IntoIterator<Item = T>, T: Into<String>>(mut self, nodes: I) -> Self {
        self.destinations = Some(nodes.into_iter().map(|n| (n.into(), None)).collect());
        self
    }

    /// Declares the nodes this node may `goto` with the label of each edge, for drawing
    /// (Python's `destinations={"a": "label"}`).
    pub fn labeled_destinations<I, T, L>(mut self, nodes: I) -> Self
    where
        I: IntoIterator<Item = (T, L)>,
        T: Into<String>,
        L: Into<String>,
    {
        self.destinations = Some(
            nodes
                .into_iter()
                .map(|(n, l)| (n.into(), Some(l.into())))
                .collect(),
        );
        self
    }
}

/// A graph over state `S` under construction. Nodes are functions of the state; edges say
/// which node runs after which; [`StateGraph::compile`] checks it and makes it runnable.
///
/// ```
/// # use stategraph::{DynState, StateGraph, START, END, channels::LastValue};
/// let mut g = StateGraph::<DynState>::with_channels(vec![("n".into(), Box::new(LastValue::new()) as _)]);
/// g.add_node("inc", |s: DynState| async move { stategraph::update([("n", 1)]) });
/// g.add_edge(START, "inc").add_edge("inc", END);
/// let graph = g.compile().unwrap();
/// ```
pub struct StateGraph<S: State> {
    pub(crate) channels: IndexMap<String, Box<dyn Channel>>,
    pub(crate) nodes: IndexMap<String, NodeSpec>,
    /// Channels of node input types that the state lacks (LangGraph's private state),
    /// in the order the nodes were added.
    pub(crate) private_channels: IndexMap<String, Box<dyn Channel>>,
    pub(crate) edges: Vec<(String, String)>,
    pub(crate) waiting_edges: Vec<(Vec<String>, String)>,
    pub(crate) branches: Vec<(String, Arc<Branch<S>>)>,
    pub(crate) build_errors: Vec<String>,
    _state: PhantomData<fn() -> S>,
}

impl<S: State> Default for StateGraph<S> {
    fn default() -> Self {
        StateGraph::new()
    }
}

impl<S: State> StateGraph<S> {
    /// A graph whose channels are the fields of `S`.
    pub fn new() -> StateGraph<S> {
        StateGraph::with_channels(S::channels())
    }

    /// A graph with explicit state channels (for a dynamic state such as
    /// [`crate::DynState`], or to override the derived ones).
    pub fn with_channels(channels: Vec<(String, Box<dyn Channel>)>) -> StateGraph<S> {
        StateGraph {
            channels: channels.into_iter().collect(),
            nodes: IndexMap::new(),
            private_channels: IndexMap::new(),
            edges: Vec::new(),
            waiting_edges: Vec::new(),
            branches: Vec::new(),
            build_errors: Vec::new(),
            _state: PhantomData,
        }
    }

    /// Adds a node: an async function of the state (and optionally its
    /// [`NodeContext`]) returning an update, a `Command`, a `Send` or a `Result` of one.
    ///
    /// The function may take another [`NodeInput`](super::input::NodeInput) type than
    /// the state (LangGraph's per-node input schema): a `#[derive(State)]` struct whose
    /// fields are the channels the node reads (those the state lacks are added as private
    /// channels), and which a `Send` to the node carries as a map:
    ///
    /// ```
    /// # use stategraph::{State, StateGraph, Send, START, END};
    /// #[derive(State)]
    /// struct Overall { #[state(reducer = add)] jokes: Vec<String> }
    /// #[derive(State)]
    /// struct Subject { subject: String }
    ///
    /// let mut g = StateGraph::<Overall>::new();
    /// g.add_node("joke", |s: Subject| async move {
    ///     OverallUpdate::default().jokes(vec![format!("a joke about {}", s.subject)])
    /// });
    /// g.add_conditional_edges(START, |_: &Overall| {
    ///     vec![Send::new("joke", stategraph::map! { "subject" => "cats" })]
    /// });
    /// g.add_edge("joke", END);
    /// let app = g.compile().unwrap();
    /// ```
    pub fn add_node<M>(
        &mut self,
        name: impl Into<String>,
        node: impl NodeHandler<S, M>,
    ) -> &mut Self {
        self.insert_node(name.into(), node, NodeOptions::default())
    }

    /// Adds a node with options (retry policy, timeout, cache policy, deferral).
    pub fn add_node_with<M>(
        &mut self,
        name: impl Into<String>,
        node: impl NodeHandler<S, M>,
        options: NodeOptions,
    ) -> &mut Self {
        self.insert_node(name.into(), node, options)
    }

    /// Adds a node that runs only when nothing else is left to run (LangGraph's
    /// `defer=True`).
    pub fn add_deferred_node<M>(
        &mut self,
        name: impl Into<String>,
        node: impl NodeHandler<S, M>,
    ) -> &mut Self {
        self.insert_node(name.into(), node, NodeOptions::new().defer())
    }

    fn insert_node<M, N: NodeHandler<S, M>>(
        &mut self,
        name: String,
        node: N,
        options: NodeOptions,
    ) -> &mut Self {
        let (spec, channels) =
            InputSpec::of::<S, N::Input>(self.channels.keys().cloned().collect());
        if !self.nodes.contains_key(&name) {
            for (key, channel) in channels {
                let existing = self
                    .channels
                    .get(&key)
                    .or_else(|| self.private_channels.get(&key));
                match existing {
                    None => {
                        self.private_channels.insert(key, channel);
                    }
                    // As LangGraph: a `LastValue` field reads any channel of that name;
                    // another kind must match it (compared by kind only).
                    Some(e) if channel.kind() != "LastValue" && e.kind() != channel.kind() => {
                        self.build_errors.push(format!(
                            "Channel '{key}' already exists with a different type"
                        ));
                    }
                    Some(_) => {}
                }
            }
        }
        let node = Arc::new(node);
        let reader = spec.clone();
        let handler: BoxedHandler = Arc::new(move |input, ctx| {
            let input = crate::pregel::managed::fill_input(input, &reader.managed, &ctx);
            match reader.read::<N::Input>(ctx.node(), input) {
                Ok(input) => node.call(input, ctx),
                Err(e) => Box::pin(async move { Err(e) }),
            }
        });
        self.insert_spec(name, NodeKind::Function(handler), Some(spec), options)
    }

    fn insert_spec(
        &mut self,
        name: String,
        kind: NodeKind,
        input: Option<InputSpec>,
        options: NodeOptions,
    ) -> &mut Self {
        // A duplicate name is reported by `compile`; keep the first definition.
        if self.nodes.contains_key(&name) {
            self.build_errors
                .push(format!("Node `{name}` already present."));
            return self;
        }
        self.nodes.insert(
            name,
            NodeSpec {
                kind,
                input,
                options,
            },
        );
        self
    }

    /// Adds a compiled graph as a node. It reads this graph's state (the keys it shares),
    /// keeps its own checkpoints in the namespace `name:task_id`, inherits this graph's
    /// checkpointer, and its final values for the keys this graph has become the node's
    /// writes. An interrupt inside it stops this graph too, and resuming resumes it.
    pub fn add_subgraph<T: State>(
        &mut self,
        name: impl Into<String>,
        subgraph: &CompiledGraph<T>,
    ) -> &mut Self {
        self.add_subgraph_with(name, subgraph, NodeOptions::default())
    }

    /// Adds a compiled graph as a node, with node options (retry policy, timeout, cache).
    pub fn add_subgraph_with<T: State>(
        &mut self,
        name: impl Into<String>,
        subgraph: &CompiledGraph<T>,
        options: NodeOptions,
    ) -> &mut Self {
        let kind = NodeKind::Subgraph(
            subgraph.graph.clone(),
            subgraph.options.clone(),
            subgraph.topology.clone(),
        );
        self.insert_spec(name.into(), kind, None, options)
    }

    /// Adds an edge: `end` runs after `start`. `START` marks the entry, `END` the exit.
    pub fn add_edge(&mut self, start: impl Into<String>, end: impl Into<String>) -> &mut Self {
        self.edges.push((start.into(), end.into()));
        self
    }

    /// Adds a join: `end` runs once every node in `starts` has run (LangGraph's
    /// `add_edge([a, b], c)`).
    pub fn add_join<I, T>(&mut self, starts: I, end: impl Into<String>) -> &mut Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        let starts: Vec<String> = starts.into_iter().map(Into::into).collect();
        if starts.len() == 1 {
            let start = starts.into_iter().next().unwrap_or_default();
            return self.add_edge(start, end);
        }
        self.waiting_edges.push((starts, end.into()));
        self
    }

    /// Adds nodes in sequence, each after the previous one (`add_sequence`). Each element
    /// is `(name, node)`.
    pub fn add_sequence<M, N>(&mut self, nodes: Vec<(&str, N)>) -> &mut Self
    where
        N: NodeHandler<S, M>,
    {
        let mut previous: Option<String> = None;
        for (name, node) in nodes {
            self.add_node(name, node);
            if let Some(p) = previous {
                self.add_edge(p, name);
            }
            previous = Some(name.to_owned());
        }
        self
    }

    /// Adds a conditional edge: after `source`, `path` reads the state (with `source`'s
    /// writes applied) and names where to go: node names, `END`, or `Send`s.
    pub fn add_conditional_edges<F, T>(&mut self, source: impl Into<String>, path: F) -> &mut Self
    where
        F: Fn(&S) -> T + Send + Sync + 'static,
        T: Into<BranchTargets>,
    {
        self.push_branch(source.into(), path, None)
    }

    /// Adds a conditional edge whose results are keys of `path_map`, mapped to node names.
    pub fn add_conditional_edges_with_map<F, T, I, K, V>(
        &mut self,
        source: impl Into<String>,
        path: F,
        path_map: I,
    ) -> &mut Self
    where
        F: Fn(&S) -> T + Send + Sync + 'static,
        T: Into<BranchTargets>,
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let map = path_map
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self.push_branch(source.into(), path, Some(map))
    }

    fn push_branch<F, T>(
        &mut self,
        source: String,
        path: F,
        path_map: Option<IndexMap<String, String>>,
    ) -> &mut Self
    where
        F: Fn(&S) -> T + Send + Sync + 'static,
        T: Into<BranchTargets>,
    {
        let path: ContextPath<S> = Arc::new(move |s: &S, _: &NodeContext| Ok(path(s).into()));
        self.push_context_branch(source, path, path_map)
    }

    /// Adds a conditional edge whose path function reads the task's context too.
    pub(crate) fn push_context_branch(
        &mut self,
        source: String,
        path: ContextPath<S>,
        path_map: Option<IndexMap<String, String>>,
    ) -> &mut Self {
        self.branches
            .push((source, Arc::new(Branch { path, path_map })));
        self
    }
}
