//! [`ChatOpenAI`]: the OpenAI Chat Completions API (`POST {base}/chat/completions`), as
//! OpenAI and every compatible server (Azure, vLLM, llama.cpp, Ollama, LM Studio, ...)
//! speak it.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value as Json;

use super::endpoint::Endpoint;
use super::error::ModelError;
use super::openai_request::request_body;
use super::openai_response::{read_completion, PROVIDER};
use super::openai_stream::read_stream;
use super::options::{option_builders, ChunkSink, ToolSpec};
use crate::messages::Message;
use crate::prebuilt::{run_message_id, ChatModel, Tool};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

pub use super::openai_request::OPENAI_BASE_URL;

/// A chat model on the OpenAI Chat Completions API: LangChain's `ChatOpenAI`.
///
/// [`ChatOpenAI::new`] reads `OPENAI_API_KEY` and `OPENAI_BASE_URL` (the base includes
/// `/v1`; requests go to `{base}/chat/completions`); the builder methods set the rest.
/// A server that needs no key (a local one) gets none. Cloning is cheap (the HTTP
/// connection pool is shared).
#[derive(Clone)]
pub struct ChatOpenAI {
    endpoint: Endpoint,
    headers: Vec<(String, String)>,
    stream_usage: bool,
}

impl std::fmt::Debug for ChatOpenAI {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.endpoint.debug_as("ChatOpenAI", f)
    }
}

impl ChatOpenAI {
    /// A client of `model`, with the key and base URL of the environment
    /// (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, else OpenAI's own host).
    pub fn new(model: impl Into<String>) -> ChatOpenAI {
        ChatOpenAI {
            endpoint: Endpoint::from_env(
                PROVIDER,
                model.into(),
                "OPENAI_BASE_URL",
                "OPENAI_API_KEY",
                OPENAI_BASE_URL,
            ),
            headers: Vec::new(),
            stream_usage: true,
        }
    }

    /// Sets the base URL, `/v1` included (`http://127.0.0.1:8080/v1`; builder style).
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.endpoint.set_base_url(url.into());
        self
    }

    /// Sets the API key, sent as `Authorization: Bearer <key>` (builder style).
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.endpoint.api_key = Some(key.into());
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
        self.endpoint.options.seed = Some(seed);
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
        &self.endpoint.model
    }

    /// The base URL requests go to (`{base}/chat/completions`).
    pub fn base_url_str(&self) -> &str {
        &self.endpoint.base_url
    }

    /// The tools bound to this model.
    pub fn bound_tools(&self) -> &[ToolSpec] {
        &self.endpoint.options.tools
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

    async fn answer(
        &self,
        messages: &[Message],
        stream: bool,
        sink: Option<ChunkSink<'_>>,
    ) -> Result<Message, ModelError> {
        let body = self.request_body(messages, stream);
        let e = &self.endpoint;
        let transport = e.transport()?;
        let url = format!("{}/chat/completions", e.base_url);
        let mut headers: Vec<(&str, String)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        if let Some(key) = &e.api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        let resp = transport
            .post(&url, &headers, &body, e.options.retries())
            .await?;
        let id = run_message_id();
        if stream {
            let events = transport.events(resp);
            read_stream(events, id, sink).await
        } else {
            let json = transport.json(resp).await?;
            let mut message = read_completion(&json, &e.model, e.options.json_schema.is_some())?;
            message.id = Some(format!("{id}-0"));
            Ok(message)
        }
    }

    /// The request's JSON body.
    fn request_body(&self, messages: &[Message], stream: bool) -> Json {
        request_body(&self.endpoint, self.stream_usage, messages, stream)
    }
}

#[async_trait]
impl ChatModel for ChatOpenAI {
    async fn invoke(&self, messages: &[Message], ctx: &NodeContext) -> Result<Message, NodeError> {
        let call = self.endpoint.in_node(ctx);
        let mut send = |m: &Message| call.send(m);
        let answer = self.answer(messages, call.stream, Some(&mut send)).await;
        answer.map_err(ModelError::into_node_error)
    }

    fn bind_tools(&self, tools: &[Tool]) -> Arc<dyn ChatModel> {
        let mut bound = self.clone();
        bound.endpoint.bind_tools(tools);
        Arc::new(bound)
    }

    /// `"openai"`. Its [`bind_tools_with`](ChatModel::bind_tools_with) is `None`: OpenAI's
    /// server-side `tool_search` lives in the Responses API (langchain-openai switches to
    /// it for such a tool), and this client speaks Chat Completions.
    fn provider(&self) -> Option<String> {
        Some(PROVIDER.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::models::ToolChoice;

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
}
