//! JSONB text: stored values to JSON and back, with the types Python's saver keeps apart.
//!
//! LangGraph writes the checkpoint and metadata columns with `json.dumps` and Postgres
//! normalizes them into JSONB. What survives that trip decides what may be stored inline:
//!
//! * nil, booleans, integers and strings survive as they are, except strings holding a
//!   NUL character, which JSONB refuses;
//! * a float survives as a float only if its text has a decimal point: JSONB keeps numbers
//!   as `numeric` and prints `1e16` back as `10000000000000000`, an integer. Python writes
//!   `1e+16` and so reads an integer back; here every finite float is written positionally
//!   with at least one fractional digit (`10000000000000000.0`), which JSONB keeps as
//!   written and which reads back, in Rust and in Python, as the same float;
//! * NaN and the infinities have no JSON form at all (Python writes `NaN`, which Postgres
//!   rejects);
//! * bytes and extension values (Python objects) have no JSON form either.
//!
//! Map keys are written as Python's `json.dumps` writes them: strings as they are, integers,
//! floats, booleans and nil as their JSON text; any other key has no JSON form.

use std::fmt;

use stategraph_checkpoint::serde::json_text::{self, JsonOptions};
use stategraph_checkpoint::{Error, Result, Value};

mod checkpoint;

pub(crate) use checkpoint::checkpoint_text;

/// How deep a value may nest before it is refused (JSONB itself stops far earlier than
/// the stack would).
pub(crate) const MAX_DEPTH: usize = 512;

/// Reads JSON text as Postgres prints a JSONB value: objects become maps with string keys
/// in the printed order; a number with a fraction or an exponent becomes a float
/// (correctly rounded, however many digits JSONB prints), any other number an integer
/// (beyond the 64-bit range, a float, as `numeric` reads back). Linear in the text (the
/// shared reader of [`json_text`]; `serde_json` without its workspace-wide
/// `float_roundtrip` feature rounds long decimals inexactly).
pub(crate) fn parse(text: &str) -> Result<Value> {
    let options = JsonOptions {
        big_ints_as_floats: true,
        max_depth: MAX_DEPTH,
    };
    json_text::parse(text.as_bytes(), &options)
}

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

fn write(out: &mut String, value: &Value, depth: usize) -> Result<(), NotJson> {
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
fn float_text(x: f64) -> Result<String, NotJson> {
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

fn write_str(out: &mut String, s: &str) -> Result<(), NotJson> {
    if s.contains('\0') {
        return Err(NotJson::Nul);
    }
    // serde_json escapes exactly what JSON requires; a `&str` always serializes.
    let quoted = serde_json::to_string(s).map_err(|_| NotJson::Nul)?;
    out.push_str(&quoted);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use stategraph_checkpoint::{list, map, Map};

    #[test]
    fn floats_keep_a_decimal_point_at_every_magnitude() {
        assert_eq!(float_text(1.0).unwrap(), "1.0");
        assert_eq!(float_text(0.1).unwrap(), "0.1");
        assert_eq!(float_text(1e16).unwrap(), "10000000000000000.0");
        assert_eq!(float_text(-2.5e-7).unwrap(), "-0.00000025");
        assert_eq!(float_text(f64::NAN), Err(NotJson::NonFinite));
        for x in [
            1e16,
            5e-324,
            1.7976931348623157e308,
            0.30000000000000004,
            1.7976931348623157e50,
            1.2345678901234567e-300,
        ] {
            let back = parse(&float_text(x).unwrap()).unwrap();
            assert_eq!(back, Value::Float(x));
        }
    }

    #[test]
    fn postgres_output_parses_with_big_numbers_as_floats() {
        let v =
            parse(r#"{"a": [1, -2, 18446744073709551615, 18446744073709551616, 2.50]}"#).unwrap();
        assert_eq!(
            v.get("a"),
            Some(&list![1, -2, u64::MAX, 18446744073709551616.0, 2.5])
        );
        let deep = "[".repeat(MAX_DEPTH + 2);
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn values_roundtrip_with_types_apart() {
        let v = map! {
            "i" => 1, "f" => 1.0, "b" => true, "n" => Value::Nil,
            "s" => "h\u{e9}\"llo\n", "l" => list![1, "x"], "big" => u64::MAX,
        };
        assert_eq!(parse(&to_text(&v).unwrap()).unwrap(), v);
    }

    #[test]
    fn scalar_keys_are_written_as_python_writes_them() {
        let v = Value::Map(Map::from_pairs(vec![
            (Value::Int(1), Value::from("a")),
            (Value::Bool(true), Value::from("b")),
            (Value::Nil, Value::from("c")),
        ]));
        assert_eq!(to_text(&v).unwrap(), r#"{"1":"a","true":"b","null":"c"}"#);
        let bad = Value::Map(Map::from_pairs(vec![(list![1], Value::Nil)]));
        assert_eq!(to_text(&bad), Err(NotJson::Key));
    }

    #[test]
    fn values_without_a_json_form_are_refused() {
        assert_eq!(to_text(&Value::bytes(vec![1])), Err(NotJson::Bytes));
        assert_eq!(to_text(&list!["a\0b"]), Err(NotJson::Nul));
        assert!(!is_inline(&Value::from("a\0b")));
        assert!(!is_inline(&Value::Float(f64::INFINITY)));
        assert!(!is_inline(&Value::Float(-0.0)));
        assert!(is_inline(&Value::Float(0.0)));
        assert!(is_inline(&Value::Float(1e300)));
        let mut deep = Value::Nil;
        for _ in 0..=MAX_DEPTH + 1 {
            deep = Value::list(vec![deep]);
        }
        assert_eq!(to_text(&deep), Err(NotJson::TooDeep));
    }
}
