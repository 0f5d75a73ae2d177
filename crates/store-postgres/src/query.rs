//! The search query: the namespace prefix as `LIKE` patterns and the SQL prefilter that lets
//! the server skip rows (the exact filter still runs in Rust on what it keeps).

use stategraph_store::filter::{prefilter_comparisons, Operand};
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
    for c in prefilter_comparisons(filter, &[]) {
        let (op, string) = (c.op, matches!(c.operand, Operand::Str(_)));
        args.push(Box::new(c.key.to_owned()));
        let k = args.len();
        args.push(match c.operand {
            Operand::Str(s) => Box::new(s.to_owned()),
            Operand::Num(x) => Box::new(x),
        });
        let o = k + 1;
        let cmp = match (op, string) {
            ("=", true) => format!("value->(${k}::text) = to_jsonb(${o}::text)"),
            ("=", false) => format!("value->(${k}::text) = to_jsonb(${o}::float8)"),
            (_, true) => format!(
                "CASE WHEN jsonb_typeof(value->(${k}::text)) = 'string' \
                 THEN (value->>(${k}::text)) COLLATE \"C\" {op} ${o}::text ELSE false END"
            ),
            (_, false) => format!(
                "CASE WHEN jsonb_typeof(value->(${k}::text)) = 'number' \
                 THEN (value->>(${k}::text))::float8 {op} ${o}::float8 ELSE false END"
            ),
        };
        conds.push(cmp);
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
