//! The chat state: a list of messages merged with `add_messages` (Python's
//! `MessagesState`), and the [`HasMessages`] view that prebuilt nodes read.

use crate::messages::Message;
use crate::state::State;

/// A conversation: the messages, merged with `add_messages` (a message with a known id
/// replaces it, others are appended, `RemoveMessage` deletes). The channel is the one
/// Python's `MessagesState` (`Annotated[list[AnyMessage], add_messages]`) has, so a
/// thread is shared with Python as is.
#[derive(crate::State, Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MessagesState {
    /// The conversation, oldest first.
    #[state(reducer = add_messages)]
    pub messages: Vec<Message>,
}

impl MessagesState {
    /// An input (or node update) that adds these messages to the conversation:
    /// `agent.invoke(MessagesState::input(Message::human("hi")), &config)`.
    pub fn input(messages: impl Into<Messages>) -> MessagesStateUpdate {
        MessagesStateUpdate {
            messages: Some(messages.into().0),
        }
    }
}

/// One message or several, for [`MessagesState::input`].
#[derive(Clone, Debug, Default)]
pub struct Messages(pub Vec<Message>);

impl From<Message> for Messages {
    fn from(m: Message) -> Self {
        Messages(vec![m])
    }
}

impl From<Vec<Message>> for Messages {
    fn from(v: Vec<Message>) -> Self {
        Messages(v)
    }
}

impl From<&str> for Messages {
    /// A human message (as Python's `("user", text)` or a bare string in a list).
    fn from(text: &str) -> Self {
        Messages(vec![Message::human(text)])
    }
}

/// A state with a conversation: what [`ToolNode`](super::ToolNode),
/// [`tools_condition`](super::tools_condition) and the agent's model node read and write.
/// Implement it for your own state to use those pieces in your own graph.
pub trait HasMessages: State {
    /// The conversation, oldest first.
    fn messages(&self) -> &[Message];

    /// An update that adds `messages` to the conversation.
    fn messages_update(messages: Vec<Message>) -> Self::Update;
}

impl HasMessages for MessagesState {
    fn messages(&self) -> &[Message] {
        &self.messages
    }

    fn messages_update(messages: Vec<Message>) -> MessagesStateUpdate {
        MessagesStateUpdate {
            messages: Some(messages),
        }
    }
}
