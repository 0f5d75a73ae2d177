//! What a node produced, normalised for the runtime: [`NodeOutput`].

use stategraph_checkpoint::Value;

use crate::types::Goto;

/// A node's result, normalised: state writes, where to go, and `Send`s.
#[derive(Debug, Default)]
pub struct NodeOutput {
    pub(crate) writes: Vec<(String, Value)>,
    pub(crate) goto: Vec<Goto>,
}

impl NodeOutput {
    /// An output that writes nothing.
    pub fn none() -> NodeOutput {
        NodeOutput::default()
    }
}
