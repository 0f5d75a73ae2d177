//! [`ChatOpenAI`]: the OpenAI Chat Completions API (`POST {base}/chat/completions`), as
//! OpenAI and every compatible server (Azure, vLLM, llama.cpp, Ollama, LM Studio, ...)
//! speak it.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{json, Value as Json};

use super::error::{ModelError, ModelErrorKind};
use super::http::{Transport, DEFAULT_TIMEOUT};
use super::openai_chunk::{Chunk, ChunkView};
use super::options::{option_builders, ChunkSink, Options, ToolChoice, ToolSpec};
use super::wire::{self, int, str_at, StreamedCalls};
use crate::messages::{Message, Role};
use crate::prebuilt::{run_message_id, ChatModel, Tool};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;
use crate::{Map, Value};

const PROVIDER: &str = "openai";

/// OpenAI's own base URL, the default when `OPENAI_BASE_URL` is not set.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// A chat model on the OpenAI Chat Completions API: LangChain's `ChatOpenAI`.
///
/// [`ChatOpenAI::new`] reads `OPENAI_API_KEY` and `OPENAI_BASE_URL` (the base includes
/// `/v1`; requests go to `{base}/chat/completions`); the builder methods set the rest.
/// A server that needs no key (a local one) gets none. Cloning is cheap (the HTTP
/// connection pool is shared).
#[derive(Clone)]
pub struct ChatOpenAI {
    model: String,
    base_url: String,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    stream_usage: bool,
    options: Options,
    timeout: Duration,
    transport: Arc<OnceLock<Result<Transport, ModelError>>>,
}

impl std::fmt::Debug for ChatOpenAI {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatOpenAI")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("options", &self.options)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ChatOpenAI {
    /// A client of `model`, with the key and base URL of the environment
    /// (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, else OpenAI's own host).
    pub fn new(model: impl Into<String>) -> ChatOpenAI {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        ChatOpenAI {
            model: model.into(),
            base_url: env("OPENAI_BASE_URL").unwrap_or_else(|| OPENAI_BASE_URL.to_owned()),
            api_key: env("OPENAI_API_KEY"),
            headers: Vec::new(),
            stream_usage: true,
            options: Options::default(),
            timeout: DEFAULT_TIMEOUT,
            transport: Arc::default(),
        }
    }

    /// Sets the base URL, `/v1` included (`http://127.0.0.1:8080/v1`; builder style).
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// Sets the API key, sent as `Authorization: Bearer <key>` (builder style).
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Adds a header to every request (e.g. Azure's `api-key`; builder style).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the sampling seed (builder style).
    #[must_use]
    pub fn seed(mut self, seed: i64) -> Self {
        self.options.seed = Some(seed);
        self
    }

    /// Asks a streamed answer for its token usage (`stream_options.include_usage`; on by
    /// default; builder style).
    #[must_use]
    pub fn stream_usage(mut self, on: bool) -> Self {
        self.stream_usage = on;
        self
    }

    option_builders!();

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The base URL requests go to (`{base}/chat/completions`).
    pub fn base_url_str(&self) -> &str {
        &self.base_url
    }

    /// The tools bound to this model.
    pub fn bound_tools(&self) -> &[ToolSpec] {
        &self.options.tools
    }

    /// Answers `messages` outside a graph (no streaming to anyone): the AI message, or
    /// why the call failed.
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

    fn transport(&self) -> Result<&Transport, ModelError> {
        self.transport
            .get_or_init(|| Transport::new(PROVIDER, self.timeout))
            .as_ref()
            .map_err(Clone::clone)
    }

    async fn answer(
        &self,
        messages: &[Message],
        stream: bool,
        sink: Option<ChunkSink<'_>>,
    ) -> Result<Message, ModelError> {
        let body = self.request_body(messages, stream);
        let transport = self.transport()?;
        let url = format!("{}/chat/completions", self.base_url);
        let mut headers: Vec<(&str, String)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        if let Some(key) = &self.api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        let resp = transport
            .post(&url, &headers, &body, self.options.retries())
            .await?;
        let id = run_message_id();
        if stream {
            let events = transport.events(resp);
            read_stream(events, id, sink).await
        } else {
            let json = transport.json(resp).await?;
            let mut message =
                read_completion(&json, &self.model, self.options.json_schema.is_some())?;
            message.id = Some(format!("{id}-0"));
            Ok(message)
        }
    }

    /// The request's JSON body.
    fn request_body(&self, messages: &[Message], stream: bool) -> Json {
        let o = &self.options;
        let mut body = serde_json::Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("stream".into(), json!(stream));
        let wire: Vec<Json> = messages.iter().map(wire_message).collect();
        body.insert("messages".into(), Json::Array(wire));
        if stream && self.stream_usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        if let Some(t) = o.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(n) = o.max_tokens {
            // OpenAI's reasoning models take only the new name; other servers know the old.
            let key = if self.base_url.starts_with(OPENAI_BASE_URL) {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body.insert(key.into(), json!(n));
        }
        if !o.stop.is_empty() {
            body.insert("stop".into(), json!(o.stop));
        }
        if let Some(seed) = o.seed {
            body.insert("seed".into(), json!(seed));
        }
        if let Some((name, schema)) = &o.json_schema {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema}}),
            );
        }
        if !o.tools.is_empty() {
            let names = o.tools.iter().map(|t| t.name.as_str());
            let (choice, alone) = o.choice_to_send(o.tool_choice.as_ref(), names);
            let tools: Vec<Json> = o
                .tools
                .iter()
                .filter(|t| alone.is_none_or(|name| t.name == name))
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect();
            body.insert("tools".into(), Json::Array(tools));
            if let Some(choice) = &choice {
                body.insert("tool_choice".into(), tool_choice(choice));
            }
            if let Some(p) = o.parallel_tool_calls {
                body.insert("parallel_tool_calls".into(), json!(p));
            }
        }
        Json::Object(body)
    }
}

