//! The search query: its prefix condition and the SQL prefilter that lets SQLite skip rows
//! (the exact filter still runs in Rust on what it keeps).

use rusqlite::types::Value as SqlValue;
use stategraph_store::Namespace;

/// `prefix = ? OR prefix GLOB ?` for a namespace and its descendants, GLOB metacharacters
/// escaped (as LangGraph does: case-sensitive, whole labels only).
pub(crate) fn prefix_condition(prefix: &Namespace) -> Option<(String, String)> {
    if prefix.is_empty() {
        return None;
    }
    let text = prefix.to_text();
    let escaped = text
        .replace('[', "[[]")
        .replace('*', "[*]")
        .replace('?', "[?]");
    Some((text, format!("{escaped}.*")))
}

/// SQL conditions that keep every row `filter` matches and drop most others, so SQLite skips
/// rows without decoding them in Rust (which still applies the exact filter afterwards).
/// Only the simple cases: a top-level key without `.` or `"`, compared with a string or a
/// number by equality or `$eq $gt $gte $lt $lte`. The JSON path and the operand are bound
/// parameters; the only SQL text is chosen here from a fixed set.
pub(crate) fn prefilter(
    filter: &serde_json::Value,
    conds: &mut Vec<String>,
    args: &mut Vec<SqlValue>,
) {
    use serde_json::Value;
    let Value::Object(f) = filter else { return };
    let operand = |v: &Value| match v {
        Value::String(s) => Some(SqlValue::Text(s.clone())),
        // Beyond 2^53 a float parameter could miss an exact integer: leave those to Rust.
        Value::Number(n) => n
            .as_f64()
            .filter(|x| x.is_finite() && x.abs() < 9.0e15)
            .map(SqlValue::Real),
        _ => None,
    };
    for (key, cond) in f {
        if key.is_empty() || key.contains(['.', '"', '\\']) {
            continue;
        }
        let path = format!("$.\"{key}\"");
        let mut push = |sql_op: &str, v: &Value| {
            if let Some(x) = operand(v) {
                args.push(SqlValue::Text(path.clone()));
                let p = args.len();
                args.push(x);
                conds.push(format!(
                    "json_extract(CAST(value AS TEXT), ?{p}) {sql_op} ?{}",
                    p + 1
                ));
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
}
