//! Conditional edges: a path function over the state choosing the next nodes.

use std::sync::Arc;

use indexmap::IndexMap;
use stategraph_checkpoint::Value;

use super::virtual_nodes::{END, START};
use crate::error::{Error, Result};
use crate::types::{Goto, Send as SendPacket};

/// Where a conditional edge goes: node names (or path-map keys), `END`, or `Send`s.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BranchTargets(pub Vec<Goto>);

impl From<&str> for BranchTargets {
    fn from(s: &str) -> Self {
        BranchTargets(vec![Goto::Node(s.to_owned())])
    }
}
impl From<String> for BranchTargets {
    fn from(s: String) -> Self {
        BranchTargets(vec![Goto::Node(s)])
    }
}
impl From<Vec<&str>> for BranchTargets {
    fn from(v: Vec<&str>) -> Self {
        BranchTargets(v.into_iter().map(|s| Goto::Node(s.to_owned())).collect())
    }
}
impl From<Vec<String>> for BranchTargets {
    fn from(v: Vec<String>) -> Self {
        BranchTargets(v.into_iter().map(Goto::Node).collect())
    }
}
impl From<SendPacket> for BranchTargets {
    fn from(s: SendPacket) -> Self {
        BranchTargets(vec![Goto::Send(s)])
    }
}
impl From<Vec<SendPacket>> for BranchTargets {
    fn from(v: Vec<SendPacket>) -> Self {
        BranchTargets(v.into_iter().map(Goto::Send).collect())
    }
}
impl From<Vec<Goto>> for BranchTargets {
    fn from(v: Vec<Goto>) -> Self {
        BranchTargets(v)
    }
}

/// A path function that also reads the task's context and may fail (the prebuilt
/// agent's fan-out reads the run's remaining steps).
pub(crate) type ContextPath<S> = Arc<
    dyn Fn(
            &S,
            &crate::pregel::context::NodeContext,
        ) -> std::result::Result<BranchTargets, crate::pregel::node_error::NodeError>
        + Send
        + Sync,
>;

/// A conditional edge from one source.
pub(crate) struct Branch<S> {
    pub path: ContextPath<S>,
    pub path_map: Option<IndexMap<String, String>>,
}

impl<S> Branch<S> {
    /// The writes this branch makes for a path result (docs/runtime.md#nodes-and-edges).
    pub(crate) fn writes(&self, targets: BranchTargets) -> Result<Vec<(String, Value)>> {
        let mut out = Vec::with_capacity(targets.0.len());
        for t in targets.0 {
            match t {
                Goto::Node(key) => {
                    let dest = match &self.path_map {
                        Some(map) => map.get(&key).cloned().ok_or_else(|| {
                            Error::InvalidGraph(format!(
                                "conditional edge returned {key:?}, which is not a key of its path map"
                            ))
                        })?,
                        None => key,
                    };
                    if dest == START {
                        return Err(Error::InvalidGraph(
                            "a conditional edge cannot go to START".into(),
                        ));
                    }
                    if dest != END {
                        out.push((format!("branch:to:{dest}"), Value::Nil));
                    }
                }
                Goto::Send(send) => {
                    if send.node == END {
                        return Err(Error::InvalidUpdate(
                            "Cannot send a packet to the END node".into(),
                        ));
                    }
                    out.push(("__pregel_tasks".to_owned(), send.to_value()));
                }
            }
        }
        Ok(out)
    }
}
