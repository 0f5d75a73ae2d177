//! `ToolErrorMiddleware`: chosen tool failures given back to the model as error tool
//! messages (langchain's `tool_error.py`).

use std::sync::Arc;

use async_trait::async_trait;

use super::middleware::{Hook, Middleware, ToolCallRequest, ToolHandler};
use super::tool_retry::error_tool_message;
use crate::messages::Message;
use crate::pregel::node_error::NodeError;
use crate::Value;

type OnError = dyn Fn(&NodeError, &ToolCallRequest) -> Option<Value> + Send + Sync;

/// Turns a failing tool call into an error tool message when `on_error` gives its
/// content (a string, or a list of content blocks); `None` lets the error fail the run.
/// Interrupts and parent commands never reach `on_error`. As Python's
/// `ToolErrorMiddleware(on_error, tools=..)`, it does not retry: put a
/// [`ToolRetryMiddleware`](super::ToolRetryMiddleware) with
/// [`ToolRetryFailure::Error`](super::ToolRetryFailure::Error) after it (inner).
///
/// ```
/// use stategraph::prebuilt::agent::ToolErrorMiddleware;
/// let errors = ToolErrorMiddleware::new(|err, request| {
///     let kind = err.repr()?.split('(').next()?.to_owned();
///     (kind == "ValueError").then(|| format!("`{}` failed; fix the input.", request.call.name))
/// })
/// .tools(["search"]);
/// ```
#[derive(Clone)]
pub struct ToolErrorMiddleware {
    on_error: Arc<OnError>,
    tools: Option<Vec<String>>,
}

impl std::fmt::Debug for ToolErrorMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolErrorMiddleware")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl ToolErrorMiddleware {
    /// Handles every tool's failures with `on_error` (Python's `on_error`; the
    /// closure is the one handler, so Python's "requires `on_error`" cannot happen).
    pub fn new<C: Into<Value>>(
        on_error: impl Fn(&NodeError, &ToolCallRequest) -> Option<C> + Send + Sync + 'static,
    ) -> Self {
        ToolErrorMiddleware {
            on_error: Arc::new(move |err, request| on_error(err, request).map(Into::into)),
            tools: None,
        }
    }

    /// Handles only the failures of these tools (Python's `tools=[..]`).
    pub fn tools<I: IntoIterator<Item = T>, T: Into<String>>(mut self, names: I) -> Self {
        self.tools = Some(names.into_iter().map(Into::into).collect());
        self
    }
}

#[async_trait]
impl Middleware for ToolErrorMiddleware {
    fn name(&self) -> String {
        "ToolErrorMiddleware".to_owned()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::WrapToolCall]
    }

    async fn wrap_tool_call(
        &self,
        request: ToolCallRequest,
        handler: ToolHandler,
    ) -> Result<Message, NodeError> {
        let handled = self
            .tools
            .as_ref()
            .map_or(true, |t| t.contains(&request.call.name));
        if !handled {
            return handler.call(request).await;
        }
        let err = match handler.call(request.clone()).await {
            Ok(message) => return Ok(message),
            Err(e) if e.repr().is_none() => return Err(e), // an interrupt goes up
            Err(e) => e,
        };
        match (self.on_error)(&err, &request) {
            Some(content) => Ok(error_tool_message(&request, content)),
            None => Err(err),
        }
    }
}
