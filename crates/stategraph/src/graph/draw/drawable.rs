//! The drawable form of a graph: nodes and edges, as LangChain's `Graph` holds them.

use indexmap::IndexMap;

/// A node of a drawing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrawNode {
    /// The node's id: its name, prefixed `parent:` for the nodes of an expanded subgraph.
    pub id: String,
    /// The name shown.
    pub name: String,
    /// Notes shown under the name, in order: `defer = True`, `__interrupt = before`, ...
    pub metadata: Vec<(String, String)>,
}

/// An edge of a drawing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrawEdge {
    /// The source node's id.
    pub source: String,
    /// The target node's id.
    pub target: String,
    /// The label (a conditional edge's path-map key when it differs from the target).
    pub data: Option<String>,
    /// Whether the edge is taken only on some runs (a conditional edge).
    pub conditional: bool,
}

/// A graph's structure for drawing: what [`CompiledGraph::get_graph`] returns and what
/// [`DrawGraph::draw_mermaid`] and [`DrawGraph::draw_ascii`] render. It holds exactly the
/// nodes and edges Python LangGraph's `get_graph()` finds for the same graph, in the same
/// order.
///
/// [`CompiledGraph::get_graph`]: crate::CompiledGraph::get_graph
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DrawGraph {
    /// The nodes by id, in drawing order.
    pub nodes: IndexMap<String, DrawNode>,
    /// The edges, in drawing order.
    pub edges: Vec<DrawEdge>,
}

impl DrawGraph {
    /// Adds a node named as its id (a node with that id already present is kept).
    pub(crate) fn add_node(&mut self, id: &str, metadata: Vec<(String, String)>) {
        self.nodes.entry(id.to_owned()).or_insert_with(|| DrawNode {
            id: id.to_owned(),
            name: id.to_owned(),
            metadata,
        });
    }

    /// The single node no edge leads to, if there is exactly one.
    pub fn first_node(&self) -> Option<&DrawNode> {
        self.first_excluding(None)
    }

    /// The single node no edge leaves, if there is exactly one.
    pub fn last_node(&self) -> Option<&DrawNode> {
        self.last_excluding(None)
    }

    fn first_excluding(&self, exclude: Option<&str>) -> Option<&DrawNode> {
        let targets: Vec<&str> = self
            .edges
            .iter()
            .filter(|e| Some(e.source.as_str()) != exclude)
            .map(|e| e.target.as_str())
            .collect();
        single(
            self.nodes
                .values()
                .filter(|n| Some(n.id.as_str()) != exclude && !targets.contains(&n.id.as_str())),
        )
    }

    fn last_excluding(&self, exclude: Option<&str>) -> Option<&DrawNode> {
        let sources: Vec<&str> = self
            .edges
            .iter()
            .filter(|e| Some(e.target.as_str()) != exclude)
            .map(|e| e.source.as_str())
            .collect();
        single(
            self.nodes
                .values()
                .filter(|n| Some(n.id.as_str()) != exclude && !sources.contains(&n.id.as_str())),
        )
    }

    fn remove_node(&mut self, id: &str) {
        self.nodes.shift_remove(id);
        self.edges.retain(|e| e.source != id && e.target != id);
    }

    /// Removes the first node when it has one outgoing edge and another first node remains.
    pub(crate) fn trim_first_node(&mut self) {
        let Some(first) = self.first_node().map(|n| n.id.clone()) else {
            return;
        };
        let outgoing = distinct(self.edges.iter().filter(|e| e.source == first));
        if self.first_excluding(Some(&first)).is_some() && outgoing == 1 {
            self.remove_node(&first);
        }
    }

    /// Removes the last node when it has one incoming edge and another last node remains.
    pub(crate) fn trim_last_node(&mut self) {
        let Some(last) = self.last_node().map(|n| n.id.clone()) else {
            return;
        };
        let incoming = distinct(self.edges.iter().filter(|e| e.target == last));
        if self.last_excluding(Some(&last)).is_some() && incoming == 1 {
            self.remove_node(&last);
        }
    }

    /// Adds the nodes and edges of `other` with ids prefixed `prefix:`; returns the ids of
    /// its (prefixed) first and last nodes.
    pub(crate) fn extend(
        &mut self,
        other: &DrawGraph,
        prefix: &str,
    ) -> (Option<String>, Option<String>) {
        let prefixed = |id: &str| format!("{prefix}:{id}");
        for (id, node) in &other.nodes {
            let id = prefixed(id);
            self.nodes.insert(
                id.clone(),
                DrawNode {
                    id,
                    name: node.name.clone(),
                    metadata: node.metadata.clone(),
                },
            );
        }
        for e in &other.edges {
            self.edges.push(DrawEdge {
                source: prefixed(&e.source),
                target: prefixed(&e.target),
                data: e.data.clone(),
                conditional: e.conditional,
            });
        }
        (
            other.first_node().map(|n| prefixed(&n.id)),
            other.last_node().map(|n| prefixed(&n.id)),
        )
    }
}

fn single<'a>(mut found: impl Iterator<Item = &'a DrawNode>) -> Option<&'a DrawNode> {
    let first = found.next()?;
    match found.next() {
        Some(_) => None,
        None => Some(first),
    }
}

/// The number of distinct edges (as a set of edges counts them).
fn distinct<'a>(edges: impl Iterator<Item = &'a DrawEdge>) -> usize {
    let mut seen: Vec<&DrawEdge> = Vec::new();
    for e in edges {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    seen.len()
}
