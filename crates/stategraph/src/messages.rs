//! LangChain chat messages, stored exactly as LangGraph stores them.
//!
//! LangGraph keeps a conversation as a list of LangChain message objects, which its
//! serializer writes as pydantic v2 extension values (code 5) whose fields follow
//! `model_dump()` order: `content, additional_kwargs, response_metadata, type, name, id`,
//! then the class's own fields (docs/format.md#value-encoding). [`Message`] is the Rust view of any
//! of them;
//! [`Message::to_value`] writes the very value Python writes (and so, once encoded, the
//! very bytes), and [`Message::from_value`] reads one back, keeping fields it does not
//! know. A `Vec<Message>` state field with the `add_messages` reducer therefore stores
//! what a Python `Annotated[list[AnyMessage], add_messages]` key stores.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use stategraph_checkpoint::{Map, Value};

use crate::error::{Error, Result};

pub(crate) mod coerce;
mod role;

pub use role::Role;

/// The id of a [`Role::Remove`] message that clears the whole list (`REMOVE_ALL_MESSAGES`).
pub const REMOVE_ALL_MESSAGES: &str = "__remove_all__";

/// A tool call requested by an AI message (`langchain_core.messages.tool.ToolCall`).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments, normally a map.
    pub args: Value,
    /// The call's id, which the answering tool message repeats.
    pub id: Option<String>,
}

impl ToolCall {
    /// A call of tool `name` with `args` and call id `id`.
    pub fn new(name: impl Into<String>, args: impl Into<Value>, id: impl Into<String>) -> ToolCall {
        ToolCall {
            name: name.into(),
            args: args.into(),
            id: Some(id.into()),
        }
    }

    /// The stored form: `{name, args, id, type: "tool_call"}`.
    pub fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(4);
        m.insert("name", self.name.as_str());
        m.insert("args", self.args.clone());
        m.insert("id", self.id.as_deref());
        m.insert("type", "tool_call");
        Value::Map(m)
    }

    /// Reads a stored tool call (the `type` key, if any, is ignored).
    pub fn from_value(v: &Value) -> Result<ToolCall> {
        let m = v
            .as_map()
            .ok_or_else(|| invalid(format!("a tool call must be a dict, got {v:?}")))?;
        Ok(ToolCall {
            name: required_str(m, "name", "tool call")?,
            args: m
                .get("args")
                .cloned()
                .unwrap_or_else(|| Value::Map(Map::new())),
            id: optional_str(m, "id")?,
        })
    }
}

/// A LangChain message of any kind: human, AI, system, tool, function, chat or remove.
///
/// The fields common to every kind come first; the kind-specific ones are ignored for the
/// other kinds. `extra` holds the fields of a stored message that this type does not
/// model; they are written back after the known ones.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// The kind of message (its class).
    pub role: Role,
    /// The content: a string, or a list of strings and content-block maps.
    pub content: Value,
    /// Provider-specific extra data.
    pub additional_kwargs: Map,
    /// Response metadata (headers, token counts, model name...).
    pub response_metadata: Map,
    /// An optional name of the author.
    pub name: Option<String>,
    /// The unique id; `add_messages` gives a fresh uuid4 to a message without one.
    pub id: Option<String>,
    /// AI messages: the tool calls requested.
    pub tool_calls: Vec<ToolCall>,
    /// AI messages: tool calls that failed to parse, as stored.
    pub invalid_tool_calls: Vec<Value>,
    /// AI messages: token usage, as stored.
    pub usage_metadata: Option<Value>,
    /// Tool messages: the id of the call this message answers.
    pub tool_call_id: Option<String>,
    /// Tool messages: an artifact not sent to the model.
    pub artifact: Value,
    /// Tool messages: `"success"` or `"error"`.
    pub status: String,
    /// Fields of a stored message that this type does not model, in their stored order.
    pub extra: Map,
}

