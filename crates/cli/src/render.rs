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

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value as Json;
use stategraph_checkpoint::memory::repr::repr;
use stategraph_checkpoint::{Ext, Value};

/// The JSON form of a stored value (see the module), as a `serde_json` value.
pub fn to_json(value: &Value) -> Json {
    serde_json::to_value(AsJson(value)).unwrap_or(Json::Null)
}

/// A stored value serialized straight to its JSON form (see the module), without building
/// a `serde_json` tree: what `history --json` streams.
#[derive(Clone, Copy)]
pub struct AsJson<'a>(pub &'a Value);

impl Serialize for AsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        match value {
            Value::Nil => return s.serialize_unit(),
            Value::Bool(b) => return s.serialize_bool(*b),
            Value::Int(i) => return s.serialize_i64(*i),
            Value::UInt(u) => return s.serialize_u64(*u),
            Value::Float(f) => {
                return if f.is_finite() {
                    s.serialize_f64(*f)
                } else if f.is_nan() {
                    s.serialize_str("NaN")
                } else if *f > 0.0 {
                    s.serialize_str("inf")
                } else {
                    s.serialize_str("-inf")
                };
            }
            _ => {}
        }
        if let Some(text) = value.as_str() {
            s.serialize_str(text)
        } else if let Some(b) = value.as_bytes() {
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry("$bytes", &hex::encode(b))?;
            m.end()
        } else if let Some(items) = value.as_list() {
            let mut seq = s.serialize_seq(Some(items.len()))?;
            for item in items {
                seq.serialize_element(&AsJson(item))?;
            }
            seq.end()
        } else if let Some(map) = value.as_map() {
            if map.iter().all(|(k, _)| k.as_str().is_some()) {
                let mut m = s.serialize_map(Some(map.len()))?;
                for (k, v) in map.iter() {
                    m.serialize_entry(k.as_str().unwrap_or_default(), &AsJson(v))?;
                }
                m.end()
            } else {
                let pairs: Vec<(AsJson<'_>, AsJson<'_>)> =
                    map.iter().map(|(k, v)| (AsJson(k), AsJson(v))).collect();
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("$map", &pairs)?;
                m.end()
            }
        } else if let Some(ext) = value.as_ext() {
            let mut m = s.serialize_map(Some(2))?;
            match ext {
                Ext::Object(o) => {
                    m.serialize_entry("$py", &format!("{}.{}", o.module, o.class))?;
                    if let Some(u) = value.as_uuid() {
                        m.serialize_entry("value", &u.hyphenated().to_string())?;
                    } else if let Some(iso) = value.as_datetime_iso() {
                        m.serialize_entry("value", iso)?;
                    } else {
                        m.serialize_entry("value", &AsJson(&o.data))?;
                    }
                }
                Ext::NumpyArray(payload) => {
                    m.serialize_entry("$py", "numpy.ndarray")?;
                    m.serialize_entry("value", &AsJson(payload))?;
                }
                Ext::DeltaSnapshot(inner) => m.serialize_entry("$delta", &AsJson(inner))?,
            }
            m.end()
        } else {
            s.serialize_unit()
        }
    }
}

/// A readable one-line text of a value: a message as `role: content`, anything else as
/// [`readable`].
pub fn text(value: &Value) -> String {
    if let Some(line) = message_line(value) {
        return line;
    }
    readable(value)
}

/// Python-like text of a value, with objects as a person would write them rather than as
/// the stored constructor call: `UUID('1234…-…')`, `datetime('2024-05-06T07:08:09+00:00')`,
/// `date(2024, 5, 6)`, `timedelta(days=1, seconds=5)`, `Decimal('12.50')`, sets as
/// `{'a', 'b'}` (items sorted; `frozenset({…})`), dataclasses and models as `Class(field=…)`, messages
/// as `HumanMessage('hi')`, `Send('node', …)`, `Interrupt(value, id='…')`. Scalars,
/// lists and dicts are Python's `repr`; anything else falls back to the stored call.
pub fn readable(value: &Value) -> String {
    let mut out = String::new();
    write_readable(&mut out, value);
    out
}

fn write_readable(out: &mut String, value: &Value) {
    if let Some(items) = value.as_list() {
        out.push('[');
        write_items(out, items);
        out.push(']');
    } else if let Some(map) = value.as_map() {
        out.push('{');
        for (i, (k, v)) in map.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_readable(out, k);
            out.push_str(": ");
            write_readable(out, v);
        }
        out.push('}');
    } else if value.as_ext().is_some() {
        write_object(out, value);
    } else {
        out.push_str(&repr(value));
    }
}

