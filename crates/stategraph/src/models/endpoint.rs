//! What both clients hold: the model, where its requests go (base URL, API key), the
//! options sent with every request, and the HTTP client made on first use. `ChatOpenAI`
//! and `ChatAnthropic` each wrap one and add only what their provider has of its own.
//! Below `openai.rs` and `anthropic.rs`; imports neither.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use stategraph_checkpoint::Map;

use super::error::ModelError;
use super::http::{Transport, DEFAULT_TIMEOUT};
use super::options::{Options, ToolSpec};
use super::wire;
use crate::messages::Message;
use crate::prebuilt::Tool;
use crate::pregel::context::NodeContext;

/// One provider's endpoint as a client is configured with it. Cloning is cheap: the HTTP
/// client (its connection pool) is shared, and made again only when the timeout changes.
#[derive(Clone)]
pub(crate) struct Endpoint {
    /// The provider's name in errors and `response_metadata` (`"openai"`).
    pub(crate) provider: &'static str,
    pub(crate) model: String,
    /// Without its trailing `/`.
    pub(crate) base_url: String,
    pub(crate) api_key: Option<String>,
    pub(crate) options: Options,
    timeout: Duration,
    transport: Arc<OnceLock<Result<Transport, ModelError>>>,
}

impl Endpoint {
    /// `model` at the base URL and key of the environment variables `url_var` and
    /// `key_var` (unset or empty: `default_url`, no key).
    pub(crate) fn from_env(
        provider: &'static str,
        model: String,
        url_var: &str,
        key_var: &str,
        default_url: &str,
    ) -> Endpoint {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Endpoint {
            provider,
            model,
            base_url: env(url_var).unwrap_or_else(|| default_url.to_owned()),
            api_key: env(key_var),
            options: Options::default(),
            timeout: DEFAULT_TIMEOUT,
            transport: Arc::default(),
        }
    }

    /// Sets the base URL, its trailing `/` dropped.
    pub(crate) fn set_base_url(&mut self, url: String) {
        self.base_url = url.trim_end_matches('/').to_owned();
    }

    /// Sets the timeout of the connection and of each read; the HTTP client is made again.
    pub(crate) fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
        self.transport = Arc::default();
    }

    /// The HTTP client, made on first use (the error it failed with, every time after).
    pub(crate) fn transport(&self) -> Result<&Transport, ModelError> {
        self.transport
            .get_or_init(|| Transport::new(self.provider, self.timeout))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// How a call of this client runs in the node of `ctx` (its `ChatModel::invoke`):
    /// streamed when the `streaming` option says so, else when the run streams messages;
    /// its chunks go to the run's stream with the model's `ls_*` metadata.
    pub(crate) fn in_node<'c>(&self, ctx: &'c NodeContext) -> NodeCall<'c> {
        NodeCall {
            stream: self
                .options
                .streaming
                .unwrap_or_else(|| ctx.streams_messages()),
            meta: wire::ls_metadata(self.provider, &self.model, &self.options),
            ctx,
        }
    }

    /// Binds `tools`: every later request offers them (`ChatModel::bind_tools`).
    pub(crate) fn bind_tools(&mut self, tools: &[Tool]) {
        self.options.tools = tools.iter().map(ToolSpec::from).collect();
    }

    /// Writes the endpoint as the `Debug` of the client named `name`: the key hidden.
    pub(crate) fn debug_as(&self, name: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(name)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("options", &self.options)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A call made in a node ([`Endpoint::in_node`]): whether it streams, and where its
/// chunks go.
pub(crate) struct NodeCall<'c> {
    /// Whether the call streams.
    pub(crate) stream: bool,
    meta: Map,
    ctx: &'c NodeContext,
}

impl NodeCall<'_> {
    /// Sends `chunk` (an `AIMessageChunk`) to the run's stream, with the model's metadata.
    pub(crate) fn send(&self, chunk: &Message) {
        self.ctx.send_message_chunk_with(chunk, &self.meta);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_key() {
        let mut e = Endpoint::from_env("openai", "m".into(), "", "", "http://h/v1");
        e.api_key = Some("sk-secret".into());
        struct Show<'a>(&'a Endpoint);
        impl std::fmt::Debug for Show<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.debug_as("ChatOpenAI", f)
            }
        }
        let text = format!("{:?}", Show(&e));
        assert!(text.starts_with("ChatOpenAI {"), "{text}");
        assert!(text.contains("***"), "{text}");
        assert!(!text.contains("sk-secret"), "{text}");
    }

    #[test]
    fn a_base_url_loses_its_trailing_slash() {
        let mut e = Endpoint::from_env("openai", "m".into(), "", "", "http://h/v1");
        e.set_base_url("http://127.0.0.1:8080/v1/".into());
        assert_eq!(e.base_url, "http://127.0.0.1:8080/v1");
    }
}