impl Message {
    /// A message of kind `role` with `content` and every other field at its default.
    pub fn new(role: Role, content: impl Into<Value>) -> Message {
        Message {
            role,
            content: content.into(),
            additional_kwargs: Map::new(),
            response_metadata: Map::new(),
            name: None,
            id: None,
            tool_calls: Vec::new(),
            invalid_tool_calls: Vec::new(),
            usage_metadata: None,
            tool_call_id: None,
            artifact: Value::Nil,
            status: "success".to_owned(),
            extra: Map::new(),
        }
    }

    /// A `HumanMessage`.
    pub fn human(content: impl Into<Value>) -> Message {
        Message::new(Role::Human, content)
    }

    /// An `AIMessage`.
    pub fn ai(content: impl Into<Value>) -> Message {
        Message::new(Role::Ai, content)
    }

    /// A `SystemMessage`.
    pub fn system(content: impl Into<Value>) -> Message {
        Message::new(Role::System, content)
    }

    /// A `ToolMessage` answering the tool call `tool_call_id`.
    pub fn tool(content: impl Into<Value>, tool_call_id: impl Into<String>) -> Message {
        let mut m = Message::new(Role::Tool, content);
        m.tool_call_id = Some(tool_call_id.into());
        m
    }

    /// A `RemoveMessage`: written through `add_messages`, deletes the message `id`.
    pub fn remove(id: impl Into<String>) -> Message {
        Message::new(Role::Remove, "").with_id(id)
    }

    /// A `RemoveMessage` that deletes every message before it.
    pub fn remove_all() -> Message {
        Message::remove(REMOVE_ALL_MESSAGES)
    }

    /// Sets the id (builder style).
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Message {
        self.id = Some(id.into());
        self
    }

    /// Sets the name (builder style).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Message {
        self.name = Some(name.into());
        self
    }

    /// Sets the tool calls of an AI message (builder style).
    #[must_use]
    pub fn with_tool_calls(mut self, calls: Vec<ToolCall>) -> Message {
        self.tool_calls = calls;
        self
    }

    /// The text of the content: the string itself, or the string items and the `text` of
    /// the `{"type": "text"}` blocks of a list, concatenated.
    pub fn text(&self) -> String {
        match &self.content {
            Value::Str(s) => s.to_string(),
            Value::List(items) => items
                .iter()
                .filter_map(|item| match item {
                    Value::Str(s) => Some(s.as_str()),
                    Value::Map(m) if m.get("type").and_then(Value::as_str) == Some("text") => {
                        m.get("text").and_then(Value::as_str)
                    }
                    _ => None,
                })
                .collect(),
            _ => String::new(),
        }
    }

    /// The stored form: a pydantic v2 extension value with the fields in `model_dump()`
    /// order, as LangGraph's serializer writes the Python message.
    pub fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(9 + self.extra.len());
        m.insert("content", self.content.clone());
        m.insert(
            "additional_kwargs",
            Value::Map(self.additional_kwargs.clone()),
        );
        m.insert(
            "response_metadata",
            Value::Map(self.response_metadata.clone()),
        );
        m.insert("type", self.role.type_name());
        m.insert("name", self.name.as_deref());
        m.insert("id", self.id.as_deref());
        match &self.role {
            Role::Ai => {
                let calls = self.tool_calls.iter().map(ToolCall::to_value).collect();
                m.insert("tool_calls", Value::List(calls));
                m.insert(
                    "invalid_tool_calls",
                    Value::List(self.invalid_tool_calls.clone().into()),
                );
                m.insert("usage_metadata", self.usage_metadata.clone());
            }
            Role::Tool => {
                m.insert("tool_call_id", self.tool_call_id.as_deref());
                m.insert("artifact", self.artifact.clone());
                m.insert("status", self.status.as_str());
            }
            Role::Chat(role) => {
                m.insert("role", role.as_str());
            }
            _ => {}
        }
        for (k, v) in self.extra.iter() {
            m.insert(k.clone(), v.clone());
        }
        Value::pydantic_v2(self.role.module(), self.role.class(), m)
    }

    /// Reads a stored LangChain message (any `langchain_core.messages` class; a chunk
    /// class reads as its message class, without its chunk-only fields).
    pub fn from_value(v: &Value) -> Result<Message> {
        let (class, fields) = v
            .as_message()
            .ok_or_else(|| invalid(format!("not a LangChain message: {v:?}")))?;
        let base = class.strip_suffix("Chunk").unwrap_or(class);
        let role = match base {
            "ChatMessage" => Role::Chat(required_str(fields, "role", class)?),
            other => Role::from_class(other)
                .ok_or_else(|| invalid(format!("unknown message class {class:?}")))?,
        };
        let mut msg = Message::new(role, fields.get("content").cloned().unwrap_or_default());
        if msg.content.is_nil() {
            msg.content = Value::from("");
        }
        for (key, value) in fields.iter() {
            let Some(key) = key.as_str() else {
                msg.extra.insert(key.clone(), value.clone());
                continue;
            };
            match (key, &msg.role) {
                ("content" | "type", _) => {}
                ("additional_kwargs", _) => msg.additional_kwargs = map_field(value, key)?,
                ("response_metadata", _) => msg.response_metadata = map_field(value, key)?,
                ("name", _) => msg.name = optional_str(fields, key)?,
                ("id", _) => msg.id = optional_str(fields, key)?,
                ("tool_calls", Role::Ai) => {
                    msg.tool_calls = list_field(value, key)?
                        .iter()
                        .map(ToolCall::from_value)
                        .collect::<Result<_>>()?;
                }
                ("invalid_tool_calls", Role::Ai) => {
                    msg.invalid_tool_calls = list_field(value, key)?.to_vec();
                }
                ("usage_metadata", Role::Ai) => {
                    msg.usage_metadata = (!value.is_nil()).then(|| value.clone());
                }
                ("tool_call_chunks" | "chunk_position", Role::Ai) if base != class => {}
                ("tool_call_id", Role::Tool) => msg.tool_call_id = optional_str(fields, key)?,
                ("artifact", Role::Tool) => msg.artifact = value.clone(),
                ("status", Role::Tool) => {
                    msg.status = optional_str(fields, key)?.unwrap_or_else(|| "success".into());
                }
                ("role", Role::Chat(_)) => {}
                _ => {
                    msg.extra.insert(key, value.clone());
                }
            }
        }
        Ok(msg)
    }
}

