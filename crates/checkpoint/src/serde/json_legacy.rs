//! Reading the legacy `json` tag (spec §9.5): JSON, with LangChain constructor envelopes
//! turned into inert extension objects.
//!
//! Before msgpack, LangGraph stored values as JSON where Python objects were envelopes
//! `{"lc": 1 | 2, "type": "constructor", "id": [*module, class], "args"?, "kwargs"?}`.
//! Python revives them by importing and calling the class; this reader never does. It
//! builds the [`Value`] that Python's revived object would encode to, so that a value read
//! here and written again gives Python's msgpack bytes:
//!
//! * Plain JSON maps to plain values (integers canonical, object key order kept).
//! * `lc: 2` envelopes of a type in LangGraph's safe list become the extension Python
//!   writes for that type: LangChain messages a pydantic v2 object with every field in
//!   `model_dump()` order ([`Value::message`]), `Document` likewise, `set`/`UUID`/
//!   `Decimal`/... a single-argument object, `date`/`timedelta`/`Path`/... a
//!   positional-argument object, `Send` a `Send`, the rest (`time`, `Interrupt`, store
//!   items, ...) a keyword-argument object. Other `lc: 2` envelopes stay plain maps, as
//!   in Python without `allowed_json_modules`. As in Python, the `method` field is
//!   ignored, so the old `datetime` envelope (`datetime(isoformat_string)`) revives to
//!   `None`.
//! * `lc: 1` envelopes (LangChain's own): messages and `Document` as above, other
//!   `langchain*` classes a pydantic v2 object with the kwargs as given (their defaults
//!   are not known here), `secret` to `None` (the environment is never read),
//!   `not_implemented` and foreign namespaces to [`Error::InvalidData`] (Python raises).
//!
//! JSON nesting is limited by `serde_json` (128 levels); `NaN`/`Infinity` are refused.

use crate::error::{Error, Result};
use crate::ext::ObjectCode;
use crate::value::{Map, Value};

/// LangGraph's safe types (`SAFE_MSGPACK_TYPES`), revived from `lc: 2` envelopes, with the
/// extension code Python writes for each.
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
        ("pathlib._local", "Path", Pos),
        ("pathlib._local", "PosixPath", Pos),
        ("pathlib._local", "WindowsPath", Pos),
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

/// Namespaces LangChain's reviver accepts for `lc: 1` envelopes.
const LC_NAMESPACES: &[&str] = &["langchain", "langchain_core", "langchain_community"];

/// Reads legacy JSON bytes into a value.
pub fn loads(bytes: &[u8]) -> Result<Value> {
    let json: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| Error::Decode(format!("invalid legacy JSON: {e}")))?;
    convert(json)
}

/// Converts a JSON value bottom-up (as Python's `object_hook` runs).
fn convert(json: serde_json::Value) -> Result<Value> {
    use serde_json::Value as J;
    Ok(match json {
        J::Null => Value::Nil,
        J::Bool(b) => Value::Bool(b),
        J::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::Int(i),
            (None, Some(u), _) => Value::UInt(u),
            (None, None, Some(x)) => Value::Float(x),
            _ => return Err(Error::Decode(format!("unrepresentable JSON number {n}"))),
        },
        J::String(s) => Value::Str(s.into()),
        J::Array(items) => Value::List(items.into_iter().map(convert).collect::<Result<_>>()?),
        J::Object(entries) => {
            let mut map = Map::with_capacity(entries.len());
            for (k, v) in entries {
                map.insert(k, convert(v)?);
            }
            revive(map)?
        }
    })
}

/// Turns a constructor envelope into the value Python would revive; other maps pass.
fn revive(map: Map) -> Result<Value> {
    let lc = map.get("lc").and_then(Value::as_i64);
    let kind = map.get("type").and_then(Value::as_str);
    let id: Option<Vec<&str>> = map
        .get("id")
        .and_then(Value::as_list)
        .and_then(|ids| ids.iter().map(Value::as_str).collect());
    let revived = match (lc, kind, id) {
        (Some(2), Some("constructor"), Some(id)) if id.len() >= 2 => revive_lc2(&map, &id)?,
        (Some(1), Some("secret"), Some(_)) => Some(Value::Nil),
        (Some(1), Some("not_implemented"), Some(_)) => {
            return Err(Error::InvalidData(
                "legacy JSON holds an object LangChain could not serialize".into(),
            ))
        }
        (Some(1), Some("constructor"), Some(id)) if id.len() >= 2 => Some(revive_lc1(&map, &id)?),
        _ => None,
    };
    Ok(revived.unwrap_or(Value::Map(map)))
}

