//! Search filters: LangGraph's JSON-like matching of an item's value.
//!
//! A filter is a JSON object `{key: condition, …}`; every key must hold. A condition is
//! * an object whose keys start with `$`: operators, all of which must hold: `$eq`, `$ne`
//!   (JSON equality, numbers compared by value so `1 == 1.0`), `$gt`, `$gte`, `$lt`, `$lte`
//!   (numbers numerically, strings lexicographically; any other pairing, or a missing key,
//!   does not match);
//! * another object: the item's value at the key must be an object matching it recursively;
//! * an array: an array of the same length matching element-wise;
//! * a scalar: equality.
//!
//! A key is looked up literally first (as LangGraph's `InMemoryStore` does); if the value has
//! no such key and the key contains `.`, it is read as a nested path (`"a.b"` = `value.a.b`,
//! as the SQL stores' `$.a.b` JSON paths do). Filters are evaluated in Rust on decoded
//! values on every backend: no filter key or value ever becomes SQL or JSON-path text.

use crate::error::{Result, StoreError};
use crate::item::Document;
use serde_json::Value;
use std::cmp::Ordering;

/// The operators LangGraph's stores accept.
pub const OPERATORS: [&str; 6] = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"];

/// What a [`Comparison`] compares with: a string, or a number that a float parameter
/// compares exactly (finite, below 2^53 in magnitude).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand<'a> {
    /// A string, compared bytewise.
    Str(&'a str),
    /// A number.
    Num(f64),
}

/// One comparison of a top-level key that a SQL backend may run before Rust applies the
/// exact filter ([`prefilter_comparisons`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison<'a> {
    /// The key.
    pub key: &'a str,
    /// The SQL operator: `=`, `>`, `>=`, `<` or `<=`.
    pub op: &'static str,
    /// The operand.
    pub operand: Operand<'a>,
}

/// The comparisons of `filter` that keep every row it matches and drop most others, so a SQL
/// backend can skip rows without decoding them (Rust still applies the exact filter): for a
/// top-level key that is not empty and holds none of `forbidden` (`.` at least, a nested
/// path), equality with a scalar or `$eq $gt $gte $lt $lte` with a string or a number (beyond
/// 2^53 a float parameter could miss an exact integer, so those stay with Rust), in the
/// filter's order. The one mapping from filter operators to SQL operators every SQL store uses.
pub fn prefilter_comparisons<'a>(filter: &'a Value, forbidden: &[char]) -> Vec<Comparison<'a>> {
    let Value::Object(f) = filter else {
        return Vec::new();
    };
    let operand = |v: &'a Value| match v {
        Value::String(s) => Some(Operand::Str(s)),
        Value::Number(n) => n
            .as_f64()
            .filter(|x| x.is_finite() && x.abs() < 9.0e15)
            .map(Operand::Num),
        _ => None,
    };
    let mut out = Vec::new();
    for (key, cond) in f {
        if key.is_empty() || key.contains('.') || key.contains(forbidden) {
            continue;
        }
        let mut push = |op: &'static str, v: &'a Value| {
            if let Some(operand) = operand(v) {
                out.push(Comparison { key, op, operand });
            }
        };
        match cond {
            Value::Object(ops) if ops.keys().any(|k| k.starts_with('$')) => {
                for (op, v) in ops {
                    match op.as_str() {
                        "$eq" => push("=", v),
                        "$gt" => push(">", v),
                        "$gte" => push(">=", v),
                        "$lt" => push("<", v),
                        "$lte" => push("<=", v),
                        _ => {}
                    }
                }
            }
            scalar => push("=", scalar),
        }
    }
    out
}

/// Checks a filter's shape: an object whose operator objects use known operators only.
pub fn validate(filter: &Value) -> Result<()> {
    let Value::Object(m) = filter else {
        return Err(StoreError::InvalidFilter(format!(
            "a filter must be a JSON object, got {filter}"
        )));
    };
    m.values().try_for_each(validate_condition)
}

fn validate_condition(cond: &Value) -> Result<()> {
    match cond {
        Value::Object(m) if m.keys().any(|k| k.starts_with('$')) => {
            for k in m.keys() {
                if !OPERATORS.contains(&k.as_str()) {
                    return Err(StoreError::InvalidFilter(format!(
                        "unsupported operator {k:?} (supported: {})",
                        OPERATORS.join(", ")
                    )));
                }
            }
            Ok(())
        }
        Value::Object(m) => m.values().try_for_each(validate_condition),
        Value::Array(a) => a.iter().try_for_each(validate_condition),
        _ => Ok(()),
    }
}

