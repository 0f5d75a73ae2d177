//! LangGraph's allowlist of Python objects (strict msgpack mode): the `(module, class)`
//! pairs `langgraph-checkpoint` 4.x rebuilds without being told to, and the one class
//! method it may call (`SAFE_MSGPACK_TYPES`, `SAFE_MSGPACK_METHODS` of the pinned
//! release). A stored object outside it is refused by a strict Python reader.

use stategraph_checkpoint::{Ext, ObjectCode, Value};

/// `(module, class)` pairs a strict reader rebuilds.
pub const SAFE_TYPES: &[(&str, &str)] = &[
    ("builtins", "frozenset"),
    ("builtins", "set"),
    ("collections", "deque"),
    ("datetime", "date"),
    ("datetime", "datetime"),
    ("datetime", "time"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
    ("decimal", "Decimal"),
    ("ipaddress", "IPv4Address"),
    ("ipaddress", "IPv4Interface"),
    ("ipaddress", "IPv4Network"),
    ("ipaddress", "IPv6Address"),
    ("ipaddress", "IPv6Interface"),
    ("ipaddress", "IPv6Network"),
    ("langchain_core.documents.base", "Document"),
    ("langchain_core.messages.ai", "AIMessage"),
    ("langchain_core.messages.ai", "AIMessageChunk"),
    ("langchain_core.messages.base", "BaseMessage"),
    ("langchain_core.messages.base", "BaseMessageChunk"),
    ("langchain_core.messages.chat", "ChatMessage"),
    ("langchain_core.messages.chat", "ChatMessageChunk"),
    ("langchain_core.messages.function", "FunctionMessage"),
    ("langchain_core.messages.function", "FunctionMessageChunk"),
    ("langchain_core.messages.human", "HumanMessage"),
    ("langchain_core.messages.human", "HumanMessageChunk"),
    ("langchain_core.messages.modifier", "RemoveMessage"),
    ("langchain_core.messages.system", "SystemMessage"),
    ("langchain_core.messages.system", "SystemMessageChunk"),
    ("langchain_core.messages.tool", "ToolMessage"),
    ("langchain_core.messages.tool", "ToolMessageChunk"),
    ("langgraph.store.base", "GetOp"),
    ("langgraph.store.base", "Item"),
    ("langgraph.types", "Command"),
    ("langgraph.types", "Interrupt"),
    ("langgraph.types", "Overwrite"),
    ("langgraph.types", "PregelTask"),
    ("langgraph.types", "Send"),
    ("langgraph.types", "StateSnapshot"),
    ("langgraph.types", "TimeoutPolicy"),
    ("pathlib", "Path"),
    ("pathlib", "PosixPath"),
    ("pathlib", "WindowsPath"),
    ("pathlib._local", "Path"),
    ("pathlib._local", "PosixPath"),
    ("pathlib._local", "WindowsPath"),
    ("re", "compile"),
    ("uuid", "UUID"),
    ("zoneinfo", "ZoneInfo"),
];

/// `(module, class, method)` calls a strict reader makes.
pub const SAFE_METHODS: &[(&str, &str, &str)] = &[("datetime", "datetime", "fromisoformat")];

/// Why an extension value is outside the allowlist, or `None` if it is allowed.
pub fn check(ext: &Ext) -> Option<String> {
    let Ext::Object(o) = ext else {
        // numpy arrays and delta snapshots are rebuilt from data, without an import.
        return None;
    };
    let (m, c) = (o.module.as_str(), o.class.as_str());
    if !SAFE_TYPES.contains(&(m, c)) {
        return Some(format!("{m}.{c} is not one of LangGraph's safe types"));
    }
    if o.code == ObjectCode::MethodSingleArg {
        let method = o.method.as_deref().unwrap_or("");
        if !SAFE_METHODS.contains(&(m, c, method)) {
            return Some(format!(
                "{m}.{c}.{method} is not one of LangGraph's safe methods"
            ));
        }
    }
    None
}

/// Every object inside `value` outside the allowlist: `(path, reason)`, the path written
/// from `root` (`.key` for string keys, `[i]` for list items, `[key]` otherwise, `.field`
/// inside an object's data).
pub fn unsafe_objects(value: &Value, root: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(value, root.to_owned(), &mut out);
    out
}

fn walk(value: &Value, path: String, out: &mut Vec<(String, String)>) {
    if let Some(items) = value.as_list() {
        for (i, v) in items.iter().enumerate() {
            walk(v, format!("{path}[{i}]"), out);
        }
    } else if let Some(map) = value.as_map() {
        for (k, v) in map.iter() {
            let p = match k.as_str() {
                Some(s) => format!("{path}.{s}"),
                None => format!("{path}[{}]", stategraph_checkpoint::memory::repr::repr(k)),
            };
            walk(k, p.clone(), out);
            walk(v, p, out);
        }
    } else if let Some(ext) = value.as_ext() {
        if let Some(reason) = check(ext) {
            out.push((path.clone(), reason));
        }
        match ext {
            Ext::Object(o) => walk(&o.data, path, out),
            Ext::NumpyArray(v) | Ext::DeltaSnapshot(v) => walk(v, path, out),
        }
    }
}