#[async_trait]
impl ChatModel for ChatOpenAI {
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

fn tool_choice(choice: &ToolChoice) -> Json {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

/// A message in the wire's form.
fn wire_message(m: &Message) -> Json {
    let mut out = serde_json::Map::new();
    let role = match &m.role {
        Role::Human => "user",
        Role::Ai => "assistant",
        Role::System => match m
            .additional_kwargs
            .get("__openai_role__")
            .and_then(Value::as_str)
        {
            Some("developer") => "developer",
            _ => "system",
        },
        Role::Tool => "tool",
        Role::Function => "function",
        Role::Chat(role) => role.as_str(),
        Role::Remove => "user",
    };
    out.insert("role".into(), json!(role));
    let content = match (&m.role, m.content.as_str()) {
        (_, Some(text)) => json!(text),
        (Role::Human, None) => m.content.to_json(),
        _ => json!(m.text()),
    };
    if let Some(name) = &m.name {
        out.insert("name".into(), json!(name));
    }
    if m.role == Role::Ai {
        let calls = ai_tool_calls(m);
        let empty = content.as_str() == Some("");
        out.insert(
            "content".into(),
            if empty && !calls.is_empty() {
                Json::Null
            } else {
                content
            },
        );
        if !calls.is_empty() {
            out.insert("tool_calls".into(), Json::Array(calls));
        }
    } else {
        out.insert("content".into(), content);
    }
    if let Some(id) = &m.tool_call_id {
        out.insert("tool_call_id".into(), json!(id));
    }
    Json::Object(out)
}

/// An AI message's calls, the invalid ones too (with their text as is), as LangChain
/// sends them back.
fn ai_tool_calls(m: &Message) -> Vec<Json> {
    let mut calls: Vec<Json> = m
        .tool_calls
        .iter()
        .map(|c| {
            let args = serde_json::to_string(&c.args.to_json()).unwrap_or_default();
            json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": args}})
        })
        .collect();
    for bad in &m.invalid_tool_calls {
        let bad = bad.to_json();
        calls.push(json!({"id": bad["id"], "type": "function",
            "function": {"name": bad["name"], "arguments": bad["args"]}}));
    }
    calls
}

/// A non-streamed answer (`chat.completion`) as the stored AI message.
fn read_completion(resp: &Json, model: &str, structured: bool) -> Result<Message, ModelError> {
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
fn usage_metadata(usage: &Json) -> Value {
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
fn stream_error(error: &Json) -> ModelError {
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
async fn read_stream(
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
    fn options_go_out_as_the_api_reference_names_them() {
        let m = ChatOpenAI::new("m")
            .base_url("http://127.0.0.1:1/v1")
            .temperature(0.5)
            .max_tokens(9)
            .stop(["END"])
            .seed(3)
            .tool_choice(ToolChoice::Tool("add".into()))
            .parallel_tool_calls(false)
            .bind_tool_specs(vec![ToolSpec::new(
                "add",
                "Adds.",
                json!({"type": "object"}),
            )])
            .with_structured_output("out", json!({"type": "object"}));
        let body = m.request_body(&[Message::human("hi")], true);
        assert_eq!(
            body,
            json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}],
                "stream_options": {"include_usage": true}, "temperature": 0.5, "max_tokens": 9,
                "stop": ["END"], "seed": 3,
                "response_format": {"type": "json_schema", "json_schema": {"name": "out", "schema": {"type": "object"}}},
                "tools": [{"type": "function", "function": {"name": "add", "description": "Adds.", "parameters": {"type": "object"}}}],
                "tool_choice": {"type": "function", "function": {"name": "add"}},
                "parallel_tool_calls": false})
        );
        let openai = ChatOpenAI::new("m").base_url(OPENAI_BASE_URL).max_tokens(9);
        assert_eq!(openai.request_body(&[], false)["max_completion_tokens"], 9);
    }

    #[test]
    fn a_narrowed_named_choice_sends_that_tool_alone_with_required() {
        let specs = ["add", "shout"].map(|n| ToolSpec::new(n, "", json!({"type": "object"})));
        let named = ChatOpenAI::new("m")
            .bind_tool_specs(specs.to_vec())
            .tool_choice(ToolChoice::Tool("shout".into()));
        let body = named.request_body(&[], false);
        assert_eq!(body["tool_choice"]["function"]["name"], "shout");
        assert_eq!(body["tools"].as_array().map(Vec::len), Some(2));
        let body = named
            .narrow_named_tool_choice(true)
            .request_body(&[], false);
        assert_eq!(body["tool_choice"], "required");
        let names: Vec<&Json> = body["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| &t["function"]["name"])
            .collect();
        assert_eq!(names, [&json!("shout")]);
    }

    #[test]
    fn history_goes_out_in_the_wire_form() {
        let ai = Message::ai("").with_tool_calls(vec![crate::ToolCall::new(
            "add",
            crate::map! {"a" => 1},
            "c1",
        )]);
        let w = wire_message(&ai);
        assert_eq!(w["content"], Json::Null);
        assert_eq!(w["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
        let t = wire_message(&Message::tool("3", "c1"));
        assert_eq!(
            t,
            json!({"role": "tool", "content": "3", "tool_call_id": "c1"})
        );
    }
}