/// Whether `value` satisfies `filter` (which [`validate`] accepted; anything else does not
/// match).
pub fn matches(value: &Document, filter: &Value) -> bool {
    let Value::Object(f) = filter else {
        return false;
    };
    f.iter().all(|(k, cond)| compare(lookup(value, k), cond))
}

fn lookup<'a>(value: &'a Document, key: &str) -> Option<&'a Value> {
    if let Some(v) = value.get(key) {
        return Some(v);
    }
    if !key.contains('.') {
        return None;
    }
    let mut parts = key.split('.');
    let mut cur = value.get(parts.next()?)?;
    for p in parts {
        cur = cur.as_object()?.get(p)?;
    }
    Some(cur)
}

fn compare(item: Option<&Value>, cond: &Value) -> bool {
    match cond {
        Value::Object(ops) if ops.keys().any(|k| k.starts_with('$')) => {
            ops.iter().all(|(op, operand)| apply(item, op, operand))
        }
        Value::Object(m) => match item {
            Some(Value::Object(iv)) => m.iter().all(|(k, c)| compare(iv.get(k), c)),
            _ => false,
        },
        Value::Array(fa) => match item {
            Some(Value::Array(ia)) => {
                ia.len() == fa.len() && ia.iter().zip(fa).all(|(i, c)| compare(Some(i), c))
            }
            _ => false,
        },
        scalar => json_eq(item.unwrap_or(&Value::Null), scalar),
    }
}

fn apply(item: Option<&Value>, op: &str, operand: &Value) -> bool {
    let v = item.unwrap_or(&Value::Null);
    match op {
        "$eq" => json_eq(v, operand),
        "$ne" => !json_eq(v, operand),
        "$gt" => order(v, operand) == Some(Ordering::Greater),
        "$gte" => matches!(order(v, operand), Some(Ordering::Greater | Ordering::Equal)),
        "$lt" => order(v, operand) == Some(Ordering::Less),
        "$lte" => matches!(order(v, operand), Some(Ordering::Less | Ordering::Equal)),
        _ => false,
    }
}

fn order(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// JSON equality where numbers compare by value (`1 == 1.0`, as in Python).
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefilter_comparisons_keep_the_simple_cases_in_order() {
        let filter = serde_json::json!({
            "a": "x",
            "n": {"$gte": 1, "$ne": 2, "$lt": 9.5},
            "nested.key": 1,
            "": 1,
            "q\"uote": 1,
            "big": 1e300,
            "huge": 18446744073709551615u64,
            "list": [1],
        });
        let found = prefilter_comparisons(&filter, &['"']);
        let expected = [
            ("a", "=", Operand::Str("x")),
            ("n", ">=", Operand::Num(1.0)),
            ("n", "<", Operand::Num(9.5)),
        ];
        let got: Vec<_> = found.iter().map(|c| (c.key, c.op, c.operand)).collect();
        assert_eq!(got, expected);
        assert!(prefilter_comparisons(&serde_json::json!([1]), &[]).is_empty());
    }
    use serde_json::json;

    fn doc(v: Value) -> Document {
        match v {
            Value::Object(m) => m,
            _ => Document::new(),
        }
    }

    #[test]
    fn equality_nesting_and_operators() {
        let v = doc(json!({"color": "red", "n": 3, "nested": {"a": {"b": 1}}, "tags": ["x", "y"]}));
        assert!(matches(&v, &json!({"color": "red"})));
        assert!(!matches(&v, &json!({"color": "blue"})));
        assert!(matches(&v, &json!({"n": 3.0})));
        assert!(matches(&v, &json!({"nested": {"a": {"b": 1}}})));
        assert!(matches(&v, &json!({"nested.a.b": 1})));
        assert!(matches(&v, &json!({"tags": ["x", "y"]})));
        assert!(!matches(&v, &json!({"tags": ["x"]})));
        assert!(matches(&v, &json!({"n": {"$gt": 2, "$lte": 3}})));
        assert!(!matches(&v, &json!({"n": {"$lt": 3}})));
        assert!(matches(&v, &json!({"color": {"$ne": "blue"}})));
        assert!(matches(&v, &json!({"missing": {"$ne": 1}})));
        assert!(!matches(&v, &json!({"missing": {"$gt": 1}})));
        assert!(matches(&v, &json!({"color": {"$gte": "red"}})));
        assert!(
            !matches(&v, &json!({"color": {"$gt": 1}})),
            "string vs number never orders"
        );
    }

    #[test]
    fn bad_filters_are_refused() {
        assert!(validate(&json!({"a": {"$regex": ".*"}})).is_err());
        assert!(validate(&json!([1])).is_err());
        assert!(validate(&json!({"a": {"b": {"$in": [1]}}})).is_err());
        assert!(validate(&json!({"a": {"$eq": 1}})).is_ok());
    }
}
