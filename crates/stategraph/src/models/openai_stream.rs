//! A streamed OpenAI answer: each `chat.completion.chunk` taken into what the answer has
//! said so far and sent on as an `AIMessageChunk`, the whole message at the end. Below
//! `openai.rs`; the chunk itself is read by `openai_chunk.rs`.

use futures::StreamExt;
use serde_json::Value as Json;

use super::error::{ModelError, ModelErrorKind};
use super::openai_chunk::{Chunk, ChunkView};
use super::openai_response::{stream_error, usage_metadata, PROVIDER};
use super::options::ChunkSink;
use super::wire::{self, StreamedCalls};
use crate::messages::Message;
use crate::{Map, Value};

/// What a streamed answer has said so far.
#[derive(Default)]
struct Streamed {
    content: String,
    calls: StreamedCalls,
    /// `response_metadata` after `model_provider`: finish reason, model, fingerprint.
    finish: Map,
    usage: Option<Value>,
    done: bool,
    /// What every text chunk starts from (its id, `model_provider`, no tool-call
    /// chunks), made once: a chunk is a cheap clone of it (the maps are shared).
    chunk: Option<Message>,
}

impl Streamed {
    /// Takes one `chat.completion.chunk` (as a JSON tree); the message chunk to stream,
    /// if any.
    #[cfg(test)]
    fn take(&mut self, chunk: &Json, id: &str) -> Option<Message> {
        self.take_view(&ChunkView::of_json(chunk), id, true)
    }

    /// Takes one chunk, read; the message chunk to stream, if any and if `chunks` (a
    /// call that streams to no one makes none).
    fn take_view(&mut self, chunk: &ChunkView<'_>, id: &str, chunks: bool) -> Option<Message> {
        let usage = chunk.usage.map(usage_metadata);
        if usage.is_some() {
            self.usage.clone_from(&usage);
        }
        let Some(choice) = &chunk.choice else {
            let mut out = Message::ai("").with_id(id);
            out.usage_metadata = usage;
            return (chunks && out.usage_metadata.is_some()).then_some(out);
        };
        self.content.push_str(choice.text);
        for &(cid, name, args, index) in &choice.calls {
            self.calls.add(index, cid, name, args);
        }
        if !chunks && choice.finish_reason.is_none() {
            return None;
        }
        let mut out = self.chunk.get_or_insert_with(|| text_chunk(id)).clone();
        out.usage_metadata = usage;
        out.content = choice.text.into();
        if !choice.calls.is_empty() {
            wire::set_call_chunks(&mut out, &choice.calls);
        }
        if let Some(reason) = choice.finish_reason {
            let mut meta = Map::new();
            meta.insert("finish_reason", reason);
            for (key, v) in [
                ("model_name", chunk.model),
                ("system_fingerprint", chunk.system_fingerprint),
                ("service_tier", chunk.service_tier),
            ] {
                if let Some(v) = v.filter(|v| !v.is_empty()) {
                    meta.insert(key, v);
                }
            }
            for (k, v) in meta.iter() {
                self.finish.insert(k.clone(), v.clone());
            }
            meta.insert("model_provider", PROVIDER);
            out.response_metadata = meta;
        }
        chunks.then_some(out)
    }

    /// The whole answer, if the stream reached its end.
    fn finish(self, id: String) -> Result<Message, ModelError> {
        if !self.done && self.finish.is_empty() {
            return Err(ModelError::new(
                ModelErrorKind::StreamCut,
                PROVIDER,
                "the stream ended before the answer did (no finish_reason, no [DONE])",
            ));
        }
        let mut m = Message::ai(self.content).with_id(id);
        let mut meta = Map::new();
        meta.insert("model_provider", PROVIDER);
        for (k, v) in self.finish.iter() {
            meta.insert(k.clone(), v.clone());
        }
        m.response_metadata = meta;
        m.usage_metadata = self.usage;
        (m.tool_calls, m.invalid_tool_calls) = wire::split_calls(self.calls.finish());
        Ok(m)
    }
}

/// A text chunk of the answer `id`: its `model_provider`, no tool-call chunks.
fn text_chunk(id: &str) -> Message {
    let mut out = Message::ai("").with_id(id);
    let mut meta = Map::new();
    meta.insert("model_provider", PROVIDER);
    out.response_metadata = meta;
    out.extra
        .insert("tool_call_chunks", Value::list(Vec::new()));
    out
}

