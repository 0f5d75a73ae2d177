//! Nodes: what a node function may return ([`IntoNodeOutput`]) and the function shapes
//! usable as nodes ([`NodeHandler`]); what it may take is [`NodeInput`]. What a node receives ([`NodeContext`]) and how it
//! fails ([`NodeError`]) belong to the runtime (`pregel`) and are re-exported here.

use std::future::Future;

use futures::future::BoxFuture;
use futures::FutureExt;

pub use super::input::NodeInput;
pub use crate::pregel::context::NodeContext;
pub use crate::pregel::node_error::NodeError;
pub use crate::pregel::node_output::NodeOutput;
use crate::state::IntoUpdate;
use crate::types::{Command, Goto, Send as SendPacket};

/// What a node function may return: an update (`<State>Update`, a map of values, `()`),
/// a [`Command`], a [`Send`] or a list of them, or a `Result` of any of these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not something a node may return",
    label = "a node returns this",
    note = "a node returns an update (the state's `<State>Update`, `stategraph::update([..])` pairs, or `()`), a `Command`, a `Send` or `Vec<Send>`, or a `Result` of one of these whose error converts into `NodeError`"
)]
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

/// A function usable as a node of a graph over state `S`: `Fn(I) -> impl Future` or
/// `Fn(I, NodeContext) -> impl Future`, where the input `I` is `S` or another
/// [`NodeInput`] type (a `#[derive(State)]` struct whose fields the node reads, or that a
/// `Send` carries), returning anything [`IntoNodeOutput`]. `M` only tells the shapes
/// apart.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a node of a `StateGraph<{S}>`",
    label = "not a node",
    note = "a node is an async function or closure `|input: I| async move {{ .. }}` or `|input: I, ctx: NodeContext| async move {{ .. }}`",
    note = "its input `I` is `{S}` or another `#[derive(State)]` type (write the type on the closure's argument); it returns an update, a `Command`, a `Send`, `Vec<Send>` or a `Result` of one"
)]
pub trait NodeHandler<S, M>: Send + Sync + 'static {
    /// What the node takes: the graph's state or another [`NodeInput`] type.
    type Input: NodeInput;

    /// Runs the node.
    fn call(
        &self,
        input: Self::Input,
        ctx: NodeContext,
    ) -> BoxFuture<'static, Result<NodeOutput, NodeError>>;
}

impl<S, I, F, Fut, R> NodeHandler<S, (I,)> for F
where
    I: NodeInput,
    F: Fn(I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + std::marker::Send + 'static,
    R: IntoNodeOutput,
{
    type Input = I;

    fn call(
        &self,
        input: I,
        _ctx: NodeContext,
    ) -> BoxFuture<'static, Result<NodeOutput, NodeError>> {
        let fut = (self)(input);
        async move { fut.await.into_node_output() }.boxed()
    }
}

impl<S, I, F, Fut, R> NodeHandler<S, (I, NodeContext)> for F
where
    I: NodeInput,
    F: Fn(I, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + std::marker::Send + 'static,
    R: IntoNodeOutput,
{
    type Input = I;

    fn call(
        &self,
        input: I,
        ctx: NodeContext,
    ) -> BoxFuture<'static, Result<NodeOutput, NodeError>> {
        let fut = (self)(input, ctx);
        async move { fut.await.into_node_output() }.boxed()
    }
}
