//! [`ChatAnthropic`]: Anthropic's Messages API (`POST {base}/v1/messages`).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{json, Value as Json};

use super::error::{ModelError, ModelErrorKind};
use super::http::{status_error, Transport, DEFAULT_TIMEOUT};
use super::options::{option_builders, ChunkSink, Options, ToolChoice, ToolSpec};
use super::wire::{self, int, str_at, StreamedCalls};
use crate::messages::{Message, Role};
use crate::prebuilt::{run_message_id, ChatModel, Tool};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;
use crate::{Map, Value};

const PROVIDER: &str = "anthropic";

/// Anthropic's own host, the default when `ANTHROPIC_BASE_URL` is not set.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// The `anthropic-version` header sent.
const API_VERSION: &str = "2023-06-01";

/// A chat model on Anthropic's Messages API: LangChain's `ChatAnthropic`.
///
/// [`ChatAnthropic::new`] reads `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` (the bare
/// host; requests go to `{base}/v1/messages`). `max_tokens` defaults to 4096 (the API
/// requires one); the API has no seed. Structured output is a forced tool call (the
/// default method of LangChain's `ChatAnthropic.with_structured_output`).
#[derive(Clone)]
pub struct ChatAnthropic {
    model: String,
    base_url: String,
    api_key: Option<String>,
    options: Options,
    timeout: Duration,
    transport: Arc<OnceLock<Result<Transport, ModelError>>>,
}

impl std::fmt::Debug for ChatAnthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatAnthropic")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl ChatAnthropic {
    /// A client of `model`, with the key and base URL of the environment.
    pub fn new(model: impl Into<String>) -> ChatAnthropic {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        ChatAnthropic {
            model: model.into(),
            base_url: env("ANTHROPIC_BASE_URL").unwrap_or_else(|| ANTHROPIC_BASE_URL.to_owned()),
            api_key: env("ANTHROPIC_API_KEY"),
            options: Options::default(),
            timeout: DEFAULT_TIMEOUT,
            transport: Arc::default(),
        }
    }

    /// Sets the base URL: the bare host, `http://127.0.0.1:4000` (builder style).
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// Sets the API key, sent as `x-api-key` (builder style).
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    option_builders!();

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Answers `messages` outside a graph: the AI message, or why the call failed.
    pub async fn call(&self, messages: &[Message], stream: bool) -> Result<Message, ModelError> {
        self.answer(messages, stream, None).await
    }

    /// Answers `messages` outside a graph, streaming: `on_chunk` gets each
    /// `AIMessageChunk` as it arrives; the whole AI message is returned.
    pub async fn stream_to(
        &self,
        messages: &[Message],
        mut on_chunk: impl FnMut(&Message) + Send,
    ) -> Result<Message, ModelError> {
        self.answer(messages, true, Some(&mut on_chunk)).await
    }

    async fn answer(
        &self,
        messages: &[Message],
        stream: bool,
        sink: Option<ChunkSink<'_>>,
    ) -> Result<Message, ModelError> {
        let body = self.request_body(messages, stream);
        let transport = self
            .transport
            .get_or_init(|| Transport::new(PROVIDER, self.timeout))
            .as_ref()
            .map_err(Clone::clone)?;
        let url = format!("{}/v1/messages", self.base_url);
        let mut headers = vec![("anthropic-version", API_VERSION.to_owned())];
        if let Some(key) = &self.api_key {
            headers.push(("x-api-key", key.clone()));
        }
        let resp = transport
            .post(&url, &headers, &body, self.options.retries())
            .await?;
        let id = run_message_id();
        let as_text = self.options.tools.is_empty() && self.options.json_schema.is_none();
        if stream {
            let events = transport.events(resp);
            read_stream(events, id, sink, as_text).await
        } else {
            let mut m = read_message(&transport.json(resp).await?)?;
            m.id = Some(format!("{id}-0"));
            Ok(m)
        }
    }

    /// The request's JSON body.
    fn request_body(&self, messages: &[Message], stream: bool) -> Json {
        let o = &self.options;
        let mut body = serde_json::Map::new();
        body.insert("max_tokens".into(), json!(o.max_tokens.unwrap_or(4096)));
        let (system, wire) = wire_messages(messages);
        body.insert("messages".into(), Json::Array(wire));
        body.insert("model".into(), json!(self.model));
        if let Some(system) = system {
            body.insert("system".into(), json!(system));
        }
        if stream {
            body.insert("stream".into(), json!(true));
        }
        if let Some(t) = o.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if !o.stop.is_empty() {
            body.insert("stop_sequences".into(), json!(o.stop));
        }
        let mut tools: Vec<Json> = o
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "input_schema": t.parameters, "description": t.description}))
            .collect();
        let mut choice = o.tool_choice.clone();
        if let Some((name, schema)) = &o.json_schema {
            tools.push(json!({"name": name, "input_schema": schema, "description": "The answer, as structured output."}));
            choice = Some(ToolChoice::Tool(name.clone()));
        }
        let names = tools.iter().filter_map(|t| str_at(t, "name"));
        let (choice, alone) = o.choice_to_send(choice.as_ref(), names);
        if let Some(alone) = alone.map(str::to_owned) {
            tools.retain(|t| str_at(t, "name") == Some(alone.as_str()));
        }
        if !tools.is_empty() {
            body.insert("tools".into(), Json::Array(tools));
            if let Some(choice) = &choice {
                let mut c = match choice {
                    ToolChoice::Auto => json!({"type": "auto"}),
                    ToolChoice::None => json!({"type": "none"}),
                    ToolChoice::Required => json!({"type": "any"}),
                    ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
                };
                if o.parallel_tool_calls == Some(false) {
                    c["disable_parallel_tool_use"] = json!(true);
                }
                body.insert("tool_choice".into(), c);
            }
        }
        Json::Object(body)
    }
}

