//! Python shapes in channel checkpoints (sets, tuples) and Python `repr()` text for errors.

use stategraph_checkpoint::{Ext, ObjectCode, Value};

use super::ChannelError;

/// The items of a stored Python `set` or `frozenset` extension.
pub(crate) fn python_set_items(value: &Value) -> Option<&[Value]> {
    let object = value.as_ext()?.as_object()?;
    let is_set = object.code == ObjectCode::ConstructorSingleArg
        && object.module == "builtins"
        && (object.class == "set" || object.class == "frozenset");
    if is_set {
        object.data.as_list()
    } else {
        None
    }
}

/// A Python `set` extension holding `items` in the given order.
pub(crate) fn python_set(items: Vec<Value>) -> Value {
    Value::from(Ext::object(
        ObjectCode::ConstructorSingleArg,
        "builtins",
        "set",
        Value::List(items.into()),
        None,
    ))
}

/// Python's `str()` of a value, for error messages.
pub(crate) fn python_str(value: &Value) -> String {
    match value {
        Value::Str(s) => s.to_string(),
        other => python_repr(other),
    }
}

/// Python's `repr()` of a value, close enough for error messages.
fn python_repr(value: &Value) -> String {
    match value {
        Value::Str(s) => python_str_repr(s),
        Value::List(items) => {
            let items: Vec<String> = items.iter().map(python_repr).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Map(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", python_repr(k), python_repr(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        other => format!("{other:?}"),
    }
}

/// Python's `repr()` of a set of names; empty is `set()`.
pub(crate) fn python_name_set(names: &[String]) -> String {
    if names.is_empty() {
        return "set()".to_owned();
    }
    let items: Vec<String> = names.iter().map(|n| python_str_repr(n)).collect();
    format!("{{{}}}", items.join(", "))
}

/// Python's `repr()` of a string: single quotes unless the text has a single quote and
/// no double quote.
fn python_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Splits a stored 2-element list (a Python tuple) into its two elements.
pub(crate) fn unpack_pair(stored: Value, kind: &str) -> Result<(Value, Value), ChannelError> {
    match stored {
        Value::List(items) if items.len() == 2 => {
            let mut items = items.into_iter();
            match (items.next(), items.next()) {
                (Some(first), Some(second)) => Ok((first, second)),
                _ => Err(pair_error(kind)),
            }
        }
        _ => Err(pair_error(kind)),
    }
}

fn pair_error(kind: &str) -> ChannelError {
    ChannelError::InvalidCheckpoint(format!("{kind}: expected a 2-element list"))
}
