//! What a tool made with [`Tool::with_runtime`](super::Tool::with_runtime) gets beside its
//! arguments: the graph's state, the store, its call id and the running node's context
//! (Python's `ToolRuntime`, and the `InjectedState` / `InjectedStore` /
//! `InjectedToolCallId` annotations). None of it is an argument the model sees: the
//! tool's schema holds only its arguments.

use std::sync::Arc;

use indexmap::IndexMap;
use stategraph_checkpoint::Value;

use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;
use crate::state::State;

/// The runtime of one tool call: the state the call was made in, its call id, the store
/// and the [`NodeContext`] of the task running it.
///
/// ```
/// use stategraph::prebuilt::{Tool, ToolRuntime};
/// #[derive(serde::Deserialize)]
/// struct Args { key: String }
/// let lookup = Tool::with_runtime("lookup", "Look a key up in the state.", |a: Args, rt: ToolRuntime| async move {
///     let user = rt.state_field("user").and_then(|v| v.as_str().map(str::to_owned));
///     Ok::<_, stategraph::NodeError>(format!("{}: {:?} (call {:?})", a.key, user, rt.tool_call_id()))
/// })
/// .arg("key", "string");
/// // The model sees only `key`.
/// assert_eq!(lookup.schema()["required"], serde_json::json!(["key"]));
/// ```
#[derive(Clone, Debug)]
pub struct ToolRuntime {
    state: Value,
    tool_call_id: Option<String>,
    ctx: NodeContext,
}

impl ToolRuntime {
    pub(crate) fn new(state: Value, tool_call_id: Option<String>, ctx: NodeContext) -> Self {
        ToolRuntime {
            state,
            tool_call_id,
            ctx,
        }
    }

    /// The graph's state as the call sees it (Python's `InjectedState`): a map of state
    /// keys. For a call sent alone (`create_react_agent`'s default, version v2) it is the
    /// state the `Send` carries, the one the model answered in; for a tool node
    /// triggered by an edge, the state the node read. `Nil` outside a graph.
    pub fn state(&self) -> &Value {
        &self.state
    }

    /// One key of the state (Python's `InjectedState("key")`); `None` when absent.
    pub fn state_field(&self, key: &str) -> Option<&Value> {
        self.state.as_map()?.get(key)
    }

    /// The state read as `S` (keys `S` lacks are ignored, as are managed values such as
    /// `remaining_steps`): a `TypeError` naming `S` when it does not read.
    pub fn state_as<S: State>(&self) -> Result<S, NodeError> {
        let mut values = IndexMap::new();
        if let Some(m) = self.state.as_map() {
            for (k, v) in m.iter() {
                if let Some(k) = k.as_str() {
                    values.insert(k.to_owned(), v.clone());
                }
            }
        }
        S::from_owned_values(values).map_err(|e| {
            NodeError::named(
                "TypeError",
                format!(
                    "the tool's state does not read as `{}`: {e}",
                    std::any::type_name::<S>()
                ),
            )
        })
    }

    /// The id of the tool call being answered (Python's `InjectedToolCallId`).
    pub fn tool_call_id(&self) -> Option<&str> {
        self.tool_call_id.as_deref()
    }

    /// The graph's long-term store (Python's `InjectedStore`), if it was given one.
    pub fn store(&self) -> Option<&Arc<dyn stategraph_store::BaseStore>> {
        self.ctx.store()
    }

    /// The running task's context: `interrupt`, custom stream data, the thread id.
    pub fn ctx(&self) -> &NodeContext {
        &self.ctx
    }

    /// Pauses the run for a human (as [`NodeContext::interrupt`]): the tool's task runs
    /// again on resume, and this returns the answer.
    pub fn interrupt(&self, value: impl Into<Value>) -> Result<Value, NodeError> {
        self.ctx.interrupt(value)
    }

    /// The context, taken out (a tool made with `with_context` gets only this).
    pub(crate) fn into_ctx(self) -> NodeContext {
        self.ctx
    }
}
