//! Drawing a compiled graph: [`CompiledGraph::get_graph`] finds its nodes and edges as
//! Python LangGraph's `get_graph()` does, [`DrawGraph::draw_mermaid`] prints the same
//! Mermaid text as Python's `draw_mermaid()`, [`DrawGraph::draw_ascii`] a text picture.
//!
//! [`CompiledGraph::get_graph`]: crate::CompiledGraph::get_graph

mod ascii;
mod drawable;
mod mermaid;
mod sim_chan;
mod simulate;
pub(crate) mod topology;
mod yaml;

pub use drawable::{DrawEdge, DrawGraph, DrawNode};
pub use mermaid::{to_safe_id, CurveStyle, MermaidOptions, NodeStyles};

use topology::Topology;

impl DrawGraph {
    /// The Mermaid text of the graph, equal to Python's `get_graph().draw_mermaid()` for
    /// the same graph.
    pub fn draw_mermaid(&self) -> String {
        mermaid::render(self, &MermaidOptions::default())
    }

    /// The Mermaid text with options (styles, curve, node colours, label wrapping,
    /// frontmatter), as Python's `draw_mermaid(**options)`.
    pub fn draw_mermaid_with(&self, options: &MermaidOptions) -> String {
        mermaid::render(self, options)
    }

    /// A text picture of the graph: one box per node, top to bottom by rank, and the
    /// edges leaving each node listed under it. Not Python's (grandalf) drawing.
    pub fn draw_ascii(&self) -> String {
        ascii::render(self)
    }
}

/// The drawing of `t`, with its subgraphs expanded `depth` levels deep (LangGraph's
/// `xray`).
pub(crate) fn get_graph(t: &Topology, depth: usize) -> DrawGraph {
    let mut graph = simulate::draw(t);
    if depth == 0 {
        return graph;
    }
    for node in &t.nodes {
        let Some(sub) = &node.subgraph else { continue };
        let name = &node.name;
        let mut subgraph = get_graph(sub, depth - 1);
        if subgraph.nodes.len() <= 1
            || !graph.nodes.contains_key(name)
            || subgraph.first_node().is_none()
            || subgraph.last_node().is_none()
        {
            continue;
        }
        subgraph.trim_first_node();
        subgraph.trim_last_node();
        graph.nodes.shift_remove(name);
        let (first, last) = graph.extend(&subgraph, name);
        for edge in &mut graph.edges {
            if &edge.source == name {
                if let Some(l) = &last {
                    edge.source = l.clone();
                }
            }
            if &edge.target == name {
                if let Some(f) = &first {
                    edge.target = f.clone();
                }
            }
        }
    }
    graph
}
