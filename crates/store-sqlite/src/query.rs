//! The search query: its prefix condition and the SQL prefilter that lets SQLite skip rows
//! (the exact filter still runs in Rust on what it keeps).

use rusqlite::types::Value as SqlValue;
use stategraph_store::filter::{prefilter_comparisons, Operand};
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
    for c in prefilter_comparisons(filter, &['"', '\\']) {
        args.push(SqlValue::Text(format!("$.\"{}\"", c.key)));
        let p = args.len();
        args.push(match c.operand {
            Operand::Str(s) => SqlValue::Text(s.to_owned()),
            Operand::Num(x) => SqlValue::Real(x),
        });
        conds.push(format!(
            "json_extract(CAST(value AS TEXT), ?{p}) {} ?{}",
            c.op,
            p + 1
        ));
    }
}
