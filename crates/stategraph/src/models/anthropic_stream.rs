//! A streamed Anthropic answer: each server-sent event (`message_start`,
//! `content_block_*`, `message_delta`, `message_stop`) taken into what the answer has said
//! so far and sent on as an `AIMessageChunk`, the whole message at the end. Below
//! `anthropic.rs`.

use futures::StreamExt;
use serde_json::Value as Json;

use super::anthropic_response::{block_value, usage_metadata, PROVIDER};
use super::error::{ModelError, ModelErrorKind};
use super::http::status_error;
use super::options::ChunkSink;
use super::wire::{self, int, str_at, StreamedCalls};
use crate::messages::Message;
use crate::{Map, Value};

/// What a streamed answer has said so far.
#[derive(Default)]
struct Streamed {
    /// The content blocks, each with its `index` (a tool call's JSON text as
    /// `partial_json`), as LangChain merges the chunks.
    blocks: Vec<Map>,
    text: String,
    calls: StreamedCalls,
    meta: Map,
    usage: Option<Value>,
    done: bool,
}

impl Streamed {
    /// Takes one event; the chunk to stream, if any.
    fn take(
        &mut self,
        kind: &str,
        data: &Json,
        id: &str,
        as_text: bool,
    ) -> Result<Option<Message>, ModelError> {
        let mut out = Message::ai(if as_text {
            Value::from("")
        } else {
            Value::list(Vec::new())
        })
        .with_id(id);
        let mut meta = Map::new();
        let index = int(data, "index").unwrap_or(0);
        match kind {
            "message_start" => {
                let model = data["message"].get("model").map_or(Value::Nil, wire::value);
                self.meta.insert("model_name", model.clone());
                meta.insert("model_name", model);
            }
            "content_block_start" => {
                let block = &data["content_block"];
                if block["type"] == "tool_use" {
                    let (cid, name) = (str_at(block, "id"), str_at(block, "name"));
                    self.calls.add(index, cid, name, "");
                    wire::set_call_chunks(&mut out, &[(cid, name, "", index)]);
                }
                let v = block_value(block, Some(("index", Value::from(index))));
                if let Value::Map(m) = &v {
                    self.blocks.push(m.clone());
                }
                if !as_text && block["type"] != "text" {
                    out.content = Value::list(vec![v]);
                }
            }
            "content_block_delta" => self.delta(&data["delta"], index, &mut out, as_text),
            "message_delta" => {
                for key in ["stop_reason", "stop_sequence"] {
                    let v = data["delta"].get(key).map_or(Value::Nil, wire::value);
                    self.meta.insert(key, v.clone());
                    meta.insert(key, v);
                }
                let u = usage_metadata(data.get("usage").unwrap_or(&Json::Null));
                self.usage = Some(u.clone());
                out.usage_metadata = Some(u);
                out.extra.insert("chunk_position", "last");
            }
            "message_stop" => {
                self.done = true;
                return Ok(None);
            }
            "error" => return Err(status_error(PROVIDER, 500, &data.to_string())),
            _ => return Ok(None),
        }
        meta.insert("model_provider", PROVIDER);
        out.response_metadata = meta;
        Ok(Some(out))
    }

    fn delta(&mut self, delta: &Json, index: i64, out: &mut Message, as_text: bool) {
        let block = self
            .blocks
            .iter_mut()
            .find(|b| b.get("index").and_then(Value::as_i64) == Some(index));
        match str_at(delta, "type") {
            Some("text_delta") => {
                let text = str_at(delta, "text").unwrap_or("");
                self.text.push_str(text);
                if let Some(b) = block {
                    let joined = format!(
                        "{}{text}",
                        b.get("text").and_then(Value::as_str).unwrap_or("")
                    );
                    b.insert("text", joined);
                }
                out.content = if as_text {
                    text.into()
                } else {
                    let mut m = Map::new();
                    m.insert("text", text);
                    m.insert("type", "text");
                    m.insert("index", index);
                    Value::list(vec![Value::Map(m)])
                };
            }
            Some("input_json_delta") => {
                let part = str_at(delta, "partial_json").unwrap_or("");
                self.calls.add(index, None, None, part);
                if let Some(b) = block {
                    let joined = format!(
                        "{}{part}",
                        b.get("partial_json").and_then(Value::as_str).unwrap_or("")
                    );
                    b.insert("partial_json", joined);
                }
                wire::set_call_chunks(out, &[(None, None, part, index)]);
            }
            _ => {}
        }
    }

    fn finish(self, id: String, as_text: bool) -> Result<Message, ModelError> {
        if !self.done {
            return Err(ModelError::new(
                ModelErrorKind::StreamCut,
                PROVIDER,
                "the stream ended before the answer did (no message_stop)",
            ));
        }
        let content = if as_text {
            Value::from(self.text)
        } else {
            Value::list(self.blocks.into_iter().map(Value::Map).collect::<Vec<_>>())
        };
        let mut m = Message::ai(content).with_id(id);
        (m.tool_calls, m.invalid_tool_calls) = wire::split_calls(self.calls.finish());
        let mut meta = Map::new();
        meta.insert(
            "model_name",
            self.meta.get("model_name").cloned().unwrap_or(Value::Nil),
        );
        meta.insert("model_provider", PROVIDER);
        for key in ["stop_reason", "stop_sequence"] {
            meta.insert(key, self.meta.get(key).cloned().unwrap_or(Value::Nil));
        }
        m.response_metadata = meta;
        m.usage_metadata = self.usage;
        Ok(m)
    }
}

/// Reads a streamed answer, streaming each chunk to `ctx`.
pub(super) async fn read_stream(
    mut events: impl futures::Stream<Item = Result<super::sse::Event, ModelError>> + Unpin,
    id: String,
    mut sink: Option<ChunkSink<'_>>,
    as_text: bool,
) -> Result<Message, ModelError> {
    let mut state = Streamed::default();
    while let Some(event) = events.next().await {
        let event = event?;
        if event.data.trim().is_empty() {
            continue;
        }
        let data: Json = serde_json::from_str(&event.data).map_err(|e| {
            ModelError::new(
                ModelErrorKind::InvalidResponse,
                PROVIDER,
                format!("an event that is not JSON ({e}): {}", event.data),
            )
        })?;
        let kind = if event.event.is_empty() || event.event == "message" {
            str_at(&data, "type").unwrap_or("").to_owned()
        } else {
            event.event.clone()
        };
        if let (Some(out), Some(sink)) = (state.take(&kind, &data, &id, as_text)?, sink.as_mut()) {
            sink(&out);
        }
        if state.done {
            break;
        }
    }
    state.finish(id, as_text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn documented_stream_events_assemble() {
        let events = [
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude", "content": [], "usage": {"input_tokens": 25, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": "}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "2}"}}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 15}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ];
        let mut s = Streamed::default();
        for (k, d) in &events {
            s.take(k, d, "i", false).expect("an event");
        }
        let m = s.finish("i".into(), false).expect("whole");
        assert_eq!(m.tool_calls[0].args.to_json(), json!({"a": 2}));
        assert_eq!(
            m.content.to_json()[0],
            json!({"type": "text", "text": "Hello", "index": 0})
        );
        assert_eq!(m.content.to_json()[1]["partial_json"], "{\"a\": 2}");
        assert_eq!(
            m.usage_metadata.expect("usage").to_json()["output_tokens"],
            15
        );
        let mut cut = Streamed::default();
        cut.take(events[0].0, &events[0].1, "i", true)
            .expect("start");
        assert_eq!(
            cut.finish("i".into(), true).expect_err("cut").kind,
            ModelErrorKind::StreamCut
        );
    }
}
