//! What `SummarizationMiddleware` sends its model: langchain's default summary prompt,
//! the messages to summarize trimmed to a token budget (`trim_messages(strategy="last",
//! allow_partial=True, include_system=True, start_on="human")`) and written as
//! `get_buffer_string(messages, format="xml")` writes them.

use stategraph_checkpoint::Value;

use crate::messages::{Message, Role};
use crate::prebuilt::python_text::json_dumps;

/// langchain 1.5.0's `DEFAULT_SUMMARY_PROMPT`, word for word, so the summary model gets
/// the request Python's agent sends (`{messages}` is where the conversation goes).
pub const DEFAULT_SUMMARY_PROMPT: &str = include_str!("summary_prompt.txt");

/// Python's `xml.sax.saxutils.escape`.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Python's `xml.sax.saxutils.quoteattr`.
fn quoteattr(text: &str) -> String {
    let text = escape(text)
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;");
    if !text.contains('"') {
        format!("\"{text}\"")
    } else if !text.contains('\'') {
        format!("'{text}'")
    } else {
        format!("\"{}\"", text.replace('"', "&quot;"))
    }
}

/// A message's content parts, escaped (text and reasoning blocks; others skipped).
fn content_parts(m: &Message) -> Vec<String> {
    if let Some(text) = m.content.as_str() {
        return if text.is_empty() {
            Vec::new()
        } else {
            vec![escape(text)]
        };
    }
    let blocks = m
        .content
        .as_list()
        .map(<[Value]>::to_vec)
        .unwrap_or_default();
    let mut parts = Vec::new();
    for block in &blocks {
        if let Some(text) = block.as_str() {
            if !text.is_empty() {
                parts.push(escape(text));
            }
            continue;
        }
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let field = |k: &str| {
            block
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        match kind {
            "text" if !field("text").is_empty() => parts.push(escape(&field("text"))),
            "reasoning" if !field("reasoning").is_empty() => {
                parts.push(format!(
                    "<reasoning>{}</reasoning>",
                    escape(&field("reasoning"))
                ));
            }
            _ => {}
        }
    }
    parts
}

/// The `type` attribute of a message.
fn type_of(m: &Message) -> String {
    match &m.role {
        Role::Chat(role) => role.clone(),
        role => role.type_name().to_owned(),
    }
}

/// `get_buffer_string(messages, format="xml")`.
pub(crate) fn buffer_string_xml(messages: &[Message]) -> String {
    let mut out = Vec::new();
    for m in messages {
        let ty = quoteattr(&type_of(m));
        let parts = content_parts(m);
        if m.role == Role::Ai && !m.tool_calls.is_empty() {
            let mut lines = vec![format!("<message type={ty}>")];
            if !parts.is_empty() {
                lines.push(format!("  <content>{}</content>", parts.join(" ")));
            }
            for call in &m.tool_calls {
                let mut id: String = call.id.clone().unwrap_or_default();
                if id.chars().count() > 64 {
                    id = format!("{}...", id.chars().take(64).collect::<String>());
                }
                lines.push(format!(
                    "  <tool_call id={} name={}>{}</tool_call>",
                    quoteattr(&id),
                    quoteattr(&call.name),
                    escape(&json_dumps(&call.args))
                ));
            }
            lines.push("</message>".to_owned());
            out.push(lines.join("\n"));
        } else {
            out.push(format!("<message type={ty}>{}</message>", parts.join(" ")));
        }
    }
    out.join("\n")
}

/// `text` split after each newline (langchain's default text splitter).
fn split_lines(text: &str) -> Vec<String> {
    let pieces: Vec<&str> = text.split('\n').collect();
    let last = pieces.len() - 1;
    pieces
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i < last {
                format!("{p}\n")
            } else {
                (*p).to_owned()
            }
        })
        .collect()
}

