//! The `messages` stream mode as LangGraph's server sends it (not `messages-tuple`): each
//! message once as `messages/metadata`, then, at every chunk, the message accumulated so
//! far as `messages/partial` (or, for a whole message, `messages/complete`).
//!
//! The graph streams `[message, metadata]` pairs (see `NodeContext::send_message_chunk`);
//! the server keeps one message per id:
//! - the first time an id is seen, `messages/metadata` carries `{id: {"metadata": ...}}`;
//! - a chunk (`AIMessageChunk`) is added to what came before with that id, as LangChain
//!   adds chunks (text appended, `tool_calls` and lists extended, maps merged, token
//!   counts summed), and the sum goes out as `messages/partial`;
//! - a whole message (a node's returned `ToolMessage`, an answer that was not streamed)
//!   replaces what was kept and goes out as `messages/complete`;
//! - either way the payload is a list of one message, a chunk turned into its message
//!   (`AIMessageChunk` → `ai`, without `tool_call_chunks` and `chunk_position`), as
//!   LangChain's `message_chunk_to_message` does.

use indexmap::IndexMap;
use serde_json::{json, Map as JsonMap, Value as Json};

/// The messages of one run, by id, as accumulated so far.
#[derive(Debug, Default)]
pub(crate) struct MessageLog {
    messages: IndexMap<String, Json>,
}

impl MessageLog {
    /// The events (`(name, data)`) for one `messages` pair of the graph, in the JSON form
    /// the server sends (`[message, metadata]`); none for anything else.
    pub(crate) fn take(&mut self, pair: &Json) -> Vec<(&'static str, Json)> {
        let (Some(message), Some(meta)) = (pair.get(0), pair.get(1)) else {
            return Vec::new();
        };
        let Some(id) = message.get("id").and_then(Json::as_str).map(str::to_owned) else {
            return Vec::new();
        };
        let chunk = is_chunk(message);
        let mut out = Vec::with_capacity(2);
        if let Some(kept) = self.messages.get_mut(&id) {
            if chunk && is_chunk(kept) {
                add_chunk(kept, message);
            } else {
                *kept = message.clone();
            }
        } else {
            out.push((
                "messages/metadata",
                json!({ id.as_str(): { "metadata": meta } }),
            ));
            self.messages.insert(id.clone(), message.clone());
        }
        let kept = self.messages.get(&id).unwrap_or(message);
        let name = if chunk {
            "messages/partial"
        } else {
            "messages/complete"
        };
        out.push((name, Json::Array(vec![to_message(kept)])));
        out
    }
}

/// Whether a message is a chunk (its `type` is `AIMessageChunk`, `ToolMessageChunk`...).
pub(crate) fn is_chunk(message: &Json) -> bool {
    message
        .get("type")
        .and_then(Json::as_str)
        .is_some_and(|t| t.ends_with("Chunk"))
}

