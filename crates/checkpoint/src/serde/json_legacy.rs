//! Reading the legacy `json` tag (docs/format.md#value-encoding): JSON, with LangChain constructor
//! envelopes
//! revived exactly as far as Python's reader revives them, and never further.
//!
//! Before msgpack, LangGraph stored values as JSON where Python objects were envelopes
//! `{"lc": 1 | 2, "type": "constructor" | "secret" | "not_implemented", "id": [...],
//! "args"?, "kwargs"?}`. Python reads them with `json.loads(bytes, object_hook=reviver)`,
//! the reviver being LangGraph's `JsonPlusSerializer._reviver` in front of LangChain's
//! `Reviver(allowed_objects="core")`. This reader applies the same rules, object by object,
//! bottom-up, and never imports or runs anything. Where Python constructs an object, it
//! builds the [`Value`] that the object encodes to, so that a value read here and stored
//! again in msgpack is read by Python as Python reads the original. **What Python refuses
//! is refused here**, with [`Error::Refused`] naming the path of the envelope inside the
//! value; what Python leaves a plain dict stays a plain map.
//!
//! The rule, as in the pinned LangGraph (1.2.24, langchain-core 1.8.3):
//!
//! * `lc == 2` constructor of a type in LangGraph's safe list (`SAFE_MSGPACK_TYPES`):
//!   revived (a LangChain message or `Document` as a pydantic v2 object, `UUID`, `date`,
//!   `set`, `Send`, ... as the extension Python writes for them); where Python's
//!   constructor would fail, `None`, as in Python. Any other `lc == 2` envelope stays a map
//!   (Python has no `allowed_json_modules` by default). An `id` Python cannot even test
//!   (numbers, non-string module parts) is refused, as Python raises.
//! * `lc == 1` `secret`: `None` (the environment is never read); `not_implemented`:
//!   refused; `constructor`: only the ids of LangChain's `"core"` allowlist
//!   (a table generated from the pinned langchain-core by `scripts/gen_lc_allowlist.py`), and
//!   only messages and `Document` among them (their fields checked as pydantic checks
//!   them); every other id -- `FileCallbackHandler`, partner classes, ids outside the
//!   `langchain*` namespaces -- is refused. Allowlisted classes that are not messages or
//!   documents (prompts, runnables, ...) are refused too: Python would construct them,
//!   but their validation is not modelled here, so refusing is the side that never widens.
//! * `lc` compares as Python's `==` does (`true` and `1.0` equal `1`); a `template_format`
//!   of `"jinja2"` is refused; JSON follows Python's grammar ([`json_text`]).
//!
//! Values that Python reads but this reader refuses (never the reverse): the allowlisted
//! non-message classes above, the safe `BaseMessage`/`BaseMessageChunk`, `datetime`
//! constructors with arguments, `lc == 2` envelopes with both `args` and `kwargs`, integers
//! beyond 64 bits, lone surrogates, nesting beyond 512 levels.

use crate::error::{Error, Result};
use crate::ext::ObjectCode;
use crate::serde::json_text::{self, JsonOptions, Refusal};
use crate::serde::lc_allowlist::LC_CORE;
use crate::value::{Map, Value};

