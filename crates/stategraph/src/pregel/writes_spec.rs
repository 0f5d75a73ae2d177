//! A node's writers as data ([`WritesSpec`]): what a node without conditional edges
//! writes for its output. Below the graph types, which hold it, and the graph's description
//! (`spec.rs`), which records it.

use serde::{Deserialize, Serialize};
use stategraph_checkpoint::Value;

use super::node_output::NodeOutput;
use super::task::TASKS;
use crate::types::Goto;

/// The node name a goto to the end has (the graph builder's `END`).
const END: &str = "__end__";

/// The writers of a node without conditional edges, as data: its output's writes to the
/// channels it may write (others are dropped, as LangGraph does), its gotos, then its
/// edges' writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WritesSpec {
    /// The channels its output may write.
    pub writable: Vec<String>,
    /// What it writes after its output: the triggers of its edges' targets
    /// (`branch:to:X`) and its names in joins.
    pub static_writes: Vec<(String, Value)>,
}

impl WritesSpec {
    /// The channel writes of a node's `output`.
    pub fn writes(&self, output: NodeOutput) -> Vec<(String, Value)> {
        let mut writes: Vec<(String, Value)> = output
            .writes
            .into_iter()
            .filter(|(k, _)| self.writable.contains(k))
            .collect();
        for g in output.goto {
            match g {
                Goto::Node(n) if n == END => {}
                Goto::Node(n) => writes.push((format!("branch:to:{n}"), Value::Nil)),
                Goto::Send(s) => writes.push((TASKS.to_owned(), s.to_value())),
            }
        }
        writes.extend(self.static_writes.iter().cloned());
        writes
    }
}
