//! Values for people and for machines: a JSON form of any stored value, and a readable
//! one-line text (Python's `repr`, with LangChain messages shown as chat lines).
//!
//! The JSON form is lossless for data and readable for objects:
//!
//! | stored value | JSON |
//! |---|---|
//! | `None`, bools, ints, floats, strings | themselves (non-finite floats as `"NaN"`, `"inf"`, `"-inf"`) |
//! | bytes | `{"$bytes": "<hex>"}` |
//! | list, tuple | array |
//! | dict with string keys | object, in insertion order |
//! | dict with other keys | `{"$map": [[key, value], …]}` |
//! | Python object | `{"$py": "module.Class", "value": …}`: a UUID's text, a datetime's ISO text, a set's items, a model's or dataclass's fields, else the constructor data |
//! | numpy array, delta snapshot | `{"$py": "numpy.ndarray", "value": …}`, `{"$delta": …}` |

use stategraph_checkpoint::Value;

/// The JSON form of a stored value (see the module), as a `serde_json` value: the shared
/// form of `stategraph_checkpoint::value::json`.
pub use stategraph_checkpoint::value::to_json;
/// A stored value serialized straight to its JSON form (see the module), without building
/// a `serde_json` tree: what `history --json` streams.
pub use stategraph_checkpoint::value::AsJson;

/// A readable one-line text of a value: a message as `role: content`, anything else as
/// [`readable`].
pub fn text(value: &Value) -> String {
    value.chat_line().unwrap_or_else(|| readable(value))
}

/// Python-like text of a value, with objects as a person would write them rather than as
/// the stored constructor call ([`Value::repr`], strings quoted so that `'1'` and `1`
/// differ): `UUID('1234…-…')`,
/// `datetime('2024-05-06T07:08:09+00:00')`, `Decimal('12.50')`, sets as `{'a', 'b'}`
/// (items sorted), dataclasses and models as `Class(field=…)`, messages as
/// `HumanMessage('hi')`, `Send('node', …)`, `Interrupt(value, id='…')`.
pub fn readable(value: &Value) -> String {
    value.repr().to_string()
}

/// A LangChain message as one line: `human: hello`, `ai: … → tool(args)`, `tool[id]: …`
/// (`Value::chat_line`).
pub fn message_line(value: &Value) -> Option<String> {
    value.chat_line()
}

/// `text`, cut to `max` characters with an ellipsis.
pub fn short(value: &Value, max: usize) -> String {
    let s = text(value);
    cut(&s, max)
}

/// `s`, cut to `max` characters with an ellipsis.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A byte count for people: `812 B`, `14.2 KiB`, `3.1 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut x = n as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if x < 1024.0 {
            break;
        }
        x /= 1024.0;
        unit = u;
    }
    format!("{x:.1} {unit}")
}

/// The whole value as [`readable`] text (no chat-line shortening).
pub fn repr_full(value: &Value) -> String {
    readable(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use stategraph_checkpoint::Map;

    fn fields(pairs: &[(&str, Value)]) -> Map {
        let mut m = Map::new();
        for (k, v) in pairs {
            m.insert(*k, v.clone());
        }
        m
    }

    #[test]
    fn messages_read_as_chat_lines() {
        let human = Value::message("HumanMessage", fields(&[("content", "hi".into())]))
            .expect("a message class");
        assert_eq!(text(&human), "human: hi");
        let mut call = Map::new();
        call.insert("name", "search");
        call.insert("args", Value::Map(fields(&[("q", "rust".into())])));
        let ai = Value::message(
            "AIMessage",
            fields(&[("tool_calls", Value::from(vec![Value::Map(call)]))]),
        )
        .expect("a message class");
        assert_eq!(text(&ai), "ai:  → search({'q': 'rust'})");
        let tool = Value::message(
            "ToolMessage",
            fields(&[("content", "42".into()), ("tool_call_id", "c1".into())]),
        )
        .expect("a message class");
        assert_eq!(text(&tool), "tool[c1]: 42");
    }

    #[test]
    fn json_form_of_data_and_objects() {
        let mut odd = Map::new();
        odd.insert(Value::Int(1), "one");
        let v = Value::from(vec![
            Value::Nil,
            Value::Float(f64::NAN),
            Value::from(vec![0xffu8, 0x00]),
            Value::Map(odd),
            Value::uuid(&uuid::Uuid::from_u128(0x1234)),
            Value::datetime_iso("2024-01-02T03:04:05+00:00"),
            Value::set(vec![Value::from("a")]),
        ]);
        assert_eq!(
            to_json(&v),
            json!([
                null,
                "NaN",
                {"$bytes": "ff00"},
                {"$map": [[1, "one"]]},
                {"$py": "uuid.UUID", "value": "00000000-0000-0000-0000-000000001234"},
                {"$py": "datetime.datetime", "value": "2024-01-02T03:04:05+00:00"},
                {"$py": "builtins.set", "value": ["a"]},
            ])
        );
    }

    #[test]
    fn python_objects_read_as_people_write_them() {
        let mut point = Map::new();
        point.insert("x", 1);
        point.insert("y", 2);
        let v = Value::from(vec![
            Value::uuid(&uuid::Uuid::from_u128(0x1234)),
            Value::datetime_iso("2024-01-02T03:04:05+00:00"),
            Value::set(vec![Value::from("a"), Value::from("b")]),
            Value::frozenset(vec![]),
            Value::decimal("12.50"),
            Value::dataclass("__main__", "Point", point),
            Value::message("HumanMessage", fields(&[("content", "hi".into())]))
                .expect("a message class"),
        ]);
        assert_eq!(
            readable(&v),
            "[UUID('00000000-0000-0000-0000-000000001234'), \
             datetime('2024-01-02T03:04:05+00:00'), {'a', 'b'}, frozenset(), \
             Decimal('12.50'), Point(x=1, y=2), HumanMessage('hi')]"
        );
    }

    #[test]
    fn sizes_and_cuts_for_people() {
        assert_eq!(bytes(812), "812 B");
        assert_eq!(bytes(14_540), "14.2 KiB");
        assert_eq!(bytes(3 * 1024 * 1024 + 100_000), "3.1 MiB");
        assert_eq!(cut("héllo wörld", 6), "héllo…");
        assert_eq!(cut("short", 10), "short");
    }
}