/// LangGraph's safe types (`SAFE_MSGPACK_TYPES`) other than messages and `Document`, with
/// the extension code Python writes for each.
const SAFE_TYPES: &[(&str, &str, ObjectCode)] = {
    use ObjectCode::{
        ConstructorKwArgs as Kw, ConstructorPosArgs as Pos, ConstructorSingleArg as One,
    };
    &[
        ("datetime", "date", Pos),
        ("datetime", "time", Kw),
        ("datetime", "timedelta", Pos),
        ("datetime", "timezone", Pos),
        ("uuid", "UUID", One),
        ("decimal", "Decimal", One),
        ("builtins", "set", One),
        ("builtins", "frozenset", One),
        ("collections", "deque", One),
        ("ipaddress", "IPv4Address", One),
        ("ipaddress", "IPv4Interface", One),
        ("ipaddress", "IPv4Network", One),
        ("ipaddress", "IPv6Address", One),
        ("ipaddress", "IPv6Interface", One),
        ("ipaddress", "IPv6Network", One),
        ("pathlib", "Path", Pos),
        ("pathlib", "PosixPath", Pos),
        ("pathlib", "WindowsPath", Pos),
        ("zoneinfo", "ZoneInfo", One),
        ("re", "compile", Pos),
        ("langgraph.types", "Send", Pos),
        ("langgraph.types", "TimeoutPolicy", Kw),
        ("langgraph.types", "Interrupt", Kw),
        ("langgraph.types", "Command", Kw),
        ("langgraph.types", "StateSnapshot", Kw),
        ("langgraph.types", "PregelTask", Kw),
        ("langgraph.types", "Overwrite", Kw),
        ("langgraph.store.base", "Item", Kw),
        ("langgraph.store.base", "GetOp", Kw),
    ]
};

/// Safe types whose construction fails under the pinned Python 3.11 on Linux, so that
/// Python's reader gives `None`: `pathlib._local` is new in 3.13, `WindowsPath` cannot be
/// instantiated on POSIX.
const SAFE_BUT_FAILING: &[(&str, &str)] = &[
    ("pathlib._local", "Path"),
    ("pathlib._local", "PosixPath"),
    ("pathlib._local", "WindowsPath"),
    ("pathlib", "WindowsPath"),
];

/// Safe types this reader does not model: Python constructs them, this reader refuses.
const SAFE_UNMODELLED: &[(&str, &str)] = &[
    ("datetime", "datetime"),
    ("langchain_core.messages.base", "BaseMessage"),
    ("langchain_core.messages.base", "BaseMessageChunk"),
];

/// The module of LangChain's `Document`.
const DOCUMENT_MODULE: &str = "langchain_core.documents.base";

/// Reads legacy JSON bytes into a value.
pub fn loads(bytes: &[u8]) -> Result<Value> {
    json_text::parse_with(bytes, &JsonOptions::default(), &mut revive).map_err(|e| match e {
        Error::Decode(why) => Error::Decode(format!("invalid legacy JSON: {why}")),
        other => other,
    })
}

/// Python's `==` between a JSON value and a small integer (`True == 1`, `1.0 == 1`).
fn py_eq_int(v: Option<&Value>, n: i64) -> bool {
    match v {
        Some(Value::Int(i)) => *i == n,
        Some(Value::Bool(b)) => i64::from(*b) == n,
        Some(Value::Float(x)) => *x == n as f64,
        _ => false,
    }
}

/// Python's object hook: the envelope's replacement, the map itself, or a refusal.
fn revive(map: Map) -> Result<Value, Refusal> {
    let lc = map.get("lc");
    let kind = map.get("type").and_then(Value::as_str);
    let id = map.get("id").filter(|v| !v.is_nil());
    let (Some(kind), Some(id)) = (kind, id) else {
        return Ok(Value::Map(map));
    };
    if py_eq_int(lc, 2) && kind == "constructor" {
        if let Some((module, class)) = safe_lc2_id(id)? {
            return revive_lc2(&map, &module, class);
        }
        return Ok(Value::Map(map));
    }
    if !py_eq_int(lc, 1) {
        return Ok(Value::Map(map));
    }
    match kind {
        "secret" => secret(id).map(|()| Value::Nil),
        "not_implemented" => Err(Refusal::new(
            "an object LangChain could not serialize (`not_implemented`); Python raises",
        )),
        "constructor" => revive_lc1(&map, id),
        _ => Ok(Value::Map(map)),
    }
}

