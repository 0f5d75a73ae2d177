//! Nodes: what a node function may return ([`IntoNodeOutput`]) and the function shapes
//! usable as nodes ([`NodeHandler`]). What a node receives ([`NodeContext`]) and how it
//! fails ([`NodeError`]) belong to the runtime (`pregel`) and are re-exported here.

use std::future::Future;

use futures::future::BoxFuture;
use futures::FutureExt;

pub use crate::pregel::context::NodeContext;
pub use crate::pregel::node_error::NodeError;
pub use crate::pregel::node_output::NodeOutput;
use crate::state::IntoUpdate;
use crate::types::{Command, Goto, Send as SendPacket};

/// What a node function may return: an update (`<State>Update`, a map of values, `()`),
/// a [`Command`], a [`Send`] or a list of them, or a `Result` of any of these.
pub trait IntoNodeOutput {
    /// Normalises the return value.
    fn into_node_output(self) -> Result<NodeOutput, NodeError>;
}

impl<U: IntoUpdate> IntoNodeOutput for U {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        Ok(NodeOutput {
            writes: self
                .into_writes()
                .map_err(|e| NodeError::named("InvalidUpdateError", e))?,
            goto: Vec::new(),
        })
    }
}

impl<U: IntoUpdate> IntoNodeOutput for Command<U> {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        let writes = match self.update {
            Some(u) => u
                .into_writes()
                .map_err(|e| NodeError::named("InvalidUpdateError", e))?,
            None => Vec::new(),
        };
        if self.graph.as_deref() == Some(crate::types::PARENT) {
            return Err(NodeError::parent_command(Command {
                graph: self.graph,
                update: Some(writes),
                resume: self.resume,
                goto: self.goto,
            }));
        }
        Ok(NodeOutput {
            writes,
            goto: self.goto,
        })
    }
}

impl IntoNodeOutput for SendPacket {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        Ok(NodeOutput {
            writes: Vec::new(),
            goto: vec![Goto::Send(self)],
        })
    }
}

impl IntoNodeOutput for Vec<SendPacket> {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        Ok(NodeOutput {
            writes: Vec::new(),
            goto: self.into_iter().map(Goto::Send).collect(),
        })
    }
}

impl IntoNodeOutput for NodeOutput {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        Ok(self)
    }
}

impl<T: IntoNodeOutput, E: Into<NodeError>> IntoNodeOutput for Result<T, E> {
    fn into_node_output(self) -> Result<NodeOutput, NodeError> {
        self.map_err(Into::into)?.into_node_output()
    }
}

/// A function usable as a node over state `S`: `Fn(S) -> impl Future` or
/// `Fn(S, NodeContext) -> impl Future`, returning anything [`IntoNodeOutput`].
/// `M` only tells the two shapes apart.
pub trait NodeHandler<S, M>: Send + Sync + 'static {
    /// Runs the node.
    fn call(&self, state: S, ctx: NodeContext)
        -> BoxFuture<'static, Result<NodeOutput, NodeError>>;
}

impl<S, F, Fut, R> NodeHandler<S, (S,)> for F
where
    F: Fn(S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + std::marker::Send + 'static,
    R: IntoNodeOutput,
{
    fn call(
        &self,
        state: S,
        _ctx: NodeContext,
    ) -> BoxFuture<'static, Result<NodeOutput, NodeError>> {
        let fut = (self)(state);
        async move { fut.await.into_node_output() }.boxed()
    }
}

impl<S, F, Fut, R> NodeHandler<S, (S, NodeContext)> for F
where
    F: Fn(S, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + std::marker::Send + 'static,
    R: IntoNodeOutput,
{
    fn call(
        &self,
        state: S,
        ctx: NodeContext,
    ) -> BoxFuture<'static, Result<NodeOutput, NodeError>> {
        let fut = (self)(state, ctx);
        async move { fut.await.into_node_output() }.boxed()
    }
}
