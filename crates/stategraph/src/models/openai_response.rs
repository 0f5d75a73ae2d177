//! A non-streamed OpenAI answer (`chat.completion`) read into the AI message LangChain
//! stores, and the usage and error objects both answer forms carry. Below `openai.rs`
//! and `openai_stream.rs`.

use serde_json::Value as Json;

use super::error::{ModelError, ModelErrorKind};
use super::wire::{self, int, str_at};
use crate::messages::Message;
use crate::{Map, Value};

/// The provider's name in errors and `response_metadata.model_provider`.
pub(super) const PROVIDER: &str = "openai";

/// A non-streamed answer (`chat.completion`) as the stored AI message.
pub(super) fn read_completion(
    resp: &Json,
    model: &str,
    structured: bool,
) -> Result<Message, ModelError> {
    let invalid = |why: &str| {
        ModelError::new(
            ModelErrorKind::InvalidResponse,
            PROVIDER,
            format!("{why}: {resp}"),
        )
    };
    if let Some(error) = resp.get("error").filter(|e| !e.is_null()) {
        return Err(stream_error(error));
    }
    let choice = resp
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| invalid("an answer without choices"))?;
    let msg = choice
        .get("message")
        .ok_or_else(|| invalid("a choice without a message"))?;
    let content = str_at(msg, "content").unwrap_or("");
    let mut message = Message::ai(content);
    let mut kwargs = Map::new();
    for key in ["function_call", "audio"] {
        if let Some(v) = msg.get(key).filter(|v| !v.is_null()) {
            kwargs.insert(key, wire::value(v));
        }
    }
    if structured {
        let parsed = serde_json::from_str::<Json>(content).map(|v| wire::value(&v));
        kwargs.insert("parsed", parsed.unwrap_or(Value::Nil));
    }
    kwargs.insert(
        "refusal",
        msg.get("refusal").map_or(Value::Nil, wire::value),
    );
    message.additional_kwargs = kwargs;
    let raw_calls = msg
        .get("tool_calls")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    let calls = raw_calls
        .iter()
        .map(|c| {
            let f = c.get("function").unwrap_or(&Json::Null);
            (
                str_at(c, "id").map(str::to_owned),
                str_at(f, "name").unwrap_or("").to_owned(),
                str_at(f, "arguments").unwrap_or("").to_owned(),
            )
        })
        .collect();
    (message.tool_calls, message.invalid_tool_calls) = wire::split_calls(calls);
    let usage = resp.get("usage").filter(|u| !u.is_null());
    message.usage_metadata = usage.map(usage_metadata);
    let mut meta = Map::new();
    meta.insert("token_usage", usage.map_or(Value::Nil, token_usage));
    meta.insert("model_provider", PROVIDER);
    meta.insert("model_name", str_at(resp, "model").unwrap_or(model));
    meta.insert(
        "system_fingerprint",
        resp.get("system_fingerprint")
            .map_or(Value::Nil, wire::value),
    );
    meta.insert("id", resp.get("id").map_or(Value::Nil, wire::value));
    if let Some(tier) = str_at(resp, "service_tier") {
        meta.insert("service_tier", tier);
    }
    meta.insert(
        "finish_reason",
        choice.get("finish_reason").map_or(Value::Nil, wire::value),
    );
    meta.insert(
        "logprobs",
        choice.get("logprobs").map_or(Value::Nil, wire::value),
    );
    message.response_metadata = meta;
    Ok(message)
}

/// The fields of the OpenAI SDK's usage models, in their order: `model_dump()` writes
/// each (`None` when the server did not send it), then any the server added.
const USAGE_FIELDS: [&str; 3] = ["completion_tokens", "prompt_tokens", "total_tokens"];
const COMPLETION_DETAILS: [&str; 5] = [
    "accepted_prediction_tokens",
    "audio_tokens",
    "reasoning_tokens",
    "rejected_prediction_tokens",
    "text_tokens",
];
const PROMPT_DETAILS: [&str; 5] = [
    "audio_tokens",
    "cache_write_tokens",
    "cached_tokens",
    "image_tokens",
    "text_tokens",
];

