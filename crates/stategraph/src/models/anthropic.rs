//! [`ChatAnthropic`]: Anthropic's Messages API (`POST {base}/v1/messages`).

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value as Json;

use super::anthropic_request::{betas, request_body};
use super::anthropic_response::{read_message, PROVIDER};
use super::anthropic_stream::read_stream;
use super::endpoint::Endpoint;
use super::error::ModelError;
use super::options::{option_builders, ChunkSink};
use crate::messages::Message;
use crate::prebuilt::{run_message_id, ChatModel, Tool};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

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
    endpoint: Endpoint,
}

impl std::fmt::Debug for ChatAnthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.endpoint.debug_as("ChatAnthropic", f)
    }
}

impl ChatAnthropic {
    /// A client of `model`, with the key and base URL of the environment.
    pub fn new(model: impl Into<String>) -> ChatAnthropic {
        ChatAnthropic {
            endpoint: Endpoint::from_env(
                PROVIDER,
                model.into(),
                "ANTHROPIC_BASE_URL",
                "ANTHROPIC_API_KEY",
                ANTHROPIC_BASE_URL,
            ),
        }
    }

    /// Sets the base URL: the bare host, `http://127.0.0.1:4000` (builder style).
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.endpoint.set_base_url(url.into());
        self
    }

    /// Sets the API key, sent as `x-api-key` (builder style).
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.endpoint.api_key = Some(key.into());
        self
    }

    option_builders!();

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.endpoint.model
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
        let e = &self.endpoint;
        let transport = e.transport()?;
        let url = format!("{}/v1/messages", e.base_url);
        let mut headers = vec![("anthropic-version", API_VERSION.to_owned())];
        if let Some(key) = &e.api_key {
            headers.push(("x-api-key", key.clone()));
        }
        if let Some(betas) = betas(e) {
            headers.push(("anthropic-beta", betas));
        }
        let resp = transport
            .post(&url, &headers, &body, e.options.retries())
            .await?;
        let id = run_message_id();
        let as_text = e.options.tools.is_empty() && e.options.json_schema.is_none();
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
        request_body(&self.endpoint, messages, stream)
    }
}

#[async_trait]
impl ChatModel for ChatAnthropic {
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

    fn provider(&self) -> Option<String> {
        Some(PROVIDER.to_owned())
    }

    fn bind_tools_with(
        &self,
        tools: &[Tool],
        deferred: &BTreeSet<String>,
        provider_tools: &[Json],
    ) -> Option<Arc<dyn ChatModel>> {
        let mut bound = self.clone();
        bound.endpoint.bind_tools(tools);
        bound.endpoint.options.deferred = deferred.clone();
        bound.endpoint.options.provider_tools = provider_tools.to_vec();
        Some(Arc::new(bound))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::models::{ToolChoice, ToolSpec};

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
    fn deferred_tools_and_provider_tools_go_out_with_their_beta() {
        let specs = ["add", "shout"].map(|n| ToolSpec::new(n, "", json!({"type": "object"})));
        let plain = ChatAnthropic::new("c").bind_tool_specs(specs.to_vec());
        assert_eq!(betas(&plain.endpoint), None);
        let search =
            json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"});
        let m = plain.defer_loading(["shout"]).provider_tool(search.clone());
        let body = m.request_body(&[], false);
        let tools = body["tools"].as_array().expect("tools");
        assert_eq!(tools[0].get("defer_loading"), None);
        assert_eq!(tools[1]["defer_loading"], json!(true));
        assert_eq!(tools[2], search);
        assert_eq!(
            betas(&m.endpoint).as_deref(),
            Some("advanced-tool-use-2025-11-20")
        );
    }
}
