//! Message-like values to messages, as LangChain's `convert_to_messages` does
//! ([`Message::coerce`]), and the Python type names error texts quote. Below
//! `messages.rs`: the root defines the message, this file builds one.

use stategraph_checkpoint::serde::rust::to_value;
use stategraph_checkpoint::{Map, Value};

use super::{invalid, Message, Role, ToolCall};
use crate::error::Result;

/// The roles a dict or a pair may name.
const ROLES: &str =
    "'human', 'user', 'ai', 'assistant', 'function', 'tool', 'system', or 'developer'";

impl Message {
    /// Converts anything `add_messages` accepts into a message: a stored message, a
    /// string (a human message), a `[role, content]` pair, or a dict with `role` (or
    /// `type`) and `content` plus optional `name`, `id`, `tool_calls`, `tool_call_id`
    /// and extra keys (which become `additional_kwargs`), as LangChain's
    /// `convert_to_messages` does.
    pub fn coerce(v: &Value) -> Result<Message> {
        coerce(v)
    }
}

/// Converts one message-like value (see [`Message::coerce`]).
fn coerce(v: &Value) -> Result<Message> {
    match v {
        Value::Ext(_) => Message::from_value(v),
        Value::Str(s) => create("human", Value::from(s.as_str()), Map::new()),
        Value::List(pair) => match pair.as_slice() {
            [Value::Str(role), content] => create(role, content.clone(), Map::new()),
            [role, _] => Err(invalid(format!(
                "message role must be a string, got {role:?}"
            ))),
            _ => Err(invalid(
                "Message as a sequence must be (role string, template)".to_owned(),
            )),
        },
        Value::Map(m) => from_dict(m),
        other => Err(invalid(format!(
            "Unsupported message type: {}",
            python_type(other)
        ))),
    }
}

/// A dict: `role` (or `type`) and `content`, the rest as keyword arguments; or the
/// serialized-constructor envelope `{"lc": 1, "type": "constructor", "id": [...], "kwargs": {...}}`.
fn from_dict(m: &Map) -> Result<Message> {
    if let Some(inner) = envelope(m) {
        return from_dict(&inner);
    }
    let mut kw = m.clone();
    let role = match kw.remove("role") {
        Some(r) => Some(r),
        None => kw.remove("type"),
    };
    let content = kw.remove("content");
    let (Some(role), Some(content)) = (role, content) else {
        return Err(invalid(format!(
            "Message dict must contain 'role' and 'content' keys, got {m:?}"
        )));
    };
    let Value::Str(role) = role else {
        return Err(invalid(format!(
            "message role must be a string, got {role:?}"
        )));
    };
    let content = if truthy(&content) {
        content
    } else {
        Value::from("")
    };
    create(&role, content, kw)
}

/// The message-type dict inside a serialized-constructor envelope, if `m` is one.
fn envelope(m: &Map) -> Option<Map> {
    if m.get("lc") != Some(&Value::Int(1)) || m.get("type")?.as_str()? != "constructor" {
        return None;
    }
    let class = m.get("id")?.as_list()?.last()?.as_str()?;
    let kwargs = m.get("kwargs")?.as_map()?;
    let type_name = match class.strip_suffix("Chunk").unwrap_or(class) {
        "HumanMessage" => "human",
        "AIMessage" => "ai",
        "SystemMessage" => "system",
        "FunctionMessage" => "function",
        "ToolMessage" => "tool",
        "RemoveMessage" => "remove",
        _ => return None,
    };
    let mut inner = Map::with_capacity(kwargs.len() + 1);
    inner.insert("type", type_name);
    for (k, v) in kwargs.iter() {
        inner.insert(k.clone(), v.clone());
    }
    Some(inner)
}

