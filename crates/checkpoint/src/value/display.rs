//! `Display` for [`Value`]: Python's `str()` at the top (a string is its text, no quotes),
//! and inside containers, as in Python, the `repr`-like form [`Value::repr`] writes: Python
//! objects written as a person writes them rather than as the stored constructor call.
//!
//! | stored value | [`Value::repr`] | `Display` at the top (`str()`) |
//! |---|---|---|
//! | `None`, bools, numbers, bytes | Python's `repr`: `None`, `True`, `1.0`, `b'\x00'` | the same |
//! | strings | `'hi'` | `hi` |
//! | list (and tuple: tuples are stored as lists) | `[1, 'a']` | the same |
//! | dict | `{'k': 1}`, in insertion order | the same |
//! | `uuid.UUID` | `UUID('12345678-…')` | `12345678-…` |
//! | `datetime` / `date` / `time` / `timedelta` | `datetime('2024-05-06T07:08:09+00:00')`, `date(2024, 5, 6)`, `time(7, 8, 9, 0)`, `timedelta(days=1, seconds=5, microseconds=0)` | `2024-05-06 07:08:09+00:00`, `2024-05-06`, `07:08:09`, `1 day, 0:00:05` |
//! | `Decimal` | `Decimal('12.50')` | `12.50` |
//! | `set` / `frozenset` | `{'a', 'b'}` (items sorted by their text: a set has no order), `set()`, `frozenset({…})` | the same |
//! | LangChain message | `HumanMessage('hi', id='…')`: the content, then every field that is not empty or default | the same |
//! | `Send` / `Interrupt` | `Send('node', {…})`, `Interrupt('question', id='…')` | the same |
//! | dataclass, NamedTuple, pydantic model | `Point(x=1, y=2)` | the same |
//! | `Enum` member | `Color('red')` | the same |
//! | anything else (numpy arrays, delta snapshots) | the stored call, e.g. `module.Class(…)` | the same |
//!
//! So `println!("{}", interrupt.value)` prints a question as the user wrote it, and
//! `println!("{}", value.repr())` where quotes tell a string from a number (the CLI's
//! `show` and `diff`, `MemorySaver::dump`). [`Value::chat_line`] writes a message as a
//! chat line instead (`human: hi`).

use std::fmt;

use super::repr::{repr, write_dict, write_list, write_str};
use super::Value;

impl fmt::Display for Value {
    /// Python's `str()`: a string without quotes, UUIDs, datetimes and decimals as their
    /// text; everything else as [`Value::repr`] writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Str(s) => f.write_str(s),
            Value::Ext(_) => match str_text(self) {
                Some(text) => f.write_str(&text),
                None => fmt::Display::fmt(&self.repr(), f),
            },
            _ => fmt::Display::fmt(&self.repr(), f),
        }
    }
}

/// A [`Value`] written as Python's `repr()` reads (strings quoted), from [`Value::repr`].
#[derive(Clone, Copy, Debug)]
pub struct Repr<'a>(&'a Value);

impl fmt::Display for Repr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        write_readable(&mut out, self.0);
        f.write_str(&out)
    }
}

/// Python's `str()` of the objects whose `str` is not their `repr`, `None` for the others.
fn str_text(value: &Value) -> Option<String> {
    if let Some(u) = value.as_uuid() {
        Some(u.hyphenated().to_string())
    } else if let Some(iso) = value.as_datetime_iso() {
        // `isoformat(sep=" ")`: the date, a space, the time.
        Some(match iso.split_once('T') {
            Some((date, time)) => format!("{date} {time}"),
            None => iso.to_owned(),
        })
    } else if let Some((y, m, d)) = value.as_date() {
        Some(format!("{y:04}-{m:02}-{d:02}"))
    } else if let Some((h, m, s, us)) = value.as_time() {
        Some(match us {
            0 => format!("{h:02}:{m:02}:{s:02}"),
            us => format!("{h:02}:{m:02}:{s:02}.{us:06}"),
        })
    } else if let Some((days, seconds, us)) = value.as_timedelta() {
        Some(timedelta_text(days, seconds, us))
    } else {
        value.as_decimal().map(str::to_owned)
    }
}

/// `str(timedelta)`: `[D day[s], ]H:MM:SS[.ffffff]` (seconds and microseconds are
/// normalized by Python, only the days can be negative).
fn timedelta_text(days: i64, seconds: i64, us: i64) -> String {
    let mut out = String::new();
    if days != 0 {
        let plural = if days.abs() == 1 { "" } else { "s" };
        out.push_str(&format!("{days} day{plural}, "));
    }
    let (h, m, s) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    out.push_str(&format!("{h}:{m:02}:{s:02}"));
    if us != 0 {
        out.push_str(&format!(".{us:06}"));
    }
    out
}

