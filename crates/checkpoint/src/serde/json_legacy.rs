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
use crate::serde::lc_construct::{args_construct, document, message, truthy, DOCUMENT_MODULE};
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
        return Err(unmodelled(module, class));
    }
    if SAFE_BUT_FAILING.contains(&(module, class)) {
        return Ok(Value::Nil);
    }
    if let Some(is_message) = lc2_pydantic(module, class) {
        return revive_lc2_pydantic(module, class, is_message, args, kwargs);
    }
    revive_lc2_object(module, class, args, kwargs)
}

/// The refusal of a safe `lc: 2` envelope whose arguments are not modelled here.
fn unmodelled(module: &str, class: &str) -> Refusal {
    Refusal::new(format!(
        "`lc: 2` {module}.{class}: Python constructs it, stategraph does not model its \
         arguments and refuses it rather than guess"
    ))
}

/// A safe message (`is_message`) or `Document` from its `args` and `kwargs`.
fn revive_lc2_pydantic(
    module: &str,
    class: &str,
    is_message: bool,
    args: Option<&Value>,
    kwargs: Option<&Value>,
) -> Result<Value, Refusal> {
    let args: &[Value] = match args {
        None => &[],
        Some(Value::List(l)) => l,
        Some(_) => return Err(unmodelled(module, class)),
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
    Ok(built.unwrap_or(Value::Nil))
}

/// A safe type of [`SAFE_TYPES`] as the extension Python writes for it.
fn revive_lc2_object(
    module: &str,
    class: &str,
    args: Option<&Value>,
    kwargs: Option<&Value>,
) -> Result<Value, Refusal> {
    let unsupported = || unmodelled(module, class);
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

#[cfg(test)]
#[path = "json_legacy_tests.rs"]
mod tests;
