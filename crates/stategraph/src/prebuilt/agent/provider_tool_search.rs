//! `ProviderToolSearchMiddleware`: chosen tools deferred behind the provider's
//! server-side tool search (langchain's `provider_tool_search.py`).

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value as Json};

use super::middleware::{Hook, Middleware, ModelHandler, ModelRequest, ModelResponse};
use crate::messages::Message;
use crate::prebuilt::{ChatModel, Tool};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// The providers with a server-side tool search, and the tool entry each one is sent
/// (langchain's `_SERVER_TOOL_SEARCH_TOOLS`), sorted by provider.
const SEARCH_TOOLS: [&str; 2] = ["anthropic", "openai"];

/// The tool-search entry sent to `provider`, if it has one.
fn search_tool(provider: &str) -> Option<Json> {
    match provider {
        "anthropic" => {
            Some(json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}))
        }
        "openai" => Some(json!({"type": "tool_search"})),
        _ => None,
    }
}

/// Sends the tools named in `searchable_tools` with `defer_loading: true` and adds the
/// provider's server-side tool-search tool to the request (Anthropic's
/// `tool_search_tool_bm25_20251119`, OpenAI's `tool_search`): the provider loads a
/// deferred tool's schema only when its search finds it. The provider is the model's
/// ([`ChatModel::provider`]); the tools go out through
/// [`ChatModel::bind_tools_with`]. With no tool deferred, the request passes unchanged.
///
/// A model call fails with Python's `ValueError` when a searchable name is not one of
/// the request's tools, when the model's provider is unknown or has no tool search, or
/// when the client cannot send the entries: [`ChatOpenAI`](crate::models::ChatOpenAI)
/// speaks Chat Completions, and OpenAI's `tool_search` needs the Responses API.
/// [`ChatAnthropic`](crate::models::ChatAnthropic) sends them (with the
/// `anthropic-beta: advanced-tool-use-2025-11-20` header langchain-anthropic adds).
#[derive(Clone, Debug, Default)]
pub struct ProviderToolSearchMiddleware {
    searchable: BTreeSet<String>,
}

impl ProviderToolSearchMiddleware {
    /// Defers the tools named in `searchable_tools` (Python's `searchable_tools=[..]`,
    /// given by name).
    pub fn new<S: Into<String>>(searchable_tools: impl IntoIterator<Item = S>) -> Self {
        ProviderToolSearchMiddleware {
            searchable: searchable_tools.into_iter().map(Into::into).collect(),
        }
    }

    /// The names of the tools deferred.
    pub fn searchable_tool_names(&self) -> &BTreeSet<String> {
        &self.searchable
    }

    /// The request with its model replaced by one binding the deferred tools and the
    /// search tool, or the request unchanged when no tool is deferred.
    fn prepare(&self, mut request: ModelRequest) -> Result<ModelRequest, NodeError> {
        let bound: BTreeSet<&str> = request.tools.iter().map(Tool::name).collect();
        let unknown: Vec<&str> = self
            .searchable
            .iter()
            .map(String::as_str)
            .filter(|n| !bound.contains(n))
            .collect();
        if !unknown.is_empty() {
            return Err(value_error(format!(
                "ProviderToolSearchMiddleware: searchable_tools references tool(s) not bound \
                 to the model: {}",
                unknown.join(", ")
            )));
        }
        if self.searchable.is_empty() {
            return Ok(request);
        }
        let supported = SEARCH_TOOLS.join(", ");
        let Some(provider) = request.model.provider() else {
            return Err(value_error(format!(
                "ProviderToolSearchMiddleware could not determine the provider for the \
                 model; server-side tool search supports: {supported}"
            )));
        };
        let provider = provider.replace('-', "_").to_lowercase();
        let Some(search) = search_tool(&provider) else {
            return Err(value_error(format!(
                "ProviderToolSearchMiddleware requires a provider with server-side tool \
                 search, but got '{provider}'; supported providers: {supported}"
            )));
        };
        let probe = request.model.bind_tools_with(
            &request.tools,
            &self.searchable,
            std::slice::from_ref(&search),
        );
        if probe.is_none() {
            return Err(value_error(format!(
                "ProviderToolSearchMiddleware: the '{provider}' client cannot send the \
                 server-side tool search (OpenAI's needs the Responses API; stategraph's \
                 ChatOpenAI speaks Chat Completions)"
            )));
        }
        request.model = Arc::new(SearchBound {
            inner: request.model.clone(),
            deferred: self.searchable.clone(),
            search,
        });
        Ok(request)
    }
}

fn value_error(message: String) -> NodeError {
    NodeError::named("ValueError", message)
}

#[async_trait]
impl Middleware for ProviderToolSearchMiddleware {
    fn name(&self) -> String {
        "ProviderToolSearchMiddleware".into()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::WrapModelCall]
    }

    async fn wrap_model_call(
        &self,
        request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        handler.call(self.prepare(request)?).await
    }
}

/// A model whose `bind_tools` defers `deferred` and adds `search`.
struct SearchBound {
    inner: Arc<dyn ChatModel>,
    deferred: BTreeSet<String>,
    search: Json,
}

#[async_trait]
impl ChatModel for SearchBound {
    async fn invoke(&self, messages: &[Message], ctx: &NodeContext) -> Result<Message, NodeError> {
        self.inner.invoke(messages, ctx).await
    }

    fn bind_tools(&self, tools: &[Tool]) -> Arc<dyn ChatModel> {
        let search = std::slice::from_ref(&self.search);
        self.inner
            .bind_tools_with(tools, &self.deferred, search)
            .unwrap_or_else(|| self.inner.bind_tools(tools))
    }

    fn provider(&self) -> Option<String> {
        self.inner.provider()
    }

    fn bind_tools_with(
        &self,
        tools: &[Tool],
        deferred: &BTreeSet<String>,
        provider_tools: &[Json],
    ) -> Option<Arc<dyn ChatModel>> {
        self.inner.bind_tools_with(tools, deferred, provider_tools)
    }
}