/// A chunk as its message (LangChain's `message_chunk_to_message`): `AIMessageChunk`
/// becomes `ai` without `tool_call_chunks` and `chunk_position`; a message stays as it is.
pub(crate) fn to_message(message: &Json) -> Json {
    let Some(fields) = message.as_object().filter(|_| is_chunk(message)) else {
        return message.clone();
    };
    let kind = fields
        .get("type")
        .and_then(Json::as_str)
        .unwrap_or_default();
    let base = match kind.strip_suffix("MessageChunk") {
        Some("AI") => "ai".to_owned(),
        Some(other) => other.to_lowercase(),
        None => kind.to_owned(),
    };
    let mut out = JsonMap::with_capacity(fields.len());
    for (k, v) in fields {
        match k.as_str() {
            "tool_call_chunks" | "chunk_position" => {}
            "type" => {
                out.insert(k.clone(), Json::String(base.clone()));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Json::Object(out)
}

/// Adds chunk `more` to chunk `kept`, as LangChain's `AIMessageChunk.__add__`: the
/// content appended, `additional_kwargs` and `response_metadata` merged, the lists of
/// tool calls extended, token counts summed, the first id kept.
pub(crate) fn add_chunk(kept: &mut Json, more: &Json) {
    let (Some(kept), Some(more)) = (kept.as_object_mut(), more.as_object()) else {
        return;
    };
    for (k, v) in more {
        match k.as_str() {
            "content" => {
                let merged = merge_content(kept.get(k).unwrap_or(&Json::Null), v);
                kept.insert(k.clone(), merged);
            }
            "additional_kwargs" | "response_metadata" => {
                let merged = merge_values(kept.get(k).unwrap_or(&Json::Null), v);
                kept.insert(k.clone(), merged);
            }
            "tool_calls" | "invalid_tool_calls" | "tool_call_chunks" => {
                let mut items = kept
                    .get(k)
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default();
                items.extend(v.as_array().cloned().unwrap_or_default());
                kept.insert(k.clone(), Json::Array(items));
            }
            "usage_metadata" => {
                let merged = add_usage(kept.get(k).unwrap_or(&Json::Null), v);
                kept.insert(k.clone(), merged);
            }
            "chunk_position" => {
                if v.as_str() == Some("last") {
                    kept.insert(k.clone(), v.clone());
                }
            }
            "id" | "type" => {}
            _ => {
                if kept.get(k).is_none_or(Json::is_null) {
                    kept.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// Two contents added: text to text appended; a list with text or a list extended.
fn merge_content(left: &Json, right: &Json) -> Json {
    match (left, right) {
        (Json::String(a), Json::String(b)) => Json::String(format!("{a}{b}")),
        (Json::Null, other) | (other, Json::Null) => other.clone(),
        (Json::Array(a), Json::Array(b)) => {
            let mut items = a.clone();
            items.extend(b.iter().cloned());
            Json::Array(items)
        }
        (Json::Array(a), Json::String(b)) => {
            let mut items = a.clone();
            if !b.is_empty() {
                items.push(Json::String(b.clone()));
            }
            Json::Array(items)
        }
        (Json::String(a), Json::Array(b)) => {
            let mut items = Vec::with_capacity(b.len() + 1);
            if !a.is_empty() {
                items.push(Json::String(a.clone()));
            }
            items.extend(b.iter().cloned());
            Json::Array(items)
        }
        (_, other) => other.clone(),
    }
}

/// Two values merged as LangChain's `merge_dicts`: maps key by key, text appended, lists
/// extended, a missing or null side giving way to the other, else the later value.
fn merge_values(left: &Json, right: &Json) -> Json {
    match (left, right) {
        (Json::Object(a), Json::Object(b)) => {
            let mut out = a.clone();
            for (k, v) in b {
                let merged = match out.get(k) {
                    Some(old) => merge_values(old, v),
                    None => v.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Json::Object(out)
        }
        (Json::String(a), Json::String(b)) => Json::String(format!("{a}{b}")),
        (Json::Array(a), Json::Array(b)) => {
            let mut items = a.clone();
            items.extend(b.iter().cloned());
            Json::Array(items)
        }
        (old, Json::Null) => old.clone(),
        (_, new) => new.clone(),
    }
}

/// Token counts summed key by key (LangChain's `add_usage`); one side alone as it is.
fn add_usage(left: &Json, right: &Json) -> Json {
    match (left, right) {
        (Json::Object(a), Json::Object(b)) => {
            let mut out = a.clone();
            for (k, v) in b {
                let sum = match (out.get(k), v) {
                    (Some(Json::Number(x)), Json::Number(y)) => {
                        json!(x.as_i64().unwrap_or(0) + y.as_i64().unwrap_or(0))
                    }
                    (Some(old @ Json::Object(_)), Json::Object(_)) => add_usage(old, v),
                    _ => v.clone(),
                };
                out.insert(k.clone(), sum);
            }
            Json::Object(out)
        }
        (Json::Null, other) | (other, Json::Null) => other.clone(),
        (_, other) => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, text: &str) -> Json {
        json!({"content": text, "additional_kwargs": {}, "response_metadata": {},
               "type": "AIMessageChunk", "name": null, "id": id, "tool_calls": [],
               "invalid_tool_calls": [], "usage_metadata": null,
               "tool_call_chunks": [], "chunk_position": null})
    }

    #[test]
    fn chunks_accumulate_into_partial_messages_after_one_metadata() {
        let mut log = MessageLog::default();
        let meta = json!({"langgraph_node": "agent"});
        let first = log.take(&json!([chunk("m1", "The"), meta]));
        assert_eq!(first.len(), 2);
        assert_eq!(first[0].0, "messages/metadata");
        assert_eq!(first[0].1["m1"]["metadata"]["langgraph_node"], "agent");
        assert_eq!(first[1].0, "messages/partial");
        let second = log.take(&json!([chunk("m1", " sum"), meta]));
        assert_eq!(second.len(), 1);
        let message = &second[0].1[0];
        assert_eq!(message["content"], "The sum");
        assert_eq!(message["type"], "ai");
        assert!(message.get("tool_call_chunks").is_none());
        assert!(message.get("chunk_position").is_none());
    }

    #[test]
    fn a_whole_message_is_complete_and_tool_calls_extend() {
        let mut log = MessageLog::default();
        let meta = json!({});
        log.take(&json!([chunk("m1", "Let"), meta]));
        let mut call = chunk("m1", "");
        call["tool_calls"] =
            json!([{"name": "add", "args": {"a": 1}, "id": "c1", "type": "tool_call"}]);
        let out = log.take(&json!([call, meta]));
        assert_eq!(out[0].1[0]["tool_calls"][0]["name"], "add");
        assert_eq!(out[0].1[0]["content"], "Let");
        let tool = json!({"content": "3", "type": "tool", "id": "t1", "tool_call_id": "c1"});
        let out = log.take(&json!([tool, meta]));
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].0, "messages/complete");
        assert_eq!(out[1].1[0]["type"], "tool");
        assert!(log.take(&json!(["not a pair"])).is_empty());
    }

    #[test]
    fn usage_and_metadata_merge() {
        let mut a = chunk("m", "a");
        a["usage_metadata"] = json!({"input_tokens": 3, "output_tokens": 1, "total_tokens": 4});
        a["response_metadata"] = json!({"model_name": "x"});
        let mut b = chunk("m", "b");
        b["usage_metadata"] = json!({"input_tokens": 0, "output_tokens": 2, "total_tokens": 2});
        b["response_metadata"] = json!({"finish_reason": "stop"});
        b["chunk_position"] = json!("last");
        add_chunk(&mut a, &b);
        assert_eq!(a["usage_metadata"]["total_tokens"], 6);
        assert_eq!(a["response_metadata"]["model_name"], "x");
        assert_eq!(a["response_metadata"]["finish_reason"], "stop");
        assert_eq!(a["chunk_position"], "last");
        assert_eq!(a["id"], "m");
    }
}
