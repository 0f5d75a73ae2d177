//! A non-streamed Anthropic answer read into the AI message LangChain stores, and the
//! usage and content blocks both answer forms carry. Below `anthropic.rs` and
//! `anthropic_stream.rs`.

use serde_json::Value as Json;

use super::error::{ModelError, ModelErrorKind};
use super::http::status_error;
use super::wire::{self, int, str_at};
use crate::messages::Message;
use crate::{Map, Value};

/// The provider's name in errors and `response_metadata.model_provider`.
pub(super) const PROVIDER: &str = "anthropic";

/// The fields of the Python SDK's `Usage` model, as `model_dump()` writes them.
const USAGE_FIELDS: [&str; 10] = [
    "cache_creation",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "inference_geo",
    "input_tokens",
    "output_tokens",
    "output_tokens_details",
    "server_tool_use",
    "service_tier",
    "speed",
];

/// `usage_metadata` from the wire's usage (LangChain's `_create_usage_metadata`: the
/// input counts the cached tokens too).
pub(super) fn usage_metadata(usage: &Json) -> Value {
    let cache_read = int(usage, "cache_read_input_tokens");
    let cache_creation = int(usage, "cache_creation_input_tokens");
    let input = int(usage, "input_tokens").unwrap_or(0)
        + cache_read.unwrap_or(0)
        + cache_creation.unwrap_or(0);
    let output = int(usage, "output_tokens").unwrap_or(0);
    let mut details = Map::new();
    if let Some(n) = cache_read {
        details.insert("cache_read", n);
    }
    if let Some(n) = cache_creation {
        details.insert("cache_creation", n);
    }
    let reasoning = usage
        .get("output_tokens_details")
        .and_then(|d| int(d, "thinking_tokens"));
    let output_details = reasoning.map(|n| {
        let mut m = Map::new();
        m.insert("reasoning", n);
        m
    });
    wire::usage(input, output, input + output, details, output_details)
}

/// A content block as the SDK dumps it: its model's fields in their order (`text`,
/// `type`; `id`, `input`, `name`, `type`, `toolset_name`), the null `citations` and
/// `caller` dropped as LangChain drops them, then the other keys, then `extra`.
pub(super) fn block_value(block: &Json, extra: Option<(&str, Value)>) -> Value {
    let order: &[&str] = match str_at(block, "type") {
        Some("text") => &["text", "type"],
        Some("tool_use") => &["id", "input", "name", "type", "toolset_name"],
        _ => &[],
    };
    let mut m = Map::new();
    for key in order {
        m.insert(*key, block.get(*key).map_or(Value::Nil, wire::value));
    }
    for (k, v) in block.as_object().into_iter().flatten() {
        let dropped = matches!(k.as_str(), "citations" | "caller") && v.is_null();
        if !order.contains(&k.as_str()) && !dropped {
            m.insert(k.as_str(), wire::value(v));
        }
    }
    if let Some((k, v)) = extra {
        m.insert(k, v);
    }
    Value::Map(m)
}

/// A non-streamed answer as the stored AI message.
pub(super) fn read_message(resp: &Json) -> Result<Message, ModelError> {
    if resp["type"] == "error" {
        return Err(status_error(PROVIDER, 500, &resp.to_string()));
    }
    let blocks = resp
        .get("content")
        .and_then(Json::as_array)
        .ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::InvalidResponse,
                PROVIDER,
                format!("an answer without content: {resp}"),
            )
        })?;
    let single_text = blocks.len() == 1 && blocks[0]["type"] == "text";
    let mut m = if single_text {
        Message::ai(str_at(&blocks[0], "text").unwrap_or(""))
    } else {
        Message::ai(Value::list(
            blocks
                .iter()
                .map(|b| block_value(b, None))
                .collect::<Vec<_>>(),
        ))
    };
    let calls = blocks
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| {
            let args = serde_json::to_string(&b["input"]).unwrap_or_default();
            (
                str_at(b, "id").map(str::to_owned),
                str_at(b, "name").unwrap_or("").to_owned(),
                args,
            )
        })
        .collect();
    (m.tool_calls, m.invalid_tool_calls) = wire::split_calls(calls);
    let usage = resp.get("usage").unwrap_or(&Json::Null);
    m.usage_metadata = Some(usage_metadata(usage));
    let mut meta = Map::new();
    for key in [
        "id",
        "container",
        "diagnostics",
        "model",
        "stop_details",
        "stop_reason",
        "stop_sequence",
    ] {
        meta.insert(key, resp.get(key).map_or(Value::Nil, wire::value));
    }
    let mut u = Map::new();
    for f in USAGE_FIELDS {
        u.insert(f, usage.get(f).map_or(Value::Nil, wire::value));
    }
    meta.insert("usage", u);
    meta.insert(
        "model_name",
        resp.get("model").map_or(Value::Nil, wire::value),
    );
    meta.insert("model_provider", PROVIDER);
    m.response_metadata = meta;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_documented_message_reads_as_langchain_stores_it() {
        // The tool-use example answer of Anthropic's documentation.
        let resp = json!({"id": "msg_01Aq9w938a90dw8q", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "stop_reason": "tool_use", "stop_sequence": null,
            "content": [{"type": "text", "text": "I'll check."},
                {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
                 "input": {"location": "San Francisco, CA"}}],
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 2}});
        let m = read_message(&resp).expect("an answer");
        assert_eq!(m.tool_calls[0].name, "get_weather");
        assert_eq!(
            m.tool_calls[0].id.as_deref(),
            Some("toolu_01A09q90qw90lq917835lq9")
        );
        assert_eq!(m.content.to_json()[1]["toolset_name"], Json::Null);
        assert_eq!(
            m.usage_metadata.expect("usage").to_json(),
            json!({"input_tokens": 12, "output_tokens": 5, "total_tokens": 17, "input_token_details": {"cache_read": 2}})
        );
        assert_eq!(
            m.response_metadata
                .get("stop_reason")
                .and_then(Value::as_str),
            Some("tool_use")
        );
    }
}
