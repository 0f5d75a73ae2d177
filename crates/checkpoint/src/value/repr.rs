//! Python `repr()`-style rendering of stored values: [`Value::repr`]'s base and what
//! [`MemorySaver::dump`](crate::MemorySaver::dump) and the SQLite saver's dump print.
//!
//! `None`, `True`, `False`, quoted strings with Python's escapes and quote choice,
//! `b'…'` bytes, floats as Python prints them (`1.0`, `1e-05`, `1e+16`, `inf`), lists,
//! dicts, and extension objects as a call of their class: `uuid.UUID('…')`,
//! `datetime.datetime.fromisoformat('…')`, `module.Class(key=value, …)`. Tuples are stored
//! as lists, so they render as lists.

use std::fmt::Write;

use super::Value;
use crate::ext::{Ext, Object, ObjectCode};
use crate::float_repr::python_float_repr;

/// The Python `repr()` of a value.
pub fn repr(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// Appends the Python `repr()` of a value.
pub fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Nil => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => push_display(out, i),
        Value::UInt(u) => push_display(out, u),
        Value::Float(x) => write_float(out, *x),
        Value::Str(s) => write_str(out, s),
        Value::Bytes(b) => write_bytes(out, b),
        Value::List(items) => write_list(out, items, write_value),
        Value::Map(map) => write_dict(out, map, write_value),
        Value::Ext(ext) => write_ext(out, ext),
    }
}

fn push_display(out: &mut String, v: impl std::fmt::Display) {
    // Writing into a String cannot fail.
    let _ = write!(out, "{v}");
}

/// Appends `[a, b, …]`, each item written by `each` (`repr` here; `str()`'s readable form
/// in `display.rs`, which differs only for objects).
pub(crate) fn write_list(out: &mut String, items: &[Value], each: fn(&mut String, &Value)) {
    out.push('[');
    write_joined(out, items, each);
    out.push(']');
}

/// Appends `a, b, …`, each item written by `each`.
fn write_joined(out: &mut String, items: &[Value], each: fn(&mut String, &Value)) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        each(out, item);
    }
}

/// Appends `{k: v, …}`, each key and value written by `each`.
pub(crate) fn write_dict(out: &mut String, map: &super::Map, each: fn(&mut String, &Value)) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        each(out, k);
        out.push_str(": ");
        each(out, v);
    }
    out.push('}');
}

/// Appends a Python string literal: single quotes unless the text has a `'` and no `"`.
pub fn write_str(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c => {
                let n = c as u32;
                let _ = match n {
                    0..=0xff => write!(out, "\\x{n:02x}"),
                    0x100..=0xffff => write!(out, "\\u{n:04x}"),
                    _ => write!(out, "\\U{n:08x}"),
                };
            }
        }
    }
    out.push(quote);
}

/// Whether Python prints a character as is (an approximation of `str.isprintable` that
/// is exact for ASCII and for the usual invisible characters).
fn is_printable(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    !(c.is_control()
        || c.is_whitespace()
        || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}')
        || matches!(c, '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{e000}'..='\u{f8ff}'))
}

/// Appends a Python bytes literal `b'…'`.
pub fn write_bytes(out: &mut String, bytes: &[u8]) {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    out.push('b');
    out.push(quote as char);
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b if b == quote => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            b => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push(quote as char);
}

/// Appends a float as Python's `repr` prints it.
pub fn write_float(out: &mut String, x: f64) {
    out.push_str(&python_float_repr(x));
}

/// Appends an extension value as the call Python would make to rebuild it.
fn write_ext(out: &mut String, ext: &Ext) {
    match ext {
        Ext::Object(o) => write_object(out, o),
        Ext::NumpyArray(v) => {
            out.push_str("numpy.ndarray(");
            write_value(out, v);
            out.push(')');
        }
        Ext::DeltaSnapshot(v) => {
            out.push_str("langgraph.checkpoint.serde.types._DeltaSnapshot(");
            write_value(out, v);
            out.push(')');
        }
    }
}

