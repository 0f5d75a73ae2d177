//! The chat states: a list of messages merged with `add_messages` (Python's
//! `MessagesState`), the same list on a `DeltaChannel` ([`DeltaMessagesState`]), and the
//! [`HasMessages`] view that prebuilt nodes read.

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

/// A conversation stored as deltas: [`MessagesState`]'s `messages` on a `DeltaChannel`
/// (merged with `add_messages`, a snapshot every 100 updates, Python's default), so a
/// checkpoint stores only the messages its step wrote instead of the whole list.
///
/// Python has no ready-made class for it; this is the state Python users write as
/// `messages: Annotated[list, DeltaChannel(_messages_delta_reducer)]` (its batch form of
/// `add_messages`, experimental there), and a thread is shared with such a Python graph
/// as is. Use it for long chats (the `stats` command
/// recommends it when message lists dominate a database): with
/// [`ReactAgentBuilder::compile_with_state`](super::ReactAgentBuilder::compile_with_state),
/// or in a graph of your own with [`ToolNode`](super::ToolNode) and
/// [`tools_condition`](super::tools_condition).
#[derive(crate::State, Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeltaMessagesState {
    /// The conversation, oldest first.
    #[state(delta(reducer = add_messages, snapshot_frequency = 100))]
    pub messages: Vec<Message>,
}

impl DeltaMessagesState {
    /// An input (or node update) that adds these messages to the conversation.
    pub fn input(messages: impl Into<Messages>) -> DeltaMessagesStateUpdate {
        DeltaMessagesStateUpdate {
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

impl HasMessages for DeltaMessagesState {
    fn messages(&self) -> &[Message] {
        &self.messages
    }

    fn messages_update(messages: Vec<Message>) -> DeltaMessagesStateUpdate {
        DeltaMessagesStateUpdate {
            messages: Some(messages),
        }
    }
}
