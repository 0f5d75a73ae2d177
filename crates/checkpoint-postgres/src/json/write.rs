//! The writer: a [`Value`] as JSONB text, or why it has none ([`NotJson`]). Below both the
//! general path (`to_text`) and the checkpoint column written straight from a checkpoint.

use std::fmt;

use stategraph_checkpoint::{Error, Result, Value};

/// How deep a value may nest before it is refused (JSONB itself stops far earlier than
/// the stack would).
pub(crate) const MAX_DEPTH: usize = 512;

/// Why a value has no JSONB form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotJson {
    /// Raw bytes.
    Bytes,
    /// A msgpack extension value (a Python object).
    Ext,
    /// NaN or an infinity.
    NonFinite,
    /// A string (or key) holding a NUL character.
    Nul,
    /// A map key that is not a string or a scalar.
    Key,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl fmt::Display for NotJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotJson::Bytes => "bytes have no JSON form",
            NotJson::Ext => "a Python object (msgpack extension) has no JSON form",
            NotJson::NonFinite => "NaN and infinities have no JSON form",
            NotJson::Nul => "JSONB cannot hold a string with a NUL character",
            NotJson::Key => "a map key that is not a string or a scalar has no JSON form",
            NotJson::TooDeep => "the value nests too deeply",
        })
    }
}

/// True for the values LangGraph keeps inline in the checkpoint's `channel_values`
/// (`None`, `bool`, `int`, `float`, `str`) that also read back unchanged: not NaN or an
/// infinity, not `-0.0` (JSONB's numeric has no negative zero: it reads back `0.0`; the
/// saver-fuzz differential test found it), and not a string with a NUL character.
pub(crate) fn is_inline(value: &Value) -> bool {
    match value {
        Value::Nil | Value::Bool(_) | Value::Int(_) | Value::UInt(_) => true,
        Value::Float(x) => x.is_finite() && !(*x == 0.0 && x.is_sign_negative()),
        Value::Str(s) => !s.contains('\0'),
        _ => false,
    }
}

/// The JSON text of a value, or why it has none.
pub(crate) fn to_text(value: &Value) -> Result<String, NotJson> {
    let mut out = String::new();
    write(&mut out, value, 0)?;
    Ok(out)
}

/// The JSON text of a value, with the reason it has none as an [`Error::Encode`].
pub(crate) fn encode(value: &Value, what: &str) -> Result<String> {
    to_text(value).map_err(|why| Error::Encode(format!("{what}: {why}")))
}

pub(super) fn write(out: &mut String, value: &Value, depth: usize) -> Result<(), NotJson> {
    if depth > MAX_DEPTH {
        return Err(NotJson::TooDeep);
    }
    match value {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(n) => out.push_str(&n.to_string()),
        Value::UInt(n) => out.push_str(&n.to_string()),
        Value::Float(x) => out.push_str(&float_text(*x)?),
        Value::Str(s) => write_str(out, s)?,
        Value::Bytes(_) => return Err(NotJson::Bytes),
        Value::Ext(_) => return Err(NotJson::Ext),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item, depth + 1)?;
            }
            out.push(']');
        }
        Value::Map(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, &key_text(k)?)?;
                out.push(':');
                write(out, v, depth + 1)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A finite float in positional form with a decimal point, so JSONB keeps it a float.
pub(super) fn float_text(x: f64) -> Result<String, NotJson> {
    if !x.is_finite() {
        return Err(NotJson::NonFinite);
    }
    // `Display` gives the shortest digits that read back as `x`, never in exponent form.
    let mut text = x.to_string();
    if !text.contains('.') {
        text.push_str(".0");
    }
    Ok(text)
}

/// A map key as `json.dumps` turns it into a JSON object key.
fn key_text(key: &Value) -> Result<String, NotJson> {
    Ok(match key {
        Value::Str(s) => s.to_string(),
        Value::Int(n) => n.to_string(),
        Value::UInt(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Nil => "null".to_owned(),
        Value::Float(x) => float_text(*x)?,
        _ => return Err(NotJson::Key),
    })
}

pub(super) fn write_str(out: &mut String, s: &str) -> Result<(), NotJson> {
    if s.contains('\0') {
        return Err(NotJson::Nul);
    }
    // serde_json escapes exactly what JSON requires; a `&str` always serializes.
    let quoted = serde_json::to_string(s).map_err(|_| NotJson::Nul)?;
    out.push_str(&quoted);
    Ok(())
}