fn write_object(out: &mut String, o: &Object) {
    out.push_str(&o.module);
    out.push('.');
    out.push_str(&o.class);
    if let (ObjectCode::MethodSingleArg, Some(method)) = (o.code, &o.method) {
        out.push('.');
        out.push_str(method);
    }
    out.push('(');
    match (o.code, &o.data) {
        (ObjectCode::ConstructorPosArgs, Value::List(args)) => write_joined(out, args, write_value),
        (
            ObjectCode::ConstructorKwArgs | ObjectCode::PydanticV1 | ObjectCode::PydanticV2,
            Value::Map(kwargs),
        ) if kwargs.iter().all(|(k, _)| k.as_str().is_some()) => {
            for (i, (k, v)) in kwargs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k.as_str().unwrap_or_default());
                out.push('=');
                write_value(out, v);
            }
        }
        (_, data) => write_value(out, data),
    }
    out.push(')');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Map;

    #[test]
    fn scalars_render_as_python() {
        assert_eq!(repr(&Value::Nil), "None");
        assert_eq!(repr(&Value::Bool(true)), "True");
        assert_eq!(repr(&Value::Int(-3)), "-3");
        assert_eq!(repr(&Value::UInt(u64::MAX)), "18446744073709551615");
        assert_eq!(repr(&Value::Float(1.0)), "1.0");
        assert_eq!(repr(&Value::Float(1e-5)), "1e-05");
        assert_eq!(repr(&Value::Float(1e16)), "1e+16");
        assert_eq!(repr(&Value::Float(0.25)), "0.25");
    }

    #[test]
    fn strings_choose_quotes_and_escape_like_python() {
        assert_eq!(repr(&Value::from("a")), "'a'");
        assert_eq!(repr(&Value::from("it's")), "\"it's\"");
        assert_eq!(repr(&Value::from("'\"")), "'\\'\"'");
        assert_eq!(repr(&Value::from("a\\b\n\t\u{1}")), "'a\\\\b\\n\\t\\x01'");
        assert_eq!(repr(&Value::from("é\u{a0}\u{200b}")), "'é\\xa0\\u200b'");
        assert_eq!(
            repr(&Value::Bytes(b"a'\x00\xff".to_vec().into())),
            "b\"a'\\x00\\xff\""
        );
        assert_eq!(repr(&Value::Bytes(Vec::new().into())), "b''");
    }

    #[test]
    fn containers_and_objects_render_as_python() {
        let mut m = Map::new();
        m.insert("k", Value::list(vec![Value::Int(1), Value::from("x")]));
        m.insert(Value::Int(2), Value::Nil);
        assert_eq!(repr(&Value::Map(m)), "{'k': [1, 'x'], 2: None}");
        let uuid = Ext::object(
            ObjectCode::ConstructorSingleArg,
            "uuid",
            "UUID",
            Value::from("00000000-0000-0000-0000-000000000001"),
            None,
        );
        assert_eq!(
            repr(&Value::from(uuid)),
            "uuid.UUID('00000000-0000-0000-0000-000000000001')"
        );
        let dt = Ext::object(
            ObjectCode::MethodSingleArg,
            "datetime",
            "datetime",
            Value::from("2025-01-01T00:00:00"),
            Some("fromisoformat"),
        );
        assert_eq!(
            repr(&Value::from(dt)),
            "datetime.datetime.fromisoformat('2025-01-01T00:00:00')"
        );
        let send = Ext::object(
            ObjectCode::ConstructorPosArgs,
            "langgraph.types",
            "Send",
            Value::list(vec![Value::from("worker"), Value::Int(1)]),
            None,
        );
        assert_eq!(
            repr(&Value::from(send)),
            "langgraph.types.Send('worker', 1)"
        );
        let mut kwargs = Map::new();
        kwargs.insert("content", "hi");
        let msg = Ext::object(
            ObjectCode::PydanticV2,
            "langchain_core.messages.human",
            "HumanMessage",
            Value::Map(kwargs),
            Some("model_validate_json"),
        );
        assert_eq!(
            repr(&Value::from(msg)),
            "langchain_core.messages.human.HumanMessage(content='hi')"
        );
    }
}
