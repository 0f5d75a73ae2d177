//! The kinds of LangChain message, with their Python module, class and `type` string.

/// The kind of a [`Message`](super::Message): which LangChain class it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// `HumanMessage` (`type` `"human"`; roles `human`, `user`).
    Human,
    /// `AIMessage` (`type` `"ai"`; roles `ai`, `assistant`).
    Ai,
    /// `SystemMessage` (`type` `"system"`; roles `system`, `developer`).
    System,
    /// `ToolMessage` (`type` `"tool"`).
    Tool,
    /// `FunctionMessage` (`type` `"function"`, legacy).
    Function,
    /// `ChatMessage` with an arbitrary role (`type` `"chat"`).
    Chat(String),
    /// `RemoveMessage` (`type` `"remove"`): deletes a message through `add_messages`.
    Remove,
}

impl Role {
    /// The `type` field LangChain writes.
    pub fn type_name(&self) -> &'static str {
        match self {
            Role::Human => "human",
            Role::Ai => "ai",
            Role::System => "system",
            Role::Tool => "tool",
            Role::Function => "function",
            Role::Chat(_) => "chat",
            Role::Remove => "remove",
        }
    }

    /// The Python class name.
    pub fn class(&self) -> &'static str {
        match self {
            Role::Human => "HumanMessage",
            Role::Ai => "AIMessage",
            Role::System => "SystemMessage",
            Role::Tool => "ToolMessage",
            Role::Function => "FunctionMessage",
            Role::Chat(_) => "ChatMessage",
            Role::Remove => "RemoveMessage",
        }
    }

    /// The Python module that defines the class.
    pub fn module(&self) -> &'static str {
        match self {
            Role::Human => "langchain_core.messages.human",
            Role::Ai => "langchain_core.messages.ai",
            Role::System => "langchain_core.messages.system",
            Role::Tool => "langchain_core.messages.tool",
            Role::Function => "langchain_core.messages.function",
            Role::Chat(_) => "langchain_core.messages.chat",
            Role::Remove => "langchain_core.messages.modifier",
        }
    }

    /// The role of a (non-chunk, non-chat) message class name.
    pub(crate) fn from_class(class: &str) -> Option<Role> {
        Some(match class {
            "HumanMessage" => Role::Human,
            "AIMessage" => Role::Ai,
            "SystemMessage" => Role::System,
            "ToolMessage" => Role::Tool,
            "FunctionMessage" => Role::Function,
            "RemoveMessage" => Role::Remove,
            _ => return None,
        })
    }
}
