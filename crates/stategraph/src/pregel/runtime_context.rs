//! What LangGraph's `Runtime` gives a node besides its store and stream writer: the run's
//! typed context (`context_schema`, `runtime.context`), its config, and the task's
//! execution info (`runtime.execution_info`).

use super::context::NodeContext;

impl NodeContext {
    /// This attempt of the task, from 1: a node under a
    /// [`RetryPolicy`](crate::pregel::retry::RetryPolicy) sees 2 on its first retry
    /// (Python's `runtime.execution_info.node_attempt`).
    pub fn node_attempt(&self) -> usize {
        self.inner.attempt
    }
}
