//! The names of the two virtual nodes every graph has: where a run enters and where it
//! ends. Below every file of the graph API that names them.

/// The virtual entry node (and input channel).
pub const START: &str = "__start__";
/// The virtual exit node.
pub const END: &str = "__end__";