/// `_is_safe_json_type`: `Some((module, class))` of a safe id, `None` for an id that is not
/// safe, a refusal where Python's test itself raises (`len()` of a number, joining
/// non-strings, hashing a list).
fn safe_lc2_id(id: &Value) -> Result<Option<(String, &str)>, Refusal> {
    let refuse = || Refusal::new("an `lc: 2` id Python cannot read (it raises TypeError)");
    match id {
        Value::List(parts) if parts.len() >= 2 => {
            let (last, path) = parts.split_last().ok_or_else(refuse)?;
            let path: Option<Vec<&str>> = path.iter().map(Value::as_str).collect();
            let path = path.ok_or_else(refuse)?;
            match last {
                Value::List(_) | Value::Map(_) => Err(refuse()),
                Value::Str(class) => {
                    let module = path.join(".");
                    let safe = SAFE_TYPES
                        .iter()
                        .map(|(m, c, _)| (*m, *c))
                        .chain(SAFE_BUT_FAILING.iter().copied())
                        .chain(SAFE_UNMODELLED.iter().copied())
                        .any(|(m, c)| m == module && c == class)
                        || lc2_pydantic(&module, class).is_some();
                    Ok(safe.then_some((module, class.as_str())))
                }
                _ => Ok(None),
            }
        }
        Value::Map(m) if m.len() >= 2 => Err(refuse()),
        Value::List(_) | Value::Map(_) | Value::Str(_) => Ok(None),
        _ => Err(refuse()),
    }
}

/// `Some(true)` for a safe message class, `Some(false)` for `Document`.
fn lc2_pydantic(module: &str, class: &str) -> Option<bool> {
    if (module, class) == (DOCUMENT_MODULE, "Document") {
        return Some(false);
    }
    let built = Value::message(class, Map::new())?;
    let (m, _, _) = built.as_pydantic_v2()?;
    (m == module).then_some(true)
}

/// A safe `lc: 2` envelope: what `cls(*args, **kwargs)` gives, `None` where it raises.
fn revive_lc2(map: &Map, module: &str, class: &str) -> Result<Value, Refusal> {
    let unsupported = || {
        Refusal::new(format!(
            "`lc: 2` {module}.{class}: Python constructs it, stategraph does not model its \
             arguments and refuses it rather than guess"
        ))
    };
    // Python tests truthiness: empty lists and maps count as absent.
    let args = map.get("args").filter(|v| truthy(v));
    let kwargs = map.get("kwargs").filter(|v| truthy(v));
    if (module, class) == ("datetime", "datetime") {
        // `datetime(isoformat_string)`, the old envelope (its `method` ignored), raises.
        if let (Some(Value::List(args)), None) = (args, kwargs) {
            if args
                .iter()
                .any(|a| !matches!(a, Value::Int(_) | Value::Bool(_)))
            {
                return Ok(Value::Nil);
            }
        }
    }
    if SAFE_UNMODELLED.contains(&(module, class)) {
        return Err(unsupported());
    }
    if SAFE_BUT_FAILING.contains(&(module, class)) {
        return Ok(Value::Nil);
    }
    if let Some(is_message) = lc2_pydantic(module, class) {
        let args: &[Value] = match args {
            None => &[],
            Some(Value::List(l)) => l,
            Some(_) => return Err(unsupported()),
        };
        let mut fields = match kwargs {
            None => Map::new(),
            Some(Value::Map(m)) => m.clone(),
            Some(_) => return Ok(Value::Nil),
        };
        let first = match (is_message, class) {
            (false, _) => "page_content",
            (true, "RemoveMessage") => "id",
            (true, _) => "content",
        };
        match args {
            [] => {}
            [arg] if fields.get(first).is_none() => {
                fields.push_unique(first, arg.clone());
            }
            _ => return Ok(Value::Nil),
        }
        let built = if is_message {
            message(class, fields)
        } else {
            document(fields)
        };
        return Ok(built.unwrap_or(Value::Nil));
    }
    let Some(&(_, _, code)) = SAFE_TYPES
        .iter()
        .find(|(m, c, _)| *m == module && *c == class)
    else {
        return Err(unsupported());
    };
    let data = match (args, kwargs) {
        (Some(_), Some(_)) => return Err(unsupported()),
        (Some(Value::List(args)), None) => {
            if !args_construct(module, class, args) {
                return Ok(Value::Nil);
            }
            match args.as_slice() {
                [arg] if code == ObjectCode::ConstructorSingleArg => {
                    return Ok(Value::object(code, module, class, arg.clone(), None));
                }
                _ => {
                    let code = ObjectCode::ConstructorPosArgs;
                    return Ok(Value::object(
                        code,
                        module,
                        class,
                        args.clone().into(),
                        None,
                    ));
                }
            }
        }
        // `cls(*args)` of a string or map unpacks it: not modelled.
        (Some(_), None) => return Err(unsupported()),
        (None, Some(Value::Map(kwargs))) => Value::Map(kwargs.clone()),
        (None, Some(_)) => return Ok(Value::Nil),
        (None, None) => Value::Map(Map::new()),
    };
    if (module, class) == ("langgraph.types", "Send") {
        // `Send(node, arg)`: stored positionally, as Python stores a `Send`.
        let fields = data.as_map().cloned().unwrap_or_default();
        let node = fields.get("node").and_then(Value::as_str);
        return match (node, fields.get("arg"), fields.len()) {
            (Some(node), Some(arg), 2) => Ok(Value::send(node, arg.clone())),
            _ => Err(unsupported()),
        };
    }
    Ok(Value::object(
        ObjectCode::ConstructorKwArgs,
        module,
        class,
        data,
        None,
    ))
}