fn write_items(out: &mut String, items: &[Value]) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_readable(out, item);
    }
}

fn write_fields(out: &mut String, class: &str, fields: &stategraph_checkpoint::Map) {
    out.push_str(class);
    out.push('(');
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(k.as_str().unwrap_or("?"));
        out.push('=');
        write_readable(out, v);
    }
    out.push(')');
}

fn write_object(out: &mut String, value: &Value) {
    if let Some(u) = value.as_uuid() {
        out.push_str(&format!("UUID('{}')", u.hyphenated()));
    } else if let Some(iso) = value.as_datetime_iso() {
        out.push_str(&format!("datetime('{iso}')"));
    } else if let Some((y, m, d)) = value.as_date() {
        out.push_str(&format!("date({y}, {m}, {d})"));
    } else if let Some((h, m, s, us)) = value.as_time() {
        out.push_str(&format!("time({h}, {m}, {s}, {us})"));
    } else if let Some((d, s, us)) = value.as_timedelta() {
        out.push_str(&format!(
            "timedelta(days={d}, seconds={s}, microseconds={us})"
        ));
    } else if let Some(text) = value.as_decimal() {
        out.push_str(&format!("Decimal('{text}')"));
    } else if let Some(items) = value.as_set() {
        let frozen = value.as_object().is_some_and(|o| o.class == "frozenset");
        if items.is_empty() {
            out.push_str(if frozen { "frozenset()" } else { "set()" });
            return;
        }
        out.push_str(if frozen { "frozenset({" } else { "{" });
        // A set has no order (Python's depends on the process's hash seed): sorted text.
        let mut texts: Vec<String> = items.iter().map(readable).collect();
        texts.sort();
        out.push_str(&texts.join(", "));
        out.push_str(if frozen { "})" } else { "}" });
    } else if let Some((class, fields)) = value.as_message() {
        out.push_str(class);
        out.push('(');
        match fields.get("content") {
            Some(c) => write_readable(out, c),
            None => out.push_str("''"),
        }
        for (k, v) in fields.iter() {
            let key = k.as_str().unwrap_or("");
            let default = match v {
                Value::Nil => true,
                _ => {
                    v.as_map().is_some_and(|m| m.is_empty())
                        || v.as_list().is_some_and(|l| l.is_empty())
                }
            };
            if matches!(key, "content" | "type")
                || default
                || (key == "status" && v.as_str() == Some("success"))
            {
                continue;
            }
            out.push_str(&format!(", {key}="));
            write_readable(out, v);
        }
        out.push(')');
    } else if let Some((node, arg)) = value.as_send() {
        out.push_str(&format!("Send({}, ", repr(&Value::from(node))));
        write_readable(out, arg);
        out.push(')');
    } else if let Some((v, id)) = value.as_interrupt() {
        out.push_str("Interrupt(");
        write_readable(out, v);
        out.push_str(&format!(", id='{id}')"));
    } else if let Some((_, class, fields)) = value.as_pydantic_v2().or_else(|| value.as_dataclass())
    {
        write_fields(out, class, fields);
    } else if let Some((_, class, v)) = value.as_enum_member() {
        out.push_str(class);
        out.push('(');
        write_readable(out, v);
        out.push(')');
    } else {
        out.push_str(&repr(value));
    }
}

/// A LangChain message as one line: `human: hello`, `ai: … → tool(args)`, `tool[id]: …`.
pub fn message_line(value: &Value) -> Option<String> {
    let (class, fields) = value.as_message()?;
    let role = fields
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or(class)
        .to_owned();
    let content = match fields.get("content") {
        Some(c) => c.as_str().map(str::to_owned).unwrap_or_else(|| readable(c)),
        None => String::new(),
    };
    let mut line = match fields.get("tool_call_id").and_then(Value::as_str) {
        Some(id) => format!("{role}[{id}]: {content}"),
        None => format!("{role}: {content}"),
    };
    if let Some(calls) = fields.get("tool_calls").and_then(Value::as_list) {
        for call in calls {
            let name = call.get("name").and_then(Value::as_str).unwrap_or("?");
            let args = call.get("args").map(readable).unwrap_or_default();
            line.push_str(&format!(" → {name}({args})"));
        }
    }
    Some(line)
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