impl Value {
    /// The value as Python's `repr()` reads: strings quoted, at the top too (`'hi'`); what
    /// `Display` writes inside lists and dicts. `format!("{}", v.repr())`.
    pub fn repr(&self) -> Repr<'_> {
        Repr(self)
    }

    /// A LangChain message as one chat line: `human: hello`, `ai: … → tool({args})`,
    /// `tool[call id]: result`; `None` for a value that is not a message.
    pub fn chat_line(&self) -> Option<String> {
        let (class, fields) = self.as_message()?;
        let role = fields.get("type").and_then(Value::as_str).unwrap_or(class);
        let content = match fields.get("content") {
            Some(Value::Str(s)) => s.to_string(),
            Some(other) => other.repr().to_string(),
            None => String::new(),
        };
        let mut line = match fields.get("tool_call_id").and_then(Value::as_str) {
            Some(id) => format!("{role}[{id}]: {content}"),
            None => format!("{role}: {content}"),
        };
        if let Some(calls) = fields.get("tool_calls").and_then(Value::as_list) {
            for call in calls {
                let name = call.get("name").and_then(Value::as_str).unwrap_or("?");
                let args = call.get("args").map(|a| a.repr().to_string());
                let args = args.unwrap_or_default();
                line.push_str(&format!(" → {name}({args})"));
            }
        }
        Some(line)
    }
}

fn write_readable(out: &mut String, value: &Value) {
    match value {
        Value::List(items) => write_list(out, items, write_readable),
        Value::Map(map) => write_dict(out, map, write_readable),
        Value::Ext(_) => write_object(out, value),
        scalar => out.push_str(&repr(scalar)),
    }
}

fn write_fields(out: &mut String, class: &str, fields: &super::Map) {
    out.push_str(class);
    out.push('(');
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match k.as_str() {
            Some(k) => out.push_str(k),
            None => write_readable(out, k),
        }
        out.push('=');
        write_readable(out, v);
    }
    out.push(')');
}

/// True for a message field left at its default (nothing worth showing).
fn is_default(key: &str, v: &Value) -> bool {
    match v {
        Value::Nil => true,
        Value::Map(m) => m.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Str(s) => key == "status" && &**s == "success",
        _ => false,
    }
}

fn write_object(out: &mut String, value: &Value) {
    if let Some(u) = value.as_uuid() {
        out.push_str(&format!("UUID('{}')", u.hyphenated()));
    } else if let Some(iso) = value.as_datetime_iso() {
        out.push_str("datetime(");
        write_str(out, iso);
        out.push(')');
    } else if let Some((y, m, d)) = value.as_date() {
        out.push_str(&format!("date({y}, {m}, {d})"));
    } else if let Some((h, m, s, us)) = value.as_time() {
        out.push_str(&format!("time({h}, {m}, {s}, {us})"));
    } else if let Some((d, s, us)) = value.as_timedelta() {
        out.push_str(&format!(
            "timedelta(days={d}, seconds={s}, microseconds={us})"
        ));
    } else if let Some(text) = value.as_decimal() {
        out.push_str("Decimal(");
        write_str(out, text);
        out.push(')');
    } else if let Some(items) = value.as_set() {
        let frozen = value.as_object().is_some_and(|o| o.class == "frozenset");
        if items.is_empty() {
            out.push_str(if frozen { "frozenset()" } else { "set()" });
            return;
        }
        // Python's set order depends on its hash seed: sort by text for a stable output.
        let mut texts: Vec<String> = items.iter().map(|v| v.repr().to_string()).collect();
        texts.sort();
        out.push_str(if frozen { "frozenset({" } else { "{" });
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
            if matches!(key, "content" | "type") || is_default(key, v) {
                continue;
            }
            out.push_str(", ");
            out.push_str(key);
            out.push('=');
            write_readable(out, v);
        }
        out.push(')');
    } else if let Some((node, arg)) = value.as_send() {
        out.push_str("Send(");
        write_str(out, node);
        out.push_str(", ");
        write_readable(out, arg);
        out.push(')');
    } else if let Some((v, id)) = value.as_interrupt() {
        out.push_str("Interrupt(");
        write_readable(out, v);
        out.push_str(", id=");
        write_str(out, id);
        out.push(')');
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
