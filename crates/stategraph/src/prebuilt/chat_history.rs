//! The check an agent makes before calling its model: every tool call has its answer.

use stategraph_checkpoint::Value;

use crate::messages::{Message, Role};
use crate::pregel::node_error::NodeError;

/// Fails (a `ValueError` with LangGraph's text) when an AI message of `messages` has a
/// tool call that no tool message answers: most providers refuse such a history. This
/// happens, for example, when a run paused before its tools is continued with a new
/// human message instead of being resumed.
pub fn validate_chat_history(messages: &[Message]) -> Result<(), NodeError> {
    let answered: std::collections::HashSet<&str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    let missing: Vec<Value> = messages
        .iter()
        .filter(|m| m.role == Role::Ai)
        .flat_map(|m| &m.tool_calls)
        .filter(|c| !c.id.as_deref().is_some_and(|id| answered.contains(id)))
        .map(|c| c.to_value())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let first = Value::list(missing.into_iter().take(3).collect::<Vec<_>>());
    Err(NodeError::named(
        "ValueError",
        format!(
            "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. \
             Here are the first few of those tool calls: {}.\n\n\
             Every tool call (LLM requesting to call a tool) in the message history MUST have \
             a corresponding ToolMessage (result of a tool invocation to return to the LLM) - \
             this is required by most LLM providers.\n\
             For troubleshooting, visit: \
             https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CHAT_HISTORY",
            first.repr()
        ),
    ))
}
