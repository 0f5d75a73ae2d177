//! Strict mode: refuse stored Python objects outside LangGraph's safe types and an allowlist.
//!
//! stategraph never constructs the Python objects a checkpoint names (they stay inert
//! [`Ext`] data), but a value it reads may be stored again and read by Python, which does
//! construct them. Python's `LANGGRAPH_STRICT_MSGPACK=true` (or an explicit
//! `allowed_msgpack_modules`) limits what its reader constructs; strict mode is the same
//! rule on stategraph's side, so that a saver or a `verify` pass refuses such data up
//! front instead of carrying it along:
//!
//! * an object record of codes 0, 1, 2, 4, 5 (constructor with one argument, positional
//!   arguments, keyword arguments, pydantic v1, pydantic v2) is allowed when its
//!   `(module, class)` is in [`SAFE_TYPES`] (Python's `SAFE_MSGPACK_TYPES`) or in the
//!   user's [`Allowlist`];
//! * a method call (code 3) only when `(module, class, method)` is in [`SAFE_METHODS`]
//!   (Python's `SAFE_MSGPACK_METHODS`; the user allowlist does not widen it, as in Python);
//! * numpy arrays (6) and delta snapshots (7) are data, not constructors: allowed, with
//!   the snapshot's content checked;
//! * objects nested anywhere -- in map keys, in list items, inside another object's
//!   arguments -- are checked too.
//!
//! Python, when strict, reads a blocked object as its raw argument data and logs a
//! warning; stategraph refuses the read with [`Error::Unsafe`] naming the object and its
//! path, so nothing is silently changed. Turn it on by wrapping the serializer of a saver
//! in [`StrictSerializer`] ([`StrictSerializer::from_env`] honours
//! `LANGGRAPH_STRICT_MSGPACK` as Python does), or call [`check`] on any value.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::ext::{Ext, Object, ObjectCode};
use crate::serde::{Serializer, Typed};
use crate::value::Value;

pub use super::unsafe_object::UnsafeObject;

