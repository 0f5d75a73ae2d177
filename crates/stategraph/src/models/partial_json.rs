//! JSON text cut short, read as LangChain's `parse_partial_json` reads it: the arguments
//! of one streamed tool-call fragment, so that each streamed chunk carries the calls that
//! LangChain's `AIMessageChunk` makes of its `tool_call_chunks`.
//!
//! The text is read whole if it can be. Otherwise strings left open are closed, raw
//! control characters inside strings are escaped, and the brackets left open are closed
//! in reverse order; then the longest prefix (dropping whole characters from the end)
//! that parses with those closers is the value. A closing bracket that does not match
//! makes the text unreadable, as does a text no prefix of which parses.
//!
//! Python's decoder runs with `strict=False`, which takes control characters inside
//! strings raw; serde_json does not, so they are escaped here before parsing, which
//! gives the same strings. Python also reads `NaN` and `Infinity`, which JSON (and this
//! reader) does not.

use serde_json::Value as Json;

/// The value of `text`, JSON possibly cut short; `None` if it cannot be read.
pub(crate) fn parse_partial(text: &str) -> Option<Json> {
    if let Ok(v) = serde_json::from_str::<Json>(text) {
        return Some(v);
    }
    let (mut pieces, closers) = repaired(text)?;
    // `ends[i]`: the byte offset at which piece `i` ends in the joined text.
    let mut ends: Vec<usize> = pieces
        .iter()
        .scan(0, |end, p| {
            *end += p.len();
            Some(*end)
        })
        .collect();
    while !pieces.is_empty() {
        let mut candidate: String = pieces.concat();
        candidate.push_str(&closers);
        match serde_json::from_str::<Json>(&candidate) {
            Ok(v) => return Some(v),
            Err(e) => {
                // Every longer prefix holds the piece the parser stopped at, with the same
                // text before it, so it fails the same way: skip past them all.
                let at = byte_offset(&candidate, e.line(), e.column());
                let keep = ends.partition_point(|&end| end <= at);
                let keep = if keep < pieces.len() {
                    keep
                } else {
                    pieces.len() - 1
                };
                pieces.truncate(keep);
                ends.truncate(keep);
            }
        }
    }
    None
}

/// The text's characters, each as it is to be parsed (a control character inside a
/// string escaped), and the closers of what is left open; `None` on a closing bracket
/// that does not match.
fn repaired(text: &str) -> Option<(Vec<String>, String)> {
    let mut pieces = Vec::with_capacity(text.len());
    let mut stack = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        let mut piece = c.to_string();
        if in_string {
            if c == '"' && !escaped {
                in_string = false;
            } else if (c as u32) < 0x20 && !escaped {
                piece = match c {
                    '\n' => "\\n".to_owned(),
                    _ => format!("\\u{:04x}", c as u32),
                };
            } else if c == '\\' {
                escaped = !escaped;
            } else {
                escaped = false;
            }
        } else {
            match c {
                '"' => {
                    in_string = true;
                    escaped = false;
                }
                '{' => stack.push('}'),
                '[' => stack.push(']'),
                '}' | ']' => {
                    if stack.last() != Some(&c) {
                        return None;
                    }
                    stack.pop();
                }
                _ => {}
            }
        }
        pieces.push(piece);
    }
    if in_string {
        if escaped {
            pieces.pop();
        }
        pieces.push("\"".to_owned());
    }
    Some((pieces, stack.iter().rev().collect()))
}

/// The byte offset in `text` of serde_json's 1-based `line` and `column` (the column
/// counts bytes; 0 when the error is at the line's start).
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::parse_partial;

    #[test]
    fn text_cut_short_reads_as_langchain_reads_it() {
        // Each expected value is what langchain-core 1.8.3's parse_partial_json returns.
        let cases = [
            ("", None),
            ("{", Some(json!({}))),
            ("{\"", Some(json!({}))),
            ("{\"word", Some(json!({}))),
            ("{\"word\"", Some(json!({}))),
            ("{\"word\": ", Some(json!({}))),
            ("{\"word\": \"h", Some(json!({"word": "h"}))),
            ("{\"word\": \"hi\"}", Some(json!({"word": "hi"}))),
            ("{\"a\": [1, 2", Some(json!({"a": [1, 2]}))),
            ("{\"a\": [1, {\"b\": tr", Some(json!({"a": [1, {}]}))),
            ("{\"a\": \"x\\", Some(json!({"a": "x"}))),
            ("{\"a\": \"line\nnext", Some(json!({"a": "line\nnext"}))),
            ("{\"a\": \"tab\there\"}", Some(json!({"a": "tab\there"}))),
            ("\"hi\"}", None),
            ("}", None),
            ("hi", None),
            ("12", Some(json!(12))),
            ("{\"a\": 1, \"b", Some(json!({"a": 1}))),
            ("[1, 2", Some(json!([1, 2]))),
            ("{\"a\": -", Some(json!({}))),
            ("{\"a\": 1.", Some(json!({"a": 1}))),
            ("{\"a\": nul", Some(json!({}))),
            ("\"h", Some(json!("h"))),
        ];
        for (text, want) in cases {
            assert_eq!(parse_partial(text), want, "{text:?}");
        }
    }
}