#[async_trait]
impl ChatModel for ChatAnthropic {
    async fn invoke(&self, messages: &[Message], ctx: &NodeContext) -> Result<Message, NodeError> {
        let stream = self
            .options
            .streaming
            .unwrap_or_else(|| ctx.streams_messages());
        let meta = wire::ls_metadata(PROVIDER, &self.model, &self.options);
        let mut send = |m: &Message| ctx.send_message_chunk_with(m, &meta);
        let answer = self.answer(messages, stream, Some(&mut send)).await;
        answer.map_err(ModelError::into_node_error)
    }

    fn bind_tools(&self, tools: &[Tool]) -> Arc<dyn ChatModel> {
        let mut bound = self.clone();
        bound.options.tools = tools.iter().map(ToolSpec::from).collect();
        Arc::new(bound)
    }
}

/// The system prompt and the conversation in the wire's form: tool results are user
/// turns of `tool_result` blocks, merged with the user turn before them.
fn wire_messages(messages: &[Message]) -> (Option<String>, Vec<Json>) {
    let mut system: Vec<String> = Vec::new();
    let mut out: Vec<Json> = Vec::new();
    for m in messages {
        let (role, blocks) = match m.role {
            Role::System => {
                system.push(m.text());
                continue;
            }
            Role::Ai => ("assistant", ai_blocks(m)),
            Role::Tool => {
                let mut block = json!({"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.text()});
                if m.status == "error" {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
            _ => ("user", user_blocks(m)),
        };
        if let Some(last) = out.last_mut().filter(|l| l["role"] == role) {
            if let Some(list) = last["content"].as_array_mut() {
                list.extend(blocks);
                continue;
            }
        }
        out.push(json!({"role": role, "content": blocks}));
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, out)
}

fn user_blocks(m: &Message) -> Vec<Json> {
    match m.content.to_json() {
        Json::Array(items) => items
            .into_iter()
            .map(|b| match b {
                Json::String(s) => json!({"type": "text", "text": s}),
                other => other,
            })
            .collect(),
        _ => vec![json!({"type": "text", "text": m.text()})],
    }
}

fn ai_blocks(m: &Message) -> Vec<Json> {
    let mut blocks = Vec::new();
    let text = m.text();
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for c in &m.tool_calls {
        blocks.push(
            json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.args.to_json()}),
        );
    }
    blocks
}

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
fn usage_metadata(usage: &Json) -> Value {
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
fn block_value(block: &Json, extra: Option<(&str, Value)>) -> Value {
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
fn read_message(resp: &Json) -> Result<Message, ModelError> {
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
async fn read_stream(
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

    #[test]
    fn options_go_out_as_the_api_reference_names_them() {
        let m = ChatAnthropic::new("claude")
            .temperature(0.5)
            .stop(["END"])
            .tool_choice(ToolChoice::Required)
            .parallel_tool_calls(false)
            .bind_tool_specs(vec![ToolSpec::new(
                "add",
                "Adds.",
                json!({"type": "object"}),
            )]);
        let body = m.request_body(&[Message::human("hi")], true);
        assert_eq!(
            body,
            json!({"max_tokens": 4096, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
                "model": "claude", "stream": true, "temperature": 0.5, "stop_sequences": ["END"],
                "tools": [{"name": "add", "input_schema": {"type": "object"}, "description": "Adds."}],
                "tool_choice": {"type": "any", "disable_parallel_tool_use": true}})
        );
        let structured =
            ChatAnthropic::new("c").with_structured_output("out", json!({"type": "object"}));
        let body = structured.request_body(&[], false);
        assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "out"}));
        assert_eq!(body["tools"][0]["name"], "out");
    }

    #[test]
    fn a_narrowed_named_choice_sends_that_tool_alone_with_any() {
        let specs = ["add", "shout"].map(|n| ToolSpec::new(n, "", json!({"type": "object"})));
        let m = ChatAnthropic::new("c")
            .bind_tool_specs(specs.to_vec())
            .tool_choice(ToolChoice::Tool("shout".into()))
            .narrow_named_tool_choice(true);
        let body = m.request_body(&[], false);
        assert_eq!(body["tool_choice"], json!({"type": "any"}));
        let names: Vec<&Json> = body["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| &t["name"])
            .collect();
        assert_eq!(names, [&json!("shout")]);
        let unknown = m.tool_choice(ToolChoice::Tool("nope".into()));
        let body = unknown.request_body(&[], false);
        assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "nope"}));
        assert_eq!(body["tools"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn tool_results_join_the_user_turn_and_system_goes_apart() {
        let ai = Message::ai("").with_tool_calls(vec![
            crate::ToolCall::new("add", crate::map! {"a" => 1}, "t1"),
            crate::ToolCall::new("add", crate::map! {"a" => 2}, "t2"),
        ]);
        let msgs = [
            Message::system("be brief"),
            Message::human("hi"),
            ai,
            Message::tool("1", "t1"),
            Message::tool("2", "t2"),
        ];
        let (system, wire) = wire_messages(&msgs);
        assert_eq!(system.as_deref(), Some("be brief"));
        assert_eq!(wire.len(), 3);
        assert_eq!(wire[2]["content"].as_array().map(Vec::len), Some(2));
        assert_eq!(wire[1]["content"][0]["type"], "tool_use");
    }
}