/// LangGraph's `SAFE_MSGPACK_TYPES` (langgraph-checkpoint 4.3.2): the `(module, class)`
/// pairs Python constructs even in strict mode.
pub const SAFE_TYPES: &[(&str, &str)] = &[
    ("datetime", "datetime"),
    ("datetime", "date"),
    ("datetime", "time"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
    ("uuid", "UUID"),
    ("decimal", "Decimal"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("collections", "deque"),
    ("ipaddress", "IPv4Address"),
    ("ipaddress", "IPv4Interface"),
    ("ipaddress", "IPv4Network"),
    ("ipaddress", "IPv6Address"),
    ("ipaddress", "IPv6Interface"),
    ("ipaddress", "IPv6Network"),
    ("pathlib", "Path"),
    ("pathlib", "PosixPath"),
    ("pathlib", "WindowsPath"),
    ("pathlib._local", "Path"),
    ("pathlib._local", "PosixPath"),
    ("pathlib._local", "WindowsPath"),
    ("zoneinfo", "ZoneInfo"),
    ("re", "compile"),
    ("langchain_core.messages.base", "BaseMessage"),
    ("langchain_core.messages.base", "BaseMessageChunk"),
    ("langchain_core.messages.human", "HumanMessage"),
    ("langchain_core.messages.human", "HumanMessageChunk"),
    ("langchain_core.messages.ai", "AIMessage"),
    ("langchain_core.messages.ai", "AIMessageChunk"),
    ("langchain_core.messages.system", "SystemMessage"),
    ("langchain_core.messages.system", "SystemMessageChunk"),
    ("langchain_core.messages.chat", "ChatMessage"),
    ("langchain_core.messages.chat", "ChatMessageChunk"),
    ("langchain_core.messages.tool", "ToolMessage"),
    ("langchain_core.messages.tool", "ToolMessageChunk"),
    ("langchain_core.messages.function", "FunctionMessage"),
    ("langchain_core.messages.function", "FunctionMessageChunk"),
    ("langchain_core.messages.modifier", "RemoveMessage"),
    ("langchain_core.documents.base", "Document"),
    ("langgraph.types", "Send"),
    ("langgraph.types", "TimeoutPolicy"),
    ("langgraph.types", "Interrupt"),
    ("langgraph.types", "Command"),
    ("langgraph.types", "StateSnapshot"),
    ("langgraph.types", "PregelTask"),
    ("langgraph.types", "Overwrite"),
    ("langgraph.store.base", "Item"),
    ("langgraph.store.base", "GetOp"),
];

/// LangGraph's `SAFE_MSGPACK_METHODS`: the only method calls (code 3) Python makes.
pub const SAFE_METHODS: &[(&str, &str, &str)] = &[("datetime", "datetime", "fromisoformat")];

/// The user's extra `(module, class)` pairs, as Python's `allowed_msgpack_modules`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allowlist {
    types: HashSet<(String, String)>,
}

impl Allowlist {
    /// An empty allowlist: only [`SAFE_TYPES`].
    pub fn new() -> Allowlist {
        Allowlist::default()
    }

    /// Also allows `module.class` (exact names, no prefixes, as in Python).
    pub fn allow(mut self, module: impl Into<String>, class: impl Into<String>) -> Allowlist {
        self.types.insert((module.into(), class.into()));
        self
    }

    /// True if `(module, class)` is safe or allowed.
    pub fn allows(&self, module: &str, class: &str) -> bool {
        SAFE_TYPES.contains(&(module, class))
            || self.types.contains(&(module.to_owned(), class.to_owned()))
    }
}

impl<M: Into<String>, C: Into<String>> FromIterator<(M, C)> for Allowlist {
    fn from_iter<I: IntoIterator<Item = (M, C)>>(iter: I) -> Allowlist {
        Allowlist {
            types: iter
                .into_iter()
                .map(|(m, c)| (m.into(), c.into()))
                .collect(),
        }
    }
}

/// Checks every object record in `value` against LangGraph's safe types and `allowlist`.
pub fn check(value: &Value, allowlist: &Allowlist) -> Result<(), UnsafeObject> {
    walk(value, allowlist).map_err(|mut found| {
        found.steps.reverse();
        UnsafeObject {
            path: format!("${}", found.steps.concat()),
            module: found.module,
            class: found.class,
            method: found.method,
        }
    })
}

/// Every object record in `value` that [`check`] would refuse, outermost first (a `verify`
/// pass reports them all; [`check`] stops at the first).
pub fn check_all(value: &Value, allowlist: &Allowlist) -> Vec<UnsafeObject> {
    let mut out = Vec::new();
    collect(value, allowlist, "$".to_owned(), &mut out);
    out
}

fn collect(value: &Value, allowlist: &Allowlist, path: String, out: &mut Vec<UnsafeObject>) {
    match value {
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(item, allowlist, format!("{path}[{i}]"), out);
            }
        }
        Value::Map(map) => {
            for (k, v) in map.iter() {
                let name = match k {
                    Value::Str(s) => format!("{path}.{}", &**s),
                    other => format!("{path}[{other:?}]"),
                };
                collect(
                    k,
                    allowlist,
                    format!("{path}<key {}>", &name[path.len()..]),
                    out,
                );
                collect(v, allowlist, name, out);
            }
        }
        Value::Ext(ext) => match &**ext {
            Ext::Object(o) => {
                if !allowed(o, allowlist) {
                    out.push(UnsafeObject {
                        path: path.clone(),
                        module: o.module.clone(),
                        class: o.class.clone(),
                        method: method_of(o),
                    });
                }
                collect(
                    &o.data,
                    allowlist,
                    format!("{path}<{}.{}>", o.module, o.class),
                    out,
                );
            }
            Ext::NumpyArray(_) => {}
            Ext::DeltaSnapshot(inner) => collect(inner, allowlist, format!("{path}<delta>"), out),
        },
        _ => {}
    }
}

/// An unsafe object found, with the path from it outwards (innermost step first).
struct Found {
    steps: Vec<String>,
    module: String,
    class: String,
    method: Option<String>,
}