/// An `lc: 2` envelope of a safe type, or `None` to keep the map.
fn revive_lc2(map: &Map, id: &[&str]) -> Result<Option<Value>> {
    let (class, path) = split(id);
    let module = path.join(".");
    let args = non_empty_list(map.get("args"));
    let kwargs = non_empty_map(map.get("kwargs"));
    if let Some(message) = pydantic(&module, class, kwargs) {
        return Ok(Some(message));
    }
    if (module.as_str(), class) == ("datetime", "datetime") {
        return Ok(Some(Value::Nil));
    }
    let Some(&(_, _, code)) = SAFE_TYPES
        .iter()
        .find(|(m, c, _)| *m == module && *c == class)
    else {
        return Ok(None);
    };
    let data = match (args, kwargs) {
        (Some(_), Some(_)) => {
            return Err(Error::InvalidData(format!(
                "legacy JSON constructor {module}.{class} with both args and kwargs"
            )))
        }
        (Some(args), None) if code == ObjectCode::ConstructorSingleArg => match args {
            [arg] => arg.clone(),
            _ => return Ok(Some(Value::Nil)),
        },
        (Some(args), None) => Value::List(args.to_vec().into()),
        (None, Some(kwargs)) if (module.as_str(), class) == ("langgraph.types", "Send") => {
            let node = kwargs
                .get("node")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Ok(Some(Value::send(
                node,
                kwargs.get("arg").cloned().unwrap_or_default(),
            )));
        }
        (None, Some(kwargs)) => Value::Map(kwargs.clone()),
        (None, None) => Value::Map(Map::new()),
    };
    Ok(Some(Value::object(code, &module, class, data, None)))
}

/// An `lc: 1` envelope: a LangChain serializable object.
fn revive_lc1(map: &Map, id: &[&str]) -> Result<Value> {
    let (class, path) = split(id);
    if !path.first().is_some_and(|ns| LC_NAMESPACES.contains(ns)) || path == ["langchain"] {
        return Err(Error::InvalidData(format!(
            "legacy JSON object {} is outside LangChain's namespaces",
            id.join(".")
        )));
    }
    let kwargs = non_empty_map(map.get("kwargs"));
    let module = path.join(".");
    Ok(pydantic(&module, class, kwargs)
        .unwrap_or_else(|| Value::pydantic_v2(&module, class, kwargs.cloned().unwrap_or_default())))
}

/// A LangChain message or `Document`, normalised as `model_dump()` writes it.
fn pydantic(module: &str, class: &str, kwargs: Option<&Map>) -> Option<Value> {
    if !module.starts_with("langchain") {
        return None;
    }
    let mut fields = kwargs.cloned().unwrap_or_default();
    if class == "Document" {
        let mut doc = Map::with_capacity(4 + fields.len());
        doc.insert("id", fields.remove("id").unwrap_or_default());
        doc.insert(
            "metadata",
            fields.remove("metadata").unwrap_or(Value::Map(Map::new())),
        );
        doc.insert(
            "page_content",
            fields.remove("page_content").unwrap_or_default(),
        );
        doc.insert("type", fields.remove("type").unwrap_or("Document".into()));
        for (k, v) in fields {
            doc.insert(k, v);
        }
        return Some(Value::pydantic_v2(
            "langchain_core.documents.base",
            class,
            doc,
        ));
    }
    Value::message(class, fields)
}

/// `(class, module path)` of an id of at least two elements.
fn split<'a>(id: &'a [&'a str]) -> (&'a str, &'a [&'a str]) {
    match id.split_last() {
        Some((class, path)) => (class, path),
        None => ("", id),
    }
}

fn non_empty_list(v: Option<&Value>) -> Option<&[Value]> {
    v.and_then(Value::as_list).filter(|l| !l.is_empty())
}

fn non_empty_map(v: Option<&Value>) -> Option<&Map> {
    v.and_then(Value::as_map).filter(|m| !m.is_empty())
}
