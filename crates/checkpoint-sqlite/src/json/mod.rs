//! Metadata as JSON text, written and read exactly as Python's `json` module does.
//!
//! LangGraph's SQLite saver stores metadata as the UTF-8 bytes of
//! `json.dumps(metadata, ensure_ascii=False)` and reads it back with `json.loads`. The
//! writer here reproduces those bytes: separators `", "` and `": "`, non-ASCII characters
//! written as they are, `"` `\` and the control characters below U+0020 escaped (`\n`,
//! `\r`, `\t`, `\b`, `\f` by name, the others as lowercase `\u00XX`), floats as Python's
//! `repr` (`NaN`, `Infinity`, `-Infinity` for the non-finite ones), and non-string map keys
//! turned into strings as Python turns them (`1`, `1.5`, `true`, `null`). Bytes and
//! extension values have no JSON form; Python raises `TypeError` on them and
//! [`to_json`] returns [`Error::Encode`].
//!
//! The reader accepts what `json.loads` accepts, including `NaN` and `Infinity`, and keeps
//! the key order; a repeated key keeps its first position and its last value, as a Python
//! dict built from the pairs does. Nesting is bounded so hostile text cannot exhaust the
//! stack.
//!
//! **Why a reader of its own** beside the shared `stategraph_checkpoint::serde::json_text`
//! (which the legacy `json` tag and the Postgres saver use): the two differ where Python's
//! readers differ for this column. `json.loads` of SQLite metadata reads a lone surrogate
//! escape (`"\ud800"`) into a string Python can hold; a Rust string cannot, so this reader
//! keeps the row readable with U+FFFD (a test pins it), where the shared one refuses the text
//! (right for a checkpoint blob, whose bytes must round-trip). Folding would turn such rows
//! into errors, a behaviour change; the shared reader also gathers each object's pairs for its
//! hook before building the map, a pass this reader (straight into the map) does not make on
//! every `get_tuple` and `list` row.

use stategraph_checkpoint::version_gen::python_float_repr;
use stategraph_checkpoint::{Error, Result, Value};

mod reader;

pub use reader::from_json;

/// `json.dumps(value, ensure_ascii=False)`.
pub fn to_json(value: &Value) -> Result<String> {
    let mut out = String::new();
    write_value(&mut out, value)?;
    Ok(out)
}

fn write_value(out: &mut String, value: &Value) -> Result<()> {
    match value {
        Value::Nil => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(n) => out.push_str(&n.to_string()),
        Value::UInt(n) => out.push_str(&n.to_string()),
        Value::Float(f) => out.push_str(&float_text(*f)),
        Value::Str(s) => write_str(out, s),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item)?;
            }
            out.push(']');
        }
        Value::Map(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(out, &key_text(k)?);
                out.push_str(": ");
                write_value(out, v)?;
            }
            out.push('}');
        }
        Value::Bytes(_) => return Err(not_json("bytes")),
        Value::Ext(_) => return Err(not_json("an extension object")),
    }
    Ok(())
}

fn not_json(what: &str) -> Error {
    Error::Encode(format!("{what} in metadata cannot be written as JSON"))
}

/// A float as Python's JSON encoder writes it.
fn float_text(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        python_float_repr(f)
    }
}

/// A map key as a JSON object key: strings as they are, scalars as Python converts them.
fn key_text(key: &Value) -> Result<String> {
    Ok(match key {
        Value::Str(s) => s.to_string(),
        Value::Float(f) => float_text(*f),
        Value::Bool(true) => "true".to_owned(),
        Value::Bool(false) => "false".to_owned(),
        Value::Nil => "null".to_owned(),
        Value::Int(n) => n.to_string(),
        Value::UInt(n) => n.to_string(),
        other => {
            return Err(Error::Encode(format!(
                "metadata map key {other:?} cannot be written as JSON"
            )))
        }
    })
}

/// A quoted JSON string with Python's `ensure_ascii=False` escapes.
fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}
