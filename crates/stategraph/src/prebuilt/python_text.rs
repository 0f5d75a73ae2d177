//! Python's text for values where LangGraph's prebuilt nodes put it in messages:
//! `json.dumps(x, ensure_ascii=False)` for a tool's result, `repr(x)` for kwargs and
//! errors.

use stategraph_checkpoint::Value;

/// `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators; a value JSON
/// cannot hold is written as its `repr` (Python's `str(output)` fallback, near enough).
pub(crate) fn json_dumps(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value);
    out
}

fn write_json(out: &mut String, value: &Value) {
    match value {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::UInt(u) => out.push_str(&u.to_string()),
        Value::Float(f) => out.push_str(&float_text(*f)),
        Value::Str(s) => out.push_str(&json_string(s)),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match k.as_str() {
                    Some(k) => out.push_str(&json_string(k)),
                    None => out.push_str(&json_string(&k.repr().to_string())),
                }
                out.push_str(": ");
                write_json(out, v);
            }
            out.push('}');
        }
        other => out.push_str(&json_string(&other.repr().to_string())),
    }
}

/// Python's `float.__repr__` for the common cases (`1.0`, `2.5`, `inf` as JSON's
/// `Infinity`).
fn float_text(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else if f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

/// A JSON string literal, non-ASCII kept (`ensure_ascii=False`).
fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// Python's `repr(value)` (dicts `{'a': 1}`, strings `'x'`, `None`, `True`).
pub(crate) fn repr(value: &Value) -> String {
    value.repr().to_string()
}

/// `Name('message')`: Python's `repr` of an exception of type `name`.
pub(crate) fn exception_repr(name: &str, message: &str) -> String {
    format!("{name}({})", repr(&Value::from(message)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stategraph_checkpoint::{list, map};

    #[test]
    fn json_dumps_uses_python_separators_and_keeps_non_ascii() {
        let v = map! {"a" => list![1, 2.5, Value::Nil, true], "é" => "x\"y"};
        assert_eq!(
            json_dumps(&v),
            r#"{"a": [1, 2.5, null, true], "é": "x\"y"}"#
        );
        assert_eq!(json_dumps(&Value::Float(3.0)), "3.0");
    }

    #[test]
    fn exception_repr_quotes_as_python_does() {
        assert_eq!(exception_repr("ValueError", "boom"), "ValueError('boom')");
        assert_eq!(
            exception_repr("ValueError", "it 'broke'"),
            "ValueError(\"it 'broke'\")"
        );
    }
}