/// Reads a streamed answer, streaming each chunk to `ctx`.
pub(super) async fn read_stream(
    mut events: impl futures::Stream<Item = Result<super::sse::Event, ModelError>> + Unpin,
    id: String,
    mut sink: Option<ChunkSink<'_>>,
) -> Result<Message, ModelError> {
    let mut state = Streamed::default();
    while let Some(event) = events.next().await {
        let event = event?;
        let data = event.data.trim();
        if data == "[DONE]" {
            state.done = true;
            break;
        }
        if data.is_empty() {
            continue;
        }
        // The typed read borrows the chunk's text and builds no JSON tree; a chunk of an
        // unusual shape (a field of another type) is read as a tree, as before.
        let out = match serde_json::from_str::<Chunk<'_>>(data) {
            Ok(typed) => {
                if let Some(error) = &typed.error {
                    return Err(stream_error(error));
                }
                state.take_view(&typed.view(), &id, sink.is_some())
            }
            Err(_) => {
                let chunk: Json = serde_json::from_str(data).map_err(|e| {
                    ModelError::new(
                        ModelErrorKind::InvalidResponse,
                        PROVIDER,
                        format!("a chunk that is not JSON ({e}): {data}"),
                    )
                })?;
                if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
                    return Err(stream_error(error));
                }
                state.take_view(&ChunkView::of_json(&chunk), &id, sink.is_some())
            }
        };
        if let (Some(out), Some(sink)) = (out, sink.as_mut()) {
            sink(&out);
        }
    }
    let message = state.finish(id.clone())?;
    if let Some(sink) = sink {
        let mut last = Message::ai("").with_id(id);
        last.extra.insert("chunk_position", "last");
        sink(&last);
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn streamed_chunks_assemble_text_and_parallel_calls() {
        let chunks = [
            json!({"model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]}),
            json!({"model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": "c1", "function": {"name": "a", "arguments": "{\"x\""}},
                {"index": 1, "id": "c2", "function": {"name": "b", "arguments": "{}"}}]}}]}),
            json!({"model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": ":1}"}}]}}]}),
            json!({"model": "m", "system_fingerprint": "fp", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"model": "m", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}),
        ];
        let mut s = Streamed::default();
        for c in &chunks {
            s.take(c, "id1");
        }
        s.done = true;
        let m = s.finish("id1".into()).expect("whole");
        assert_eq!(m.text(), "Hi");
        let names: Vec<&str> = m.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(m.tool_calls[0].args.to_json(), json!({"x": 1}));
        assert_eq!(
            Value::Map(m.response_metadata).to_json(),
            json!({"model_provider": "openai", "finish_reason": "tool_calls", "model_name": "m", "system_fingerprint": "fp"})
        );
        assert_eq!(
            m.usage_metadata.expect("usage").to_json()["total_tokens"],
            7
        );
    }

    #[test]
    fn a_stream_without_its_end_is_cut() {
        let mut s = Streamed::default();
        s.take(
            &json!({"choices": [{"index": 0, "delta": {"content": "Hal"}}]}),
            "i",
        );
        let e = s.finish("i".into()).expect_err("cut");
        assert_eq!(e.kind, ModelErrorKind::StreamCut);
    }

    #[test]
    fn a_text_chunk_is_langchains_and_none_is_made_for_no_one() {
        let text = json!({"model": "m", "choices": [{"index": 0, "delta": {"content": "Hi"}}]});
        let mut s = Streamed::default();
        for _ in 0..2 {
            let c = s.take(&text, "id1").expect("a chunk");
            assert_eq!(c.id.as_deref(), Some("id1"));
            assert_eq!(c.text(), "Hi");
            assert_eq!(
                Value::Map(c.response_metadata).to_json(),
                json!({"model_provider": "openai"})
            );
            assert_eq!(
                Value::Map(c.extra).to_json(),
                json!({"tool_call_chunks": []})
            );
        }
        let view = ChunkView::of_json(&text);
        assert!(s.take_view(&view, "id1", false).is_none());
        assert_eq!(s.content, "HiHiHi", "the answer still grows");
    }
}