/// Builds a message of type `role` from its content and keyword arguments: `name`, `id`,
/// `tool_call_id` and `tool_calls` are fields, `response_metadata` too when not empty,
/// and every other keyword goes to `additional_kwargs` (a nested `additional_kwargs`
/// dict is merged into it).
fn create(role: &str, content: Value, mut kw: Map) -> Result<Message> {
    if !matches!(content, Value::Str(_) | Value::List(_)) {
        return Err(invalid(format!(
            "message content must be a string or a list, got {content:?}"
        )));
    }
    let name = take_str(&mut kw, "name")?;
    let tool_call_id = take_str(&mut kw, "tool_call_id")?;
    let id = take_str(&mut kw, "id")?;
    let tool_calls = take_tool_calls(&mut kw)?;
    let (response_metadata, additional) = split_keywords(kw)?;
    let mut msg = Message::new(role_named(role)?, content);
    msg.name = name;
    msg.id = id;
    msg.response_metadata = response_metadata;
    let mut rest = Leftover {
        additional,
        tool_call_id: tool_call_id.map(Value::from),
        tool_calls,
        example: None,
    };
    take_role_fields(&mut msg, role, &mut rest)?;
    // Keyword arguments the class has no field for are kept as extra fields, in the
    // order LangChain passes them.
    msg.additional_kwargs = rest.additional;
    if let Some(v) = rest.tool_call_id {
        msg.extra.insert("tool_call_id", v);
    }
    if let Some(calls) = rest.tool_calls {
        let calls = calls.iter().map(ToolCall::to_value).collect::<Vec<_>>();
        msg.extra.insert("tool_calls", Value::List(calls.into()));
    }
    if let Some(v) = rest.example {
        msg.extra.insert("example", v);
    }
    Ok(msg)
}

/// The keywords of a message that its role's fields may take; what is left of them
/// after [`take_role_fields`] is stored as extra fields.
struct Leftover {
    additional: Map,
    tool_call_id: Option<Value>,
    tool_calls: Option<Vec<ToolCall>>,
    example: Option<Value>,
}

/// Removes `tool_calls`, a list of tool-call dicts (or `None`).
fn take_tool_calls(kw: &mut Map) -> Result<Option<Vec<ToolCall>>> {
    match kw.remove("tool_calls") {
        None | Some(Value::Nil) => Ok(None),
        Some(Value::List(calls)) => Ok(Some(
            calls
                .iter()
                .map(tool_call_from_dict)
                .collect::<Result<Vec<_>>>()?,
        )),
        Some(other) => Err(invalid(format!("tool_calls must be a list, got {other:?}"))),
    }
}

/// The rest of the keywords as `(response_metadata, additional_kwargs)`: a non-empty
/// `response_metadata` apart, a nested `additional_kwargs` merged into the others.
fn split_keywords(mut kw: Map) -> Result<(Map, Map)> {
    let mut response_metadata = Map::new();
    if kw.is_empty() {
        return Ok((response_metadata, kw));
    }
    if let Some(rm) = kw.remove("response_metadata") {
        if truthy(&rm) {
            response_metadata = super::map_field(&rm, "response_metadata")?;
        }
    }
    let nested = kw.remove("additional_kwargs");
    let mut additional = kw;
    if let Some(nested) = nested {
        for (k, v) in super::map_field(&nested, "additional_kwargs")? {
            additional.insert(k, v);
        }
    }
    Ok((response_metadata, additional))
}

/// The role a dict or a pair names.
fn role_named(role: &str) -> Result<Role> {
    Ok(match role {
        "human" | "user" => Role::Human,
        "ai" | "assistant" => Role::Ai,
        "system" | "developer" => Role::System,
        "function" => Role::Function,
        "tool" => Role::Tool,
        "remove" => Role::Remove,
        other => {
            return Err(invalid(format!(
                "Unexpected message type: '{other}'. Use one of {ROLES}."
            )))
        }
    })
}

