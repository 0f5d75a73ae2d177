//! What Python's constructors accept and build, for the objects the legacy `json` reader
//! revives ([`super::json_legacy`]): LangChain messages and `Document` as pydantic checks
//! their fields, and the arguments of the safe types whose constructors can fail.

use crate::value::{Map, Value};

/// The module of LangChain's `Document`.
pub(crate) const DOCUMENT_MODULE: &str = "langchain_core.documents.base";

/// Python truthiness of a JSON value.
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Nil => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::UInt(_) => true,
        Value::Float(x) => *x != 0.0,
        Value::Str(s) => !s.is_empty(),
        Value::Bytes(b) => !b.is_empty(),
        Value::List(l) => !l.is_empty(),
        Value::Map(m) => !m.is_empty(),
        Value::Ext(_) => true,
    }
}

/// Whether `cls(*args)` succeeds, for the safe types whose arguments are checked here;
/// other types are assumed to construct.
pub(crate) fn args_construct(module: &str, class: &str, args: &[Value]) -> bool {
    match (module, class, args) {
        ("uuid", "UUID", [Value::Str(s)]) => is_uuid_text(s),
        ("uuid", "UUID", _) => false,
        ("builtins", "set" | "frozenset", [Value::List(items)]) => items
            .iter()
            .all(|i| !matches!(i, Value::List(_) | Value::Map(_))),
        ("builtins", "set" | "frozenset", [Value::Str(_) | Value::Map(_)]) => true,
        ("builtins", "set" | "frozenset", _) => false,
        ("collections", "deque", [Value::List(_) | Value::Str(_) | Value::Map(_)]) => true,
        ("collections", "deque", _) => false,
        ("datetime", "date", [y, m, d]) => match (y.as_i64(), m.as_i64(), d.as_i64()) {
            (Some(y), Some(m), Some(d)) => is_date(y, m, d),
            _ => false,
        },
        ("datetime", "date", _) => false,
        ("langgraph.types", "Send", _) => args.len() == 2,
        _ => true,
    }
}

/// `uuid.UUID(hex)`: braces and `urn:uuid:` stripped, dashes removed, 32 hex digits.
fn is_uuid_text(s: &str) -> bool {
    let s = s.replace("urn:", "").replace("uuid:", "");
    let s = s.trim_matches(|c| c == '{' || c == '}').replace('-', "");
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `datetime.date(y, m, d)` is a real date.
fn is_date(y: i64, m: i64, d: i64) -> bool {
    if !(1..=9999).contains(&y) || !(1..=12).contains(&m) || d < 1 {
        return false;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    d <= days
}

/// A message as `cls(**fields)` builds it, or why pydantic would refuse the fields.
pub(crate) fn message(class: &str, mut fields: Map) -> Result<Value, String> {
    let need_str = |fields: &Map, key: &str, optional: bool| -> Result<(), String> {
        match fields.get(key) {
            Some(Value::Str(_)) => Ok(()),
            Some(Value::Nil) | None if optional => Ok(()),
            None => Err(format!("field {key} missing")),
            Some(_) => Err(format!("field {key} is not a string")),
        }
    };
    let coerced_str = |fields: &Map, key: &str, optional: bool| -> Result<(), String> {
        match fields.get(key) {
            Some(Value::Str(_) | Value::Int(_) | Value::UInt(_) | Value::Float(_)) => Ok(()),
            Some(Value::Nil) | None if optional => Ok(()),
            None => Err(format!("field {key} missing")),
            Some(_) => Err(format!("field {key} is not a string")),
        }
    };
    if class == "RemoveMessage" {
        coerced_str(&fields, "id", false)?;
        if fields.remove("content").is_some_and(|c| truthy(&c)) {
            return Err("RemoveMessage does not take content".into());
        }
    } else {
        match fields.get("content") {
            Some(Value::Str(_)) => {}
            Some(Value::List(items))
                if items
                    .iter()
                    .all(|i| matches!(i, Value::Str(_) | Value::Map(_))) => {}
            None => return Err("field content missing".into()),
            Some(_) => return Err("field content is not a string or a list".into()),
        }
        coerced_str(&fields, "id", true)?;
    }
    for key in ["additional_kwargs", "response_metadata"] {
        if fields.get(key).is_some_and(|v| v.as_map().is_none()) {
            return Err(format!("field {key} is not an object"));
        }
    }
    need_str(
        &fields,
        "name",
        !matches!(class, "FunctionMessage" | "FunctionMessageChunk"),
    )?;
    match class {
        "ToolMessage" | "ToolMessageChunk" => {
            coerced_str(&fields, "tool_call_id", false)?;
            if let Some(status) = fields.get("status") {
                if !matches!(status.as_str(), Some("success" | "error")) {
                    return Err("field status is not \"success\" or \"error\"".into());
                }
            }
        }
        "ChatMessage" | "ChatMessageChunk" => need_str(&fields, "role", false)?,
        "AIMessage" | "AIMessageChunk" => {
            for key in ["tool_calls", "invalid_tool_calls"] {
                match fields.get(key) {
                    None => {}
                    Some(Value::List(calls)) if calls.iter().all(|c| c.as_map().is_some()) => {}
                    Some(_) => return Err(format!("field {key} is not a list of objects")),
                }
            }
            if fields
                .get("usage_metadata")
                .is_some_and(|v| !v.is_nil() && v.as_map().is_none())
            {
                return Err("field usage_metadata is not an object".into());
            }
        }
        _ => {}
    }
    let given_type = fields.remove("type");
    let built = Value::message(class, fields).ok_or("not a LangChain message class")?;
    if let Some(given) = given_type {
        let (_, _, dumped) = built.as_pydantic_v2().ok_or("not a pydantic object")?;
        if dumped.get("type") != Some(&given) {
            return Err("field type does not name this class".into());
        }
    }
    Ok(built)
}

/// A `Document` as `Document(**fields)` builds it, fields in `model_dump()` order.
pub(crate) fn document(mut fields: Map) -> Result<Value, String> {
    let page_content = match fields.remove("page_content") {
        Some(Value::Str(s)) => s,
        Some(_) => return Err("field page_content is not a string".into()),
        None => return Err("field page_content missing".into()),
    };
    let id = fields.remove("id").unwrap_or_default();
    if !matches!(
        id,
        Value::Nil | Value::Str(_) | Value::Int(_) | Value::UInt(_) | Value::Float(_)
    ) {
        return Err("field id is not a string".into());
    }
    let metadata = fields.remove("metadata").unwrap_or(Value::Map(Map::new()));
    if metadata.as_map().is_none() {
        return Err("field metadata is not an object".into());
    }
    let kind = fields.remove("type").unwrap_or("Document".into());
    if kind.as_str() != Some("Document") {
        return Err("field type is not \"Document\"".into());
    }
    let mut doc = Map::with_capacity(4 + fields.len());
    doc.push_unique("id", id);
    doc.push_unique("metadata", metadata);
    doc.push_unique("page_content", page_content);
    doc.push_unique("type", kind);
    for (k, v) in fields {
        doc.push_unique(k, v);
    }
    Ok(Value::pydantic_v2(DOCUMENT_MODULE, "Document", doc))
}
