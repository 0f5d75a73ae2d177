//! The names of the special `as_node` forms of `update_state` (LangGraph's `END`,
//! `"__input__"`, `"__copy__"`) and the messages when one is not alone in its superstep.

use indexmap::IndexMap;
use stategraph_checkpoint::{ChannelVersion, ChannelVersions};

use super::virtual_nodes::END;
use crate::pregel::graph::PregelGraph;

/// `as_node` that applies an update's values as new input (LangGraph's `"__input__"`).
pub const INPUT: &str = "__input__";

/// `as_node` that copies the addressed checkpoint as a fork (LangGraph's `"__copy__"`).
pub const COPY: &str = "__copy__";

/// A special form of update, named by its `as_node`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Special {
    /// [`END`] with no values: the pending tasks are cleared.
    Clear,
    /// [`INPUT`]: the values are new input.
    Input,
    /// [`COPY`]: a fork of the checkpoint.
    Copy,
}

impl Special {
    /// The special form `as_node` names, if any.
    pub(super) fn of(as_node: &str) -> Option<Special> {
        match as_node {
            END => Some(Special::Clear),
            INPUT => Some(Special::Input),
            COPY => Some(Special::Copy),
            _ => None,
        }
    }

    /// LangGraph's message when this form is not alone in its superstep.
    pub(super) fn multiple_error(self) -> &'static str {
        match self {
            Special::Clear => "Cannot apply multiple updates when clearing state",
            Special::Input => "Cannot apply multiple updates when updating as input",
            Special::Copy => "Cannot copy checkpoint with multiple updates",
        }
    }
}

/// The node an update without `as_node` is attributed to (LangGraph's `_infer_as_node`).
pub(super) fn infer_as_node(
    graph: &PregelGraph,
    versions_seen: &IndexMap<String, ChannelVersions>,
) -> Option<String> {
    if graph.nodes.len() == 1 {
        return graph.nodes.keys().next().cloned();
    }
    let mut seen: Vec<(&ChannelVersion, &String)> = versions_seen
        .iter()
        .filter(|(n, _)| graph.nodes.contains_key(*n))
        .flat_map(|(n, s)| s.values().map(move |v| (v, n)))
        .collect();
    if seen.is_empty() {
        return Some("__start__".to_owned());
    }
    seen.sort();
    match seen.len() {
        1 => Some(seen[0].1.clone()),
        n if seen[n - 1].0 != seen[n - 2].0 => Some(seen[n - 1].1.clone()),
        _ => None,
    }
}
