//! The search query: the namespace prefix as `LIKE` patterns and the SQL prefilter that lets
//! the server skip rows (the exact filter still runs in Rust on what it keeps).

use stategraph_store::Namespace;

/// A bound parameter of a built query.
pub(crate) type Param = Box<dyn tokio_postgres::types::ToSql + Sync + Send>;

/// SQL conditions that keep every row `filter` matches and drop most others, so the server
/// sends only likely matches (Rust still applies the exact filter). Only the simple cases:
/// a top-level key without `.`, compared with a string or a number by equality or
/// `$eq $gt $gte $lt $lte`. Key and operand are bound parameters; the SQL text is chosen here
/// from a fixed set. Comparisons are guarded by `jsonb_typeof` inside `CASE` (so a cast never
/// sees the wrong type) and strings compare bytewise (`COLLATE "C"`), as Rust compares them.
pub(crate) fn prefilter(
    filter: &serde_json::Value,
    conds: &mut Vec<String>,
    args: &mut Vec<Param>,
) {
    use serde_json::Value;
    let Value::Object(f) = filter else { return };
    for (key, cond) in f {
        if key.is_empty() || key.contains('.') {
            continue;
        }
        let mut push = |op: &str, v: &Value| {
            let (kind, operand): (&str, Param) = match v {
                Value::String(s) => ("string", Box::new(s.clone())),
                // Beyond 2^53 float and exact comparisons may disagree: leave those to Rust.
                Value::Number(n) => match n.as_f64() {
                    Some(x) if x.is_finite() && x.abs() < 9.0e15 => ("number", Box::new(x)),
                    _ => return,
                },
                _ => return,
            };
            args.push(Box::new(key.clone()));
            let k = args.len();
            args.push(operand);
            let o = k + 1;
            let cmp = match (op, kind) {
                ("=", "string") => format!("value->(${k}::text) = to_jsonb(${o}::text)"),
                ("=", _) => format!("value->(${k}::text) = to_jsonb(${o}::float8)"),
                (_, "string") => format!(
                    "CASE WHEN jsonb_typeof(value->(${k}::text)) = 'string' \
                     THEN (value->>(${k}::text)) COLLATE \"C\" {op} ${o}::text ELSE false END"
                ),
                _ => format!(
                    "CASE WHEN jsonb_typeof(value->(${k}::text)) = 'number' \
                     THEN (value->>(${k}::text))::float8 {op} ${o}::float8 ELSE false END"
                ),
            };
            conds.push(cmp);
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

/// The exact text of `prefix` and the `LIKE` pattern of its descendants (metacharacters
/// escaped).
pub(crate) fn like_prefix(prefix: &Namespace) -> (String, String) {
    let text = prefix.to_text();
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    (text, format!("{escaped}.%"))
}
