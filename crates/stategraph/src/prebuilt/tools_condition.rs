//! The router after a model node: to the tools while the model calls some, else the end.

use super::messages_state::HasMessages;
use crate::graph::END;
use crate::messages::Role;

/// `"tools"` when the conversation's last message is an AI message with tool calls, else
/// [`END`] (LangGraph's `tools_condition`; an empty conversation also goes to the end,
/// where Python raises). Use it as a conditional edge:
/// `graph.add_conditional_edges_with_map("agent", tools_condition, [("tools", "tools"), (END, END)])`.
pub fn tools_condition<S: HasMessages>(state: &S) -> &'static str {
    match state.messages().last() {
        Some(m) if m.role == Role::Ai && !m.tool_calls.is_empty() => "tools",
        _ => END,
    }
}
