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

use stategraph_checkpoint::serde::json_text::{self, JsonOptions};
use stategraph_checkpoint::{Result, Value};

mod checkpoint;
mod write;

pub(crate) use checkpoint::checkpoint_text;
pub(crate) use write::{encode, is_inline, to_text, NotJson, MAX_DEPTH};

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

#[cfg(test)]
mod tests {
    use super::write::float_text;
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