/// Python truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
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
fn args_construct(module: &str, class: &str, args: &[Value]) -> bool {
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

/// `secret`: `[key] = id`, the key hashable; Python then returns `None`.
fn secret(id: &Value) -> Result<(), Refusal> {
    let ok = match id {
        Value::Str(s) => s.chars().count() == 1,
        Value::List(items) => matches!(
            items.as_slice(),
            [Value::Nil
                | Value::Bool(_)
                | Value::Int(_)
                | Value::UInt(_)
                | Value::Float(_)
                | Value::Str(_)]
        ),
        Value::Map(m) => m.len() == 1,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Refusal::new(
            "a `secret` whose id is not a single hashable key; Python raises",
        ))
    }
}

/// An `lc: 1` constructor: revived only for the `"core"` allowlist's messages and
/// `Document`, refused otherwise.
fn revive_lc1(map: &Map, id: &Value) -> Result<Value, Refusal> {
    let parts: Vec<&str> = match id {
        Value::List(items) => items.iter().map(|v| v.as_str().unwrap_or("\0")).collect(),
        // `tuple(dict)` is its keys.
        Value::Map(m) => m.iter().map(|(k, _)| k.as_str().unwrap_or("\0")).collect(),
        _ => Vec::new(),
    };
    let Some(&(_, module, class)) = LC_CORE.iter().find(|(key, _, _)| *key == parts.as_slice())
    else {
        return Err(Refusal::new(format!(
            "`lc: 1` constructor {}: not in LangChain's \"core\" allowlist, which Python's \
             reader enforces",
            describe(id)
        )));
    };
    let kwargs = match map.get("kwargs") {
        None => Map::new(),
        Some(Value::Map(m)) => m.clone(),
        Some(_) => {
            return Err(Refusal::new(format!(
                "`lc: 1` {module}.{class}: kwargs is not an object; Python raises"
            )))
        }
    };
    if kwargs.get("template_format").and_then(Value::as_str) == Some("jinja2") {
        return Err(Refusal::new(
            "a jinja2 template_format, which Python's reader refuses",
        ));
    }
    let built = if module == DOCUMENT_MODULE && class == "Document" {
        document(kwargs)
    } else if lc2_pydantic(module, class) == Some(true) {
        message(class, kwargs)
    } else {
        return Err(Refusal::new(format!(
            "`lc: 1` {module}.{class}: Python constructs it, stategraph revives only \
             LangChain messages and documents and refuses it rather than guess"
        )));
    };
    built.map_err(|why| Refusal::new(format!("`lc: 1` {module}.{class}: {why}; Python raises")))
}