/// The longest `n` in `0..=len` with `fits(n)`, searched as langchain searches it
/// (`bit_length(len)` halvings).
fn longest(len: usize, fits: impl Fn(usize) -> bool) -> usize {
    let (mut left, mut right) = (0, len);
    for _ in 0..(usize::BITS - len.leading_zeros()) {
        if left >= right {
            break;
        }
        let mid = (left + right).div_ceil(2);
        if fits(mid) {
            left = mid;
        } else {
            right = mid - 1;
        }
    }
    left
}

/// `_first_max_tokens(messages, partial_strategy="last", end_on="human")`, on the
/// messages newest first.
fn first_max_tokens(mut messages: Vec<Message>, max_tokens: usize) -> Vec<Message> {
    let human = |m: &Message| m.role == Role::Human;
    if count_tokens_approximately(&messages) <= max_tokens {
        while messages.last().is_some_and(|m| !human(m)) {
            messages.pop();
        }
        return messages;
    }
    let mut idx = longest(messages.len(), |n| {
        count_tokens_approximately(&messages[..n]) <= max_tokens
    });
    if idx < messages.len() {
        if let Some(text) = messages[idx].content.as_str().map(str::to_owned) {
            let mut splits = split_lines(&text);
            splits.reverse();
            let base = count_tokens_approximately(&messages[..idx]);
            let with = |n: usize| {
                let mut part = messages[idx].clone();
                let mut kept: Vec<String> = splits[..n].to_vec();
                kept.reverse();
                part.content = Value::from(kept.concat());
                part
            };
            let n = longest(splits.len(), |n| {
                base + count_tokens_approximately(&[with(n)]) <= max_tokens
            });
            if n > 0 && !text.is_empty() {
                let part = with(n);
                messages.truncate(idx);
                messages.push(part);
                idx += 1;
            }
        }
    }
    while idx > 0 && !human(&messages[idx - 1]) {
        idx -= 1;
    }
    messages.truncate(idx);
    messages
}

/// `trim_messages(messages, max_tokens, strategy="last", allow_partial=True,
/// include_system=True, start_on="human")` with `count_tokens_approximately`.
pub(crate) fn trim_for_summary(messages: &[Message], max_tokens: usize) -> Vec<Message> {
    let (system, rest) = match messages.first() {
        Some(m) if m.role == Role::System => (Some(m.clone()), &messages[1..]),
        _ => (None, messages),
    };
    if rest.is_empty() && system.is_none() {
        return Vec::new();
    }
    let remaining = match &system {
        Some(s) => max_tokens.saturating_sub(count_tokens_approximately(std::slice::from_ref(s))),
        None => max_tokens,
    };
    let newest_first: Vec<Message> = rest.iter().rev().cloned().collect();
    let mut kept = first_max_tokens(newest_first, remaining);
    kept.reverse();
    system.into_iter().chain(kept).collect()
}

/// LangChain's `count_tokens_approximately` for text content: per message, the
/// characters of its content, its tool calls' `repr`, its tool call id, its role and
/// name, over 4, rounded up, plus 3.
pub fn count_tokens_approximately(messages: &[Message]) -> usize {
    let mut tokens = 0.0f64;
    for m in messages {
        // Text blocks count their text (LangChain counts other blocks by their `repr`).
        let mut chars = m.text().chars().count();
        if m.role == Role::Ai && !m.tool_calls.is_empty() && m.content.as_str().is_some() {
            let calls = Value::list(
                m.tool_calls
                    .iter()
                    .map(|c| c.to_value())
                    .collect::<Vec<_>>(),
            );
            chars += calls.repr().to_string().chars().count();
        }
        if m.role == Role::Tool {
            chars += m.tool_call_id.as_deref().map_or(0, |id| id.chars().count());
        }
        chars += match m.role {
            Role::Human => "user".len(),
            Role::Ai => "assistant".len(),
            Role::Tool => "tool".len(),
            _ => "system".len(),
        };
        chars += m.name.as_deref().map_or(0, |n| n.chars().count());
        tokens += (chars as f64 / 4.0).ceil() + 3.0;
    }
    tokens.ceil() as usize
}