/// `response_metadata.token_usage`: the usage as the Python SDK dumps it.
fn token_usage(usage: &Json) -> Value {
    let mut out = sdk_dump(
        usage,
        &USAGE_FIELDS,
        &["completion_tokens_details", "prompt_tokens_details"],
    );
    for (key, fields) in [
        ("completion_tokens_details", &COMPLETION_DETAILS),
        ("prompt_tokens_details", &PROMPT_DETAILS),
    ] {
        let details = usage.get(key).filter(|d| d.is_object());
        let dumped = details.map_or(Value::Nil, |d| Value::Map(sdk_dump(d, fields, &[])));
        out.insert(key, dumped);
    }
    Value::Map(out)
}

/// `fields` in order (nil when absent), then the object's other keys but `skip`.
fn sdk_dump(obj: &Json, fields: &[&str], skip: &[&str]) -> Map {
    let mut out = Map::new();
    for f in fields {
        out.insert(*f, obj.get(*f).map_or(Value::Nil, wire::value));
    }
    if let Some(all) = obj.as_object() {
        for (k, v) in all {
            if !fields.contains(&k.as_str()) && !skip.contains(&k.as_str()) {
                out.insert(k.as_str(), wire::value(v));
            }
        }
    }
    out
}

/// `usage_metadata` from the wire's usage (LangChain's `_create_usage_metadata`).
pub(super) fn usage_metadata(usage: &Json) -> Value {
    let input = int(usage, "prompt_tokens").unwrap_or(0);
    let output = int(usage, "completion_tokens").unwrap_or(0);
    let total = int(usage, "total_tokens").unwrap_or(input + output);
    let details = |key: &str, pairs: &[(&str, &str)]| {
        let d = usage.get(key).unwrap_or(&Json::Null);
        let mut m = Map::new();
        for (ours, theirs) in pairs {
            if let Some(n) = int(d, theirs) {
                m.insert(*ours, n);
            }
        }
        m
    };
    let input_details = details(
        "prompt_tokens_details",
        &[
            ("audio", "audio_tokens"),
            ("cache_read", "cached_tokens"),
            ("cache_creation", "cache_write_tokens"),
        ],
    );
    let output_details = details(
        "completion_tokens_details",
        &[("audio", "audio_tokens"), ("reasoning", "reasoning_tokens")],
    );
    wire::usage(input, output, total, input_details, Some(output_details))
}

/// An `error` object sent in place of an answer (or inside a stream).
pub(super) fn stream_error(error: &Json) -> ModelError {
    let mut e = ModelError::new(
        ModelErrorKind::Server,
        PROVIDER,
        str_at(error, "message").map_or_else(|| error.to_string(), str::to_owned),
    );
    e.error_type = str_at(error, "type")
        .or_else(|| str_at(error, "code"))
        .map(str::to_owned);
    e
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_documented_completion_reads_as_langchain_stores_it() {
        // The example answer of OpenAI's API reference (tool call), trimmed.
        let resp = json!({"id": "chatcmpl-abc123", "object": "chat.completion", "created": 1699896916,
            "model": "gpt-4o-mini", "system_fingerprint": null,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_abc123", "type": "function",
                    "function": {"name": "get_current_weather", "arguments": "{\n\"location\": \"Boston, MA\"\n}"}}]},
                "logprobs": null, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99,
                "completion_tokens_details": {"reasoning_tokens": 0}}});
        let m = read_completion(&resp, "x", false).expect("an answer");
        assert_eq!(m.tool_calls[0].name, "get_current_weather");
        assert_eq!(
            m.tool_calls[0].args.to_json(),
            json!({"location": "Boston, MA"})
        );
        assert_eq!(m.tool_calls[0].id.as_deref(), Some("call_abc123"));
        assert_eq!(
            m.usage_metadata.expect("usage").to_json(),
            json!({"input_tokens": 82, "output_tokens": 17, "total_tokens": 99,
                "input_token_details": {}, "output_token_details": {"reasoning": 0}})
        );
        let meta = Value::Map(m.response_metadata).to_json();
        let keys: Vec<&str> = meta
            .as_object()
            .expect("a map")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "token_usage",
                "model_provider",
                "model_name",
                "system_fingerprint",
                "id",
                "finish_reason",
                "logprobs"
            ]
        );
        assert_eq!(
            meta["token_usage"]["completion_tokens_details"]["audio_tokens"],
            Json::Null
        );
        assert_eq!(meta["token_usage"]["prompt_tokens_details"], Json::Null);
        assert_eq!(
            Value::Map(m.additional_kwargs).to_json(),
            json!({"refusal": null})
        );
    }
}
