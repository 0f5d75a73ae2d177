//! A compiled graph's description as data: its channels (type, parameters, reducer),
//! its nodes (triggers, reads, subgraphs) and its output channels: everything reading a
//! thread's state needs (`get_state`, `get_state_history`: which tasks come `next`, their
//! interrupts, the values), without the nodes' code.
//!
//! A process that has a graph's code records [`PregelGraph::spec`]; a process that has
//! not rebuilds the graph with [`PregelGraph::from_spec`] and reads threads with the
//! engine's own state functions. The rebuilt nodes cannot run: running one is a
//! [`NodeError`] saying so. A node's writers are data too when it has no conditional
//! edges ([`WritesSpec`]), so `update_state` as such a node works on the rebuilt graph;
//! as a node with conditional edges (code) it is a [`NodeError`] saying so.

use std::sync::Arc;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::graph::{NodeRunner, PregelGraph, PregelNode, Reads, WriterFn};
use super::node_error::NodeError;
use super::writes_spec::WritesSpec;
use crate::channels::{Channel, ChannelSpec};
use crate::error::{Error, Result};

/// A graph as data ([`PregelGraph::spec`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphSpec {
    /// The channels, in graph order.
    pub channels: Vec<NamedChannel>,
    /// The nodes, in graph order (START first).
    pub nodes: Vec<NodeSpec>,
    /// The state channels a run returns.
    pub output_channels: Vec<String>,
    /// The channels a snapshot shows as its values, when they are not
    /// `output_channels` (a graph with input/output schemas).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_channels: Option<Vec<String>>,
}

/// One channel of a [`GraphSpec`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedChannel {
    /// The channel's name.
    pub name: String,
    /// Its type and parameters.
    pub spec: ChannelSpec,
}

/// One node of a [`GraphSpec`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    /// Its name.
    pub name: String,
    /// The channels whose updates trigger it.
    pub triggers: Vec<String>,
    /// What it reads.
    pub reads: Reads,
    /// False for a node that never runs (no body).
    pub runs: bool,
    /// Hidden (START).
    pub hidden: bool,
    /// The graph it runs, for a subgraph node.
    pub subgraph: Option<Box<GraphSpec>>,
    /// Its writers, when they are data (see [`PregelNode::writes`]).
    pub writes: Option<WritesSpec>,
}

impl PregelGraph {
    /// This graph as data; `None` when a channel (here or in a subgraph) cannot be
    /// described ([`Channel::spec`]: a channel type or reducer of one's own).
    pub fn spec(&self) -> Option<GraphSpec> {
        let channels = self
            .channels
            .iter()
            .map(|(name, ch)| {
                Some(NamedChannel {
                    name: name.clone(),
                    spec: ch.spec()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let nodes = self
            .nodes
            .values()
            .map(|n| {
                let subgraph = match &n.subgraph {
                    Some(sub) => Some(Box::new(sub.spec()?)),
                    None => None,
                };
                Some(NodeSpec {
                    name: n.name.clone(),
                    triggers: n.triggers.clone(),
                    reads: n.reads.clone(),
                    runs: n.run.is_some(),
                    hidden: n.hidden,
                    subgraph,
                    writes: n.writes.clone(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(GraphSpec {
            channels,
            nodes,
            output_channels: self.output_channels.clone(),
            stream_channels: (self.stream_channels != self.output_channels)
                .then(|| self.stream_channels.clone()),
        })
    }

    /// The graph `spec` describes, with nodes that cannot run (see the module docs); a
    /// channel spec with an unknown reducer is [`Error::InvalidGraph`].
    pub fn from_spec(spec: &GraphSpec) -> Result<PregelGraph> {
        let mut channels: IndexMap<String, Box<dyn Channel>> = IndexMap::new();
        for c in &spec.channels {
            let ch = c
                .spec
                .build()
                .map_err(|e| Error::InvalidGraph(format!("channel {}: {e}", c.name)))?;
            channels.insert(c.name.clone(), ch);
        }
        let mut nodes = IndexMap::new();
        for n in &spec.nodes {
            let subgraph = match &n.subgraph {
                Some(sub) => Some(Arc::new(PregelGraph::from_spec(sub)?)),
                None => None,
            };
            let node = PregelNode {
                name: n.name.clone(),
                triggers: n.triggers.clone(),
                reads: n.reads.clone(),
                run: n.runs.then(|| no_code_runner(&n.name)),
                writers: match &n.writes {
                    Some(w) => data_writers(w.clone()),
                    None => no_code_writers(&n.name),
                },
                writes: n.writes.clone(),
                subgraph,
                retry: None,
                timeout: None,
                cache: None,
                hidden: n.hidden,
            };
            nodes.insert(n.name.clone(), node);
        }
        let mut graph = PregelGraph {
            channels,
            nodes,
            trigger_to_nodes: IndexMap::new(),
            output_channels: spec.output_channels.clone(),
            stream_channels: spec
                .stream_channels
                .clone()
                .unwrap_or_else(|| spec.output_channels.clone()),
        };
        graph.index_triggers();
        Ok(graph)
    }
}

/// The writers `spec` describes, as a node's [`WriterFn`].
fn data_writers(spec: WritesSpec) -> WriterFn {
    Arc::new(move |output, _| Ok(spec.writes(output)))
}

fn no_code(node: &str) -> NodeError {
    NodeError::msg(format!(
        "node {node} was rebuilt from its graph's description: its code (its body, its \
         conditional edges) is not in this process"
    ))
}

fn no_code_runner(node: &str) -> NodeRunner {
    let node = node.to_owned();
    Arc::new(move |_, _| {
        let e = no_code(&node);
        Box::pin(async move { Err(e) })
    })
}

fn no_code_writers(node: &str) -> WriterFn {
    let node = node.to_owned();
    Arc::new(move |_, _| Err(no_code(&node)))
}