/// Moves what the message's role has fields for out of `rest` into `msg` (an AI
/// message's tool calls, a tool message's call id, status and artifact, ...), and checks
/// what the role requires.
fn take_role_fields(msg: &mut Message, role: &str, rest: &mut Leftover) -> Result<()> {
    match msg.role {
        Role::Human | Role::Ai => {
            rest.example = rest.additional.remove("example").filter(truthy);
            if msg.role == Role::Ai {
                msg.tool_calls = rest.tool_calls.take().unwrap_or_default();
            }
        }
        Role::System if role == "developer" => {
            rest.additional.insert("__openai_role__", "developer");
        }
        Role::Tool => {
            msg.artifact = rest.additional.remove("artifact").unwrap_or_default();
            match rest.additional.remove("status") {
                None | Some(Value::Nil) => {}
                Some(Value::Str(s)) if s == "success" || s == "error" => msg.status = s.to_string(),
                Some(other) => {
                    return Err(invalid(format!(
                        "a tool message status must be 'success' or 'error', got {other:?}"
                    )))
                }
            }
            match rest.tool_call_id.take() {
                Some(Value::Str(s)) => msg.tool_call_id = Some(s.to_string()),
                _ => return Err(invalid("a tool message needs a 'tool_call_id'".to_owned())),
            }
        }
        Role::Function if msg.name.is_none() => {
            return Err(invalid("a function message needs a 'name'".to_owned()));
        }
        Role::Remove => {
            msg.content = Value::from("");
            if msg.id.is_none() {
                return Err(invalid("a remove message needs an 'id'".to_owned()));
            }
        }
        _ => {}
    }
    Ok(())
}

/// Removes a keyword that must be a string or `None`.
fn take_str(kw: &mut Map, key: &str) -> Result<Option<String>> {
    match kw.remove(key) {
        None | Some(Value::Nil) => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s.to_string())),
        Some(other) => Err(invalid(format!(
            "message field {key:?} must be a string, got {other:?}"
        ))),
    }
}

/// A tool call given as a dict: LangChain's `{name, args, id}` or OpenAI's
/// `{id, type: "function", function: {name, arguments}}` (arguments as a JSON string).
fn tool_call_from_dict(v: &Value) -> Result<ToolCall> {
    let Some(function) = v.get("function") else {
        return ToolCall::from_value(v);
    };
    let f = function.as_map().ok_or_else(|| {
        invalid(format!(
            "a tool call function must be a dict, got {function:?}"
        ))
    })?;
    let args = match f.get("arguments") {
        Some(Value::Str(json)) => parse_json(json)?,
        Some(other) => other.clone(),
        None => return Err(invalid("a tool call function needs 'arguments'".to_owned())),
    };
    let m = v
        .as_map()
        .ok_or_else(|| invalid(format!("a tool call must be a dict, got {v:?}")))?;
    Ok(ToolCall {
        name: super::required_str(f, "name", "tool call function")?,
        args,
        id: super::optional_str(m, "id")?,
    })
}

/// Parses JSON tool-call arguments into a value (object key order kept).
fn parse_json(json: &str) -> Result<Value> {
    let parsed: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| invalid(format!("tool call arguments are not valid JSON: {e}")))?;
    to_value(&parsed).map_err(|e| invalid(format!("tool call arguments: {e}")))
}

/// Python's truthiness of a value.
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Nil => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::UInt(_) | Value::Ext(_) => true,
        Value::Float(x) => *x != 0.0,
        Value::Str(s) => !s.is_empty(),
        Value::Bytes(b) => !b.is_empty(),
        Value::List(l) => !l.is_empty(),
        Value::Map(m) => !m.is_empty(),
    }
}

/// The Python type name of a value, for error messages (here and in the reducers'
/// `TypeError` texts).
pub(crate) fn python_type(v: &Value) -> &str {
    match v {
        Value::Nil => "NoneType",
        Value::Bool(_) => "bool",
        Value::Int(_) | Value::UInt(_) => "int",
        Value::Float(_) => "float",
        Value::Str(_) => "str",
        Value::Bytes(_) => "bytes",
        Value::List(_) => "list",
        Value::Map(_) => "dict",
        Value::Ext(e) => match e.as_ref() {
            stategraph_checkpoint::Ext::Object(o) => &o.class,
            stategraph_checkpoint::Ext::NumpyArray(_) => "ndarray",
            stategraph_checkpoint::Ext::DeltaSnapshot(_) => "_DeltaSnapshot",
        },
    }
}