/// Whether Python, strict, constructs this object record.
fn allowed(o: &Object, allowlist: &Allowlist) -> bool {
    match o.code {
        ObjectCode::MethodSingleArg => o
            .method
            .as_deref()
            .is_some_and(|m| SAFE_METHODS.contains(&(o.module.as_str(), o.class.as_str(), m))),
        _ => allowlist.allows(&o.module, &o.class),
    }
}

/// The method of a method-call record.
fn method_of(o: &Object) -> Option<String> {
    (o.code == ObjectCode::MethodSingleArg)
        .then(|| o.method.clone())
        .flatten()
}

fn walk(value: &Value, allowlist: &Allowlist) -> Result<(), Found> {
    let step = |s: String| {
        move |mut f: Found| {
            f.steps.push(s);
            f
        }
    };
    match value {
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, allowlist).map_err(|f| step(format!("[{i}]"))(f))?;
            }
        }
        Value::Map(map) => {
            for (k, v) in map.iter() {
                let name = || match k {
                    Value::Str(s) => format!(".{s}"),
                    other => format!("[{other:?}]"),
                };
                walk(k, allowlist).map_err(|f| step(format!("<key {}>", name()))(f))?;
                walk(v, allowlist).map_err(|f| step(name())(f))?;
            }
        }
        Value::Ext(ext) => match &**ext {
            Ext::Object(o) => {
                if !allowed(o, allowlist) {
                    return Err(Found {
                        steps: Vec::new(),
                        module: o.module.clone(),
                        class: o.class.clone(),
                        method: method_of(o),
                    });
                }
                walk(&o.data, allowlist)
                    .map_err(|f| step(format!("<{}.{}>", o.module, o.class))(f))?;
            }
            Ext::NumpyArray(_) => {}
            Ext::DeltaSnapshot(inner) => {
                walk(inner, allowlist).map_err(|f| step("<delta>".to_owned())(f))?;
            }
        },
        Value::Nil
        | Value::Bool(_)
        | Value::Int(_)
        | Value::UInt(_)
        | Value::Float(_)
        | Value::Str(_)
        | Value::Bytes(_) => {}
    }
    Ok(())
}

