//! Checking that writes address what the graph has: `branch:to:<node>` and `Send`
//! packets a node it knows, every other write a channel it knows. LangGraph logs a
//! warning and drops such a write; stategraph reports it unless the graph was compiled
//! with `lenient_writes`.

use stategraph_checkpoint::Value;

use super::algo::WRITE_TAGS;
use super::graph::PregelGraph;
use super::task::TASKS;
use crate::error::{Error, Result};
use crate::types::Send;

/// The prefix of the channel that triggers a node (`branch:to:<node>`).
const BRANCH_TO: &str = "branch:to:";

/// The first write of `writes` (made by `by`) to a node or channel `graph` does not have,
/// as an [`Error::UnknownNode`] or [`Error::UnknownChannel`].
pub(crate) fn check_targets(
    graph: &PregelGraph,
    by: &str,
    writes: &[(String, Value)],
) -> Result<()> {
    for (channel, value) in writes {
        if channel == TASKS {
            if let Some(send) = Send::from_value(value) {
                if !graph.nodes.contains_key(&send.node) {
                    return Err(unknown_node(&send.node, by));
                }
            }
            continue;
        }
        if WRITE_TAGS.contains(&channel.as_str()) || graph.channels.contains_key(channel) {
            continue;
        }
        return Err(match channel.strip_prefix(BRANCH_TO) {
            Some(node) => unknown_node(node, by),
            None => Error::UnknownChannel {
                channel: channel.clone(),
                by: by.to_owned(),
            },
        });
    }
    Ok(())
}

fn unknown_node(node: &str, by: &str) -> Error {
    Error::UnknownNode {
        node: node.to_owned(),
        by: by.to_owned(),
    }
}
