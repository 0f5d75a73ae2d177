//! What a [`ToolNode`](super::ToolNode) takes: the graph's state (the calls of its last AI
//! message, LangGraph's `version="v1"`), one tool call with the state it was made in (the
//! `Send` payload of `version="v2"`, Python's `ToolCallWithContext`), or a list of tool
//! calls (the payload of langchain's `create_agent`), and the `Send`s that hand a tool node
//! one call each.

use indexmap::IndexMap;
use stategraph_checkpoint::{Map, Value};

use crate::channels::Channel;
use crate::error::{Error, Result};
use crate::graph::NodeInput;
use crate::messages::{Message, ToolCall};
use crate::types::Send;

/// The `__type` of a [`ToolCallWithContext`] payload (Python's marker).
pub const TOOL_CALL_WITH_CONTEXT: &str = "tool_call_with_context";

/// One tool call and the state it was made in: what `create_react_agent` (version v2)
/// sends to its `tools` node for each call, stored as Python's `ToolCallWithContext`
/// dict `{"__type": "tool_call_with_context", "tool_call": {...}, "state": {...}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCallWithContext {
    /// The call to run.
    pub tool_call: ToolCall,
    /// The graph's state when the call was made (a map of state keys), which the tool
    /// reads through [`ToolRuntime::state`](super::ToolRuntime::state).
    pub state: Value,
}

impl ToolCallWithContext {
    /// A payload for `call` made in `state`.
    pub fn new(tool_call: ToolCall, state: impl Into<Value>) -> ToolCallWithContext {
        ToolCallWithContext {
            tool_call,
            state: state.into(),
        }
    }

    /// The stored form (keys in Python's order: `__type`, `tool_call`, `state`).
    pub fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(3);
        m.insert("__type", TOOL_CALL_WITH_CONTEXT);
        m.insert("tool_call", self.tool_call.to_value());
        m.insert("state", self.state.clone());
        Value::Map(m)
    }

    /// Reads a stored payload; `None` when `v` is not one (no `__type` marker), an error
    /// when it is one whose tool call does not read.
    pub fn from_value(v: &Value) -> Option<Result<ToolCallWithContext>> {
        let m = v.as_map()?;
        if m.get("__type").and_then(Value::as_str) != Some(TOOL_CALL_WITH_CONTEXT) {
            return None;
        }
        let call = match m.get("tool_call") {
            Some(c) => ToolCall::from_value(c),
            None => Err(Error::InvalidUpdate(
                "a tool_call_with_context payload has no `tool_call`".into(),
            )),
        };
        let state = m.get("state").cloned().unwrap_or(Value::Nil);
        Some(call.map(|tool_call| ToolCallWithContext { tool_call, state }))
    }
}

impl From<ToolCallWithContext> for Value {
    fn from(p: ToolCallWithContext) -> Value {
        p.to_value()
    }
}

/// One `Send("tools", ToolCallWithContext{..})` per tool call of `ai` (none when it calls
/// no tool), in the calls' order: the fan-out of Python's `create_react_agent(...,
/// version="v2")`, each call its own `tools` task. `state` is the graph's state as a map
/// (e.g. from [`state_value`]); each task's tools read it.
///
/// ```
/// use stategraph::prebuilt::{tool_call_sends, MessagesState};
/// use stategraph::{map, Message, ToolCall};
/// let ai = Message::ai("").with_tool_calls(vec![
///     ToolCall::new("add", map! {"a" => 1}, "c1"),
///     ToolCall::new("add", map! {"a" => 2}, "c2"),
/// ]);
/// let state = map! {"messages" => vec![ai.to_value()]};
/// let sends = tool_call_sends(&ai, &state);
/// assert_eq!(sends.len(), 2);
/// assert_eq!(sends[1].node, "tools");
/// ```
pub fn tool_call_sends(ai: &Message, state: &Value) -> Vec<Send> {
    tool_call_sends_to("tools", ai, state)
}

/// [`tool_call_sends`] to a tool node named `node`.
pub fn tool_call_sends_to(node: &str, ai: &Message, state: &Value) -> Vec<Send> {
    ai.tool_calls
        .iter()
        .map(|call| {
            Send::new(
                node,
                ToolCallWithContext::new(call.clone(), state.clone()).to_value(),
            )
        })
        .collect()
}

/// A state as the map a [`ToolCallWithContext`] carries (its keys in the state's order,
/// unset keys left out).
pub fn state_value<S: crate::state::State>(state: &S) -> Result<Value> {
    let mut m = Map::new();
    for (k, v) in state.to_values()? {
        m.insert(k, v);
    }
    Ok(Value::Map(m))
}

/// The input of a [`ToolNode`](super::ToolNode)'s node: which of its three inputs a task
/// got.
#[derive(Clone, Debug)]
pub enum ToolNodeInput {
    /// The graph's state (an edge triggered the node): the calls of its last AI message.
    State(IndexMap<String, Value>),
    /// One call with the state it was made in (a v2 `Send`).
    Call(ToolCallWithContext),
    /// Tool calls sent without a state (langchain's `Send("tools", [tool_call])`): the
    /// tools read the graph's current state.
    Calls(Vec<ToolCall>),
}

impl NodeInput for ToolNodeInput {
    fn input_channels() -> Option<Vec<(String, Box<dyn Channel>)>> {
        None
    }

    fn from_input_values(values: IndexMap<String, Value>) -> Result<Self> {
        Ok(ToolNodeInput::State(values))
    }

    fn from_raw_input(input: Value) -> std::result::Result<Result<Self>, Value> {
        if let Some(payload) = ToolCallWithContext::from_value(&input) {
            return Ok(payload.map(ToolNodeInput::Call));
        }
        let is_call = |v: &Value| {
            v.as_map()
                .and_then(|m| m.get("type"))
                .and_then(Value::as_str)
                == Some("tool_call")
        };
        match input.as_list() {
            Some(items) if items.last().is_some_and(is_call) => Ok(items
                .iter()
                .map(ToolCall::from_value)
                .collect::<Result<Vec<_>>>()
                .map(ToolNodeInput::Calls)),
            _ => Err(input),
        }
    }
}