/// True when `LANGGRAPH_STRICT_MSGPACK` is `1`, `true` or `yes` (any case), as Python reads it.
pub fn enabled_by_env() -> bool {
    std::env::var("LANGGRAPH_STRICT_MSGPACK")
        .map(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
        .unwrap_or(false)
}

/// A serializer that refuses, on read, values holding objects strict mode does not allow.
///
/// Writes are passed through unchanged. Wrap a saver's serializer to turn strict mode on:
///
/// ```
/// use std::sync::Arc;
/// use stategraph_checkpoint::serde::strict::{Allowlist, StrictSerializer};
/// use stategraph_checkpoint::serde::JsonPlusSerializer;
/// use stategraph_checkpoint::MemorySaver;
///
/// let allow = Allowlist::new().allow("my_app.state", "Ticket");
/// let saver = MemorySaver::new()
///     .with_serializer(Arc::new(StrictSerializer::new(JsonPlusSerializer, allow)));
/// # let _ = saver;
/// ```
#[derive(Debug, Clone)]
pub struct StrictSerializer<S> {
    inner: S,
    allowlist: Allowlist,
}

impl<S: Serializer> StrictSerializer<S> {
    /// Strict reads through `inner`, allowing the safe types and `allowlist`.
    pub fn new(inner: S, allowlist: Allowlist) -> StrictSerializer<S> {
        StrictSerializer { inner, allowlist }
    }

    /// The allowlist in force.
    pub fn allowlist(&self) -> &Allowlist {
        &self.allowlist
    }

    /// The wrapped serializer.
    pub fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: Serializer> StrictSerializer<S> {
    /// `inner` made strict if `LANGGRAPH_STRICT_MSGPACK` says so, as Python's default
    /// serializer decides; otherwise `inner` unchanged.
    pub fn from_env(inner: S, allowlist: Allowlist) -> std::sync::Arc<dyn Serializer>
    where
        S: 'static,
    {
        if enabled_by_env() {
            std::sync::Arc::new(StrictSerializer::new(inner, allowlist))
        } else {
            std::sync::Arc::new(inner)
        }
    }
}

impl<S: Serializer> Serializer for StrictSerializer<S> {
    fn dumps_typed(&self, value: &Value) -> Result<Typed> {
        self.inner.dumps_typed(value)
    }

    fn dumps_checkpoint(&self, checkpoint: &crate::Checkpoint, with_values: bool) -> Result<Typed> {
        self.inner.dumps_checkpoint(checkpoint, with_values)
    }

    fn loads_typed(&self, tag: &str, bytes: &[u8]) -> Result<Value> {
        let value = self.inner.loads_typed(tag, bytes)?;
        check(&value, &self.allowlist).map_err(|u| Error::Unsafe(Box::new(u)))?;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{list, map};

    fn obj(code: ObjectCode, module: &str, class: &str, data: Value) -> Value {
        Value::object(code, module, class, data, None)
    }

    #[test]
    fn safe_types_pass_and_others_are_named_with_their_path() {
        let uuid = obj(
            ObjectCode::ConstructorSingleArg,
            "uuid",
            "UUID",
            "ab".into(),
        );
        let evil = obj(ObjectCode::ConstructorPosArgs, "os", "system", list!["rm"]);
        let ok = map! { "id" => uuid.clone(), "xs" => list![1, uuid.clone()] };
        assert_eq!(check(&ok, &Allowlist::new()), Ok(()));
        let bad = map! { "xs" => list![1, map! { "k" => evil.clone() }] };
        let found = check(&bad, &Allowlist::new()).unwrap_err();
        assert_eq!(found.path, "$.xs[1].k");
        assert_eq!(
            (found.module.as_str(), found.class.as_str()),
            ("os", "system")
        );
        assert_eq!(check(&bad, &Allowlist::new().allow("os", "system")), Ok(()));
        // Nested inside an allowed object's arguments.
        let inside = obj(
            ObjectCode::ConstructorKwArgs,
            "langgraph.types",
            "Interrupt",
            map! { "value" => evil },
        );
        let found = check(&inside, &Allowlist::new()).unwrap_err();
        assert_eq!(found.path, "$<langgraph.types.Interrupt>.value");
    }

    #[test]
    fn check_all_lists_every_unsafe_object() {
        let evil = |c: &str| obj(ObjectCode::ConstructorPosArgs, "os", c, list![]);
        let v = map! { "a" => evil("system"), "b" => list![1, evil("popen")] };
        let found = check_all(&v, &Allowlist::new());
        let paths: Vec<_> = found
            .iter()
            .map(|u| (u.path.as_str(), u.class.as_str()))
            .collect();
        assert_eq!(paths, [("$.a", "system"), ("$.b[1]", "popen")]);
        assert_eq!(
            found[0].reason(),
            "os.system is outside LangGraph's safe types and the allowlist"
        );
        assert!(check_all(
            &v,
            &Allowlist::new().allow("os", "system").allow("os", "popen")
        )
        .is_empty());
    }

    #[test]
    fn method_calls_follow_the_method_list_only() {
        let iso = |m: &str| {
            Value::object(
                ObjectCode::MethodSingleArg,
                "datetime",
                "datetime",
                "2024-01-01".into(),
                Some(m),
            )
        };
        assert_eq!(check(&iso("fromisoformat"), &Allowlist::new()), Ok(()));
        let found = check(&iso("fromtimestamp"), &Allowlist::new()).unwrap_err();
        assert_eq!(found.method.as_deref(), Some("fromtimestamp"));
        let allow = Allowlist::new().allow("datetime", "datetime");
        assert!(check(&iso("fromtimestamp"), &allow).is_err());
    }

    #[test]
    fn the_strict_serializer_refuses_on_read_only() {
        let strict = StrictSerializer::new(crate::serde::JsonPlusSerializer, Allowlist::new());
        let evil = obj(ObjectCode::PydanticV2, "evil", "Model", map! {});
        let typed = strict.dumps_typed(&evil).unwrap();
        assert!(matches!(
            strict.loads_typed(&typed.tag, &typed.bytes),
            Err(Error::Unsafe(u)) if u.class == "Model" && u.path == "$"
        ));
    }
}