/// An id for an error message.
fn describe(id: &Value) -> String {
    match id {
        Value::List(items) => items
            .iter()
            .map(|v| match v {
                Value::Str(s) => s.to_string(),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join("."),
        other => format!("{other:?}"),
    }
}

/// A message as `cls(**fields)` builds it, or why pydantic would refuse the fields.
fn message(class: &str, mut fields: Map) -> Result<Value, String> {
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
fn document(mut fields: Map) -> Result<Value, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Value> {
        loads(text.as_bytes())
    }

    fn refused_at(text: &str) -> String {
        match load(text) {
            Err(Error::Refused { path, .. }) => path,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn a_callback_handler_is_refused_with_its_path() {
        let text = r#"{"state": [1, {"lc": 1, "type": "constructor",
            "id": ["langchain_core", "callbacks", "file", "FileCallbackHandler"],
            "kwargs": {"filename": "/tmp/x"}}]}"#;
        assert_eq!(refused_at(text), "$.state[1]");
        let other = r#"{"lc": 1, "type": "constructor", "id": ["os", "system"]}"#;
        assert_eq!(refused_at(other), "$");
        let jinja = r#"{"lc": 1, "type": "constructor",
            "id": ["langchain_core", "messages", "HumanMessage"],
            "kwargs": {"content": "x", "template_format": "jinja2"}}"#;
        assert_eq!(refused_at(jinja), "$");
    }

    #[test]
    fn messages_revive_under_legacy_ids_and_invalid_fields_are_refused() {
        let v = load(
            r#"{"lc": true, "type": "constructor",
            "id": ["langchain", "schema", "messages", "HumanMessage"],
            "kwargs": {"content": "hi"}}"#,
        )
        .unwrap();
        let (class, fields) = v.as_message().unwrap();
        assert_eq!(class, "HumanMessage");
        assert_eq!(fields.get("content"), Some(&Value::from("hi")));
        for bad in [
            r#"{"content": 5}"#,
            r#"{}"#,
            r#"{"content": "a", "type": "ai"}"#,
            r#"{"content": "a", "name": 5}"#,
        ] {
            let text = format!(
                r#"{{"lc": 1, "type": "constructor",
                "id": ["langchain_core", "messages", "HumanMessage"], "kwargs": {bad}}}"#
            );
            assert_eq!(refused_at(&text), "$", "{bad}");
        }
    }

    #[test]
    fn lc2_follows_the_safe_list() {
        let uuid = load(
            r#"{"lc": 2, "type": "constructor", "id": ["uuid", "UUID"],
            "args": ["12345678123456781234567812345678"]}"#,
        )
        .unwrap();
        assert!(uuid.as_object().is_some());
        let bad_uuid =
            load(r#"{"lc": 2, "type": "constructor", "id": ["uuid", "UUID"], "args": ["zz"]}"#);
        assert_eq!(bad_uuid.unwrap(), Value::Nil);
        let unsafe_msg = load(
            r#"{"lc": 2, "type": "constructor",
            "id": ["langchain_core", "messages", "HumanMessage"], "kwargs": {"content": "x"}}"#,
        )
        .unwrap();
        assert!(unsafe_msg.as_map().is_some(), "not a safe id: stays a map");
        let os = load(r#"{"lc": 2, "type": "constructor", "id": ["os", "system"]}"#).unwrap();
        assert!(os.as_map().is_some());
        assert!(matches!(
            load(r#"{"lc": 2, "type": "constructor", "id": [1, "x"]}"#),
            Err(Error::Refused { .. })
        ));
    }

    #[test]
    fn secrets_read_as_none_and_not_implemented_is_refused() {
        let v = load(r#"[{"lc": 1, "type": "secret", "id": ["OPENAI_API_KEY"]}]"#).unwrap();
        assert_eq!(v, Value::from(vec![Value::Nil]));
        assert_eq!(
            refused_at(r#"[{"lc": 1, "type": "secret", "id": ["A", "B"]}]"#),
            "$[0]"
        );
        assert_eq!(
            refused_at(r#"{"x": {"lc": 1, "type": "not_implemented", "id": ["a"]}}"#),
            "$.x"
        );
    }
}