impl Serialize for Message {
    /// Serializes as the stored extension value (see [`Message::to_value`]); through
    /// `stategraph_checkpoint::serde::rust::to_value` this is the exact Python value.
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Message {
    /// Reads anything [`Message::coerce`] accepts.
    fn deserialize<D: Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Message, D::Error> {
        let v = Value::deserialize(deserializer)?;
        Message::coerce(&v).map_err(D::Error::custom)
    }
}

/// An error about a message's shape.
fn invalid(msg: String) -> Error {
    Error::State(msg)
}

/// A required string field of a map.
fn required_str(m: &Map, key: &str, what: &str) -> Result<String> {
    optional_str(m, key)?.ok_or_else(|| invalid(format!("{what} needs a string {key:?}")))
}

/// An optional string field of a map: absent or `None` is `None`.
fn optional_str(m: &Map, key: &str) -> Result<Option<String>> {
    match m.get(key) {
        None | Some(Value::Nil) => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s.to_string())),
        Some(other) => Err(invalid(format!(
            "message field {key:?} must be a string, got {other:?}"
        ))),
    }
}

/// A field that must be a dict (`None` reads as empty).
fn map_field(v: &Value, key: &str) -> Result<Map> {
    match v {
        Value::Map(m) => Ok(m.clone()),
        Value::Nil => Ok(Map::new()),
        other => Err(invalid(format!(
            "message field {key:?} must be a dict, got {other:?}"
        ))),
    }
}

/// A field that must be a list (`None` reads as empty).
fn list_field<'a>(v: &'a Value, key: &str) -> Result<&'a [Value]> {
    match v {
        Value::List(l) => Ok(l),
        Value::Nil => Ok(&[]),
        other => Err(invalid(format!(
            "message field {key:?} must be a list, got {other:?}"
        ))),
    }
}
