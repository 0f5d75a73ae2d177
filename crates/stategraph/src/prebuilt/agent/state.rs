//! The agent's state: Python's `AgentState` channels (`messages`, `jump_to`,
//! `structured_response`) with those the middleware add, the view hooks read
//! ([`AgentState`]) and the updates they return ([`AgentUpdate`], [`JumpTo`]).

use indexmap::IndexMap;
use stategraph_checkpoint::Value;

use crate::channels::{BinaryOperatorAggregate, Channel, EphemeralValue, LastValue};
use crate::messages::Message;
use crate::pregel::node_error::NodeError;
use crate::state::DynState;

/// Where a hook sends the agent instead of the next node (Python's `jump_to`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JumpTo {
    /// Call the model again (the first `before_model` hook, or the model node).
    Model,
    /// Run the pending tool calls.
    Tools,
    /// End the agent loop (the `after_agent` hooks still run).
    End,
}

impl JumpTo {
    /// The stored form: `"model"`, `"tools"` or `"end"`.
    pub fn as_str(self) -> &'static str {
        match self {
            JumpTo::Model => "model",
            JumpTo::Tools => "tools",
            JumpTo::End => "end",
        }
    }

    /// Reads the stored form.
    pub fn parse(s: &str) -> Option<JumpTo> {
        match s {
            "model" => Some(JumpTo::Model),
            "tools" => Some(JumpTo::Tools),
            "end" => Some(JumpTo::End),
            _ => None,
        }
    }
}

/// The agent's state as a hook sees it: the conversation, decoded, and every channel's
/// value (middleware channels included, e.g. `hitl_edited_tool_calls`).
#[derive(Clone, Debug, Default)]
pub struct AgentState {
    messages: Vec<Message>,
    values: IndexMap<String, Value>,
}

impl AgentState {
    /// Reads the agent's channels (messages that do not decode are a `ValueError`).
    pub fn from_values(values: IndexMap<String, Value>) -> Result<AgentState, NodeError> {
        let messages = match values.get("messages").and_then(Value::as_list) {
            Some(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    Message::from_value(v)
                        .map_err(|e| NodeError::named("ValueError", format!("messages[{i}]: {e}")))
                })
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        Ok(AgentState { messages, values })
    }

    /// The state a run ended with: `AgentState::of(&agent.invoke(..).await?)?`
    /// (`Error::State` when a message does not decode).
    pub fn of(outcome: &crate::graph::Outcome<DynState>) -> crate::error::Result<AgentState> {
        AgentState::from_values(outcome.values.clone())
            .map_err(|e| crate::error::Error::State(e.to_string()))
    }

    pub(crate) fn from_dyn(state: DynState) -> Result<AgentState, NodeError> {
        AgentState::from_values(state.0)
    }

    /// Every channel's value, as a map (what a tool's `ToolRuntime::state` reads).
    pub fn to_value(&self) -> Value {
        let mut m = stategraph_checkpoint::Map::with_capacity(self.values.len());
        for (k, v) in &self.values {
            m.insert(k.as_str(), v.clone());
        }
        Value::Map(m)
    }

    /// The conversation, oldest first.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// A channel's value (`None` when it has none).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key).filter(|v| !v.is_nil())
    }

    /// The structured answer of the last model call, if the agent has a
    /// `response_format` and the model gave one.
    pub fn structured_response(&self) -> Option<&Value> {
        self.get("structured_response")
    }

    /// The `jump_to` a hook of this step set.
    pub fn jump_to(&self) -> Option<JumpTo> {
        self.get("jump_to")
            .and_then(Value::as_str)
            .and_then(JumpTo::parse)
    }

    /// The last AI message and the tool messages after it.
    pub fn last_ai_and_tool_messages(&self) -> Option<(&Message, Vec<&Message>)> {
        let i = self
            .messages
            .iter()
            .rposition(|m| m.role == crate::messages::Role::Ai)?;
        let tools = self.messages[i + 1..]
            .iter()
            .filter(|m| m.role == crate::messages::Role::Tool)
            .collect();
        Some((&self.messages[i], tools))
    }
}

/// What a hook changes: channel writes, in order (Python's returned dict).
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct AgentUpdate {
    writes: Vec<(String, Value)>,
}

impl AgentUpdate {
    /// No change (Python's `None`).
    pub fn none() -> AgentUpdate {
        AgentUpdate::default()
    }

    /// Adds `messages` to the conversation (merged with `add_messages`: a message with a
    /// known id replaces it; [`Message::remove_all`] clears the list).
    pub fn messages(self, messages: Vec<Message>) -> AgentUpdate {
        let list = Value::list(messages.iter().map(Message::to_value).collect::<Vec<_>>());
        self.set("messages", list)
    }

    /// Sends the agent to `to` after this hook.
    pub fn jump_to(self, to: JumpTo) -> AgentUpdate {
        self.set("jump_to", to.as_str())
    }

    /// Writes `value` to the channel `key` (one of the agent's or a middleware's).
    pub fn set(mut self, key: impl Into<String>, value: impl Into<Value>) -> AgentUpdate {
        self.writes.push((key.into(), value.into()));
        self
    }

    /// True when the update writes nothing.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// The writes, in order.
    pub fn writes(&self) -> &[(String, Value)] {
        &self.writes
    }

    pub(crate) fn into_writes(self) -> Vec<(String, Value)> {
        self.writes
    }
}

/// Python's `AgentState` channels, then each middleware's own, a name declared twice
/// kept once (the first).
pub(crate) fn agent_channels(
    extra: impl IntoIterator<Item = (String, Box<dyn Channel>)>,
) -> Vec<(String, Box<dyn Channel>)> {
    let mut channels: Vec<(String, Box<dyn Channel>)> = vec![
        (
            "messages".to_owned(),
            Box::new(BinaryOperatorAggregate::new(
                crate::reducers::add_messages(),
                Some(Value::list(Vec::new())),
            )),
        ),
        ("jump_to".to_owned(), Box::new(EphemeralValue::new(false))),
        ("structured_response".to_owned(), Box::new(LastValue::new())),
    ];
    for (name, channel) in extra {
        if channels.iter().all(|(n, _)| *n != name) {
            channels.push((name, channel));
        }
    }
    channels
}
