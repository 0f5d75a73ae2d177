//! Chat-model clients of real providers (feature `models`, on by default): the
//! OpenAI-compatible Chat Completions API ([`ChatOpenAI`]: OpenAI, Azure OpenAI, vLLM,
//! llama.cpp's server, Ollama's `/v1`, LM Studio, OpenRouter, Groq, ...) and Anthropic's
//! Messages API ([`ChatAnthropic`]), each a [`ChatModel`](crate::prebuilt::ChatModel) for
//! [`create_react_agent`](crate::prebuilt::create_react_agent) or any node, and
//! [`init_chat_model`] to make one from `"provider:model"`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), stategraph::models::ModelError> {
//! use stategraph::models::{init_chat_model, ChatOpenAI};
//! // From OPENAI_API_KEY / OPENAI_BASE_URL:
//! let model = init_chat_model("openai:gpt-4o-mini")?;
//! // Any OpenAI-compatible server, with options:
//! let local = ChatOpenAI::new("qwen2.5")
//!     .base_url("http://127.0.0.1:8080/v1")
//!     .temperature(0.0)
//!     .max_tokens(256)
//!     .timeout(std::time::Duration::from_secs(30));
//! # let _ = (model, local); Ok(()) }
//! ```
//!
//! # What is stored
//! The answer is the `AIMessage` LangChain's `ChatOpenAI` / `ChatAnthropic` (langchain-openai
//! 1.8, langchain-anthropic 1.7) would store, field by field: `tool_calls` (arguments that
//! are not JSON go to `invalid_tool_calls`, with LangChain's error text), `usage_metadata`
//! (input/output/total tokens and the token details the provider gives),
//! `response_metadata` (`model_provider`, `model_name`, `finish_reason` / `stop_reason`, the
//! raw usage, ...) and the id LangChain gives (`lc_run--<uuid7>`, with `-0` after it for an
//! answer that was not streamed). A thread written here reads in Python as one written
//! with those classes, and the other way round (tests/models_interop.rs).
//!
//! # Streaming
//! A model streams (server-sent events) when built with `.streaming(true)`, or, unless
//! built with `.streaming(false)`, whenever the run streams the `messages` mode (as
//! LangChain streams when a streaming callback listens). Each delta is sent as an
//! `AIMessageChunk` through [`NodeContext::send_message_chunk_with`](crate::NodeContext::send_message_chunk_with)
//! (with LangChain's `ls_*` metadata); tool-call argument fragments are assembled by
//! their index, so parallel calls come out whole. Each chunk also carries its fragments
//! read as LangChain's `AIMessageChunk` reads them (partial JSON arguments as calls). A
//! usage chunk is asked for (`stream_options.include_usage`; LangChain asks for it only on
//! OpenAI's own host unless `stream_usage=True`).
//!
//! # Tool choice on servers that know only part of it
//! `tool_choice` and `parallel_tool_calls` go out as LangChain sends them. llama.cpp's
//! server (tools/server/server-common.cpp, `oaicompat_chat_params_parse`) reads
//! `tool_choice` as a string: the named form `{"type": "function", ...}` is taken as
//! `auto`, and LiteLLM hands Anthropic's `{"type": "tool"}` on to it in that form.
//! `.narrow_named_tool_choice(true)` sends the named tool alone with `required`, which
//! such a server's grammar enforces. Its grammar for tool calls in per-call tags (Hermes'
//! `<tool_call>`) allows several calls whatever `parallel_tool_calls` says
//! (common/chat-auto-parser-generator.cpp, `build_tool_parser_json_native`).
//!
//! # Failures
//! Every failure is a [`ModelError`] of a [`ModelErrorKind`] (401/403, 404, 429 with its
//! `Retry-After`, other 4xx, 5xx, a connection refused or reset, a stream cut before its
//! end, a timeout, a malformed answer), stored as the node's error under the Python SDK's
//! exception name (`RateLimitError(...)`). A 429's wait travels with the node error
//! ([`NodeError::retry_after`](crate::NodeError::retry_after)): a node's `RetryPolicy`
//! waits at least that long. A failed call returns no message, so nothing half-made is
//! stored and the thread resumes from its last checkpoint.
//!
//! # Why reqwest and our own wire types
//! Measured (resolved `cargo tree -e normal` of a crate depending on each, Dec 2026):
//! `reqwest` 0.12 (rustls + ring, no HTTP/2) with `eventsource-stream`: 91 crates;
//! `async-openai` 0.31: 96 (OpenAI only: Anthropic would need a second stack);
//! `genai` 0.4: 121; `rig-core` 0.24: 132. stategraph itself goes from 75 crates
//! (`default-features = false, features = ["sqlite"]`) to 140 with this feature; a cold
//! release build of reqwest and eventsource-stream with all their dependencies (tokio
//! included, which stategraph needs anyway) took 65 s of CPU (`-j1`, user time).
//! The SDKs' own message types would also have to be mapped to LangChain's fields
//! anyway (what matters here is what is stored, down to `token_usage`'s keys), and none
//! of them exposes every field we must store. reqwest is the most used async HTTP client,
//! built on hyper and tokio that stategraph's server already uses; TLS is rustls with
//! Mozilla's roots compiled in (`webpki-roots`), so no system OpenSSL is needed, and ring
//! rather than aws-lc-rs (reqwest 0.13's default) needs no CMake. It is reqwest 0.13, the
//! version rmcp and opentelemetry-otlp use, so that with `mcp` or `otel` on one copy is
//! built; its `rustls-no-provider` feature, with the rustls config (ring, webpki-roots)
//! handed to each client, keeps 0.12's TLS as it was. The byte stream is
//! split into events by our own reader (`sse.rs`; it replaced `eventsource-stream`,
//! whose per-line buffer copies were the largest CPU cost of a streamed call). The two wire formats are small JSON shapes read with `serde_json`.

mod anthropic;
mod anthropic_request;
mod anthropic_response;
mod anthropic_stream;
mod endpoint;
mod error;
mod http;
mod init;
mod openai;
mod openai_chunk;
mod openai_request;
mod openai_response;
mod openai_stream;
mod options;
mod partial_json;
mod sse;
mod wire;

pub use anthropic::{ChatAnthropic, ANTHROPIC_BASE_URL};
pub use error::{ModelError, ModelErrorKind};
pub use init::{init_chat_client, init_chat_model, ChatClient, Provider, OLLAMA_BASE_URL};
pub use openai::{ChatOpenAI, OPENAI_BASE_URL};
pub use options::{ToolChoice, ToolSpec};

/// The JSON document of a structured answer (see `with_structured_output`): the content's
/// text read as JSON (Anthropic's forced tool call, if the answer has one, else the text).
pub fn parse_structured(message: &crate::Message) -> Result<serde_json::Value, ModelError> {
    if let Some(call) = message.tool_calls.first() {
        return Ok(call.args.to_json());
    }
    let text = message.text();
    serde_json::from_str(&text).map_err(|e| {
        ModelError::new(
            ModelErrorKind::InvalidResponse,
            "model",
            format!("the structured answer is not JSON ({e}): {text}"),
        )
    })
}
