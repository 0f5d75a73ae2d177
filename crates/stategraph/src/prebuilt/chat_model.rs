//! The chat model an agent calls: a conversation in, one AI message out, with tools bound
//! and chunks streamed to the `messages` stream mode.

use std::sync::Arc;

use async_trait::async_trait;

use super::tool::Tool;
use crate::messages::Message;
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// A chat model (LangChain's `BaseChatModel`): answers a conversation with one AI
/// message, possibly with tool calls.
///
/// A model that streams calls [`NodeContext::send_message_chunk`] for each chunk as it
/// arrives (the `messages` stream mode shows them), then returns the whole message. A
/// message returned without an id gets one where LangChain gives it, when the agent
/// stores it (see [`run_message_id`]).
///
/// The scripted [`FakeChatModel`](super::FakeChatModel) is for tests; `stategraph::models`
/// (feature `models`) has the OpenAI-compatible and Anthropic clients; implement this trait
/// for another provider.
#[async_trait]
pub trait ChatModel: Send + Sync + 'static {
    /// Answers `messages` (oldest first; a system prompt, if any, comes first).
    async fn invoke(&self, messages: &[Message], ctx: &NodeContext) -> Result<Message, NodeError>;

    /// This model with `tools` bound: the model may call them (a provider sends their
    /// names, descriptions and schemas with each request). Python's `bind_tools`.
    fn bind_tools(&self, tools: &[Tool]) -> Arc<dyn ChatModel>;

    /// The provider, as LangChain names it (`"anthropic"`, `"openai"`), if this model
    /// knows it (Python's `_get_ls_params()["ls_provider"]`). `None` by default.
    fn provider(&self) -> Option<String> {
        None
    }

    /// This model with `tools` bound, those named in `deferred` sent with
    /// `defer_loading: true`, and the raw `provider_tools` entries sent after them
    /// (server-side tools such as a tool search); `None` (the default) when this model
    /// cannot send them.
    fn bind_tools_with(
        &self,
        tools: &[Tool],
        deferred: &std::collections::BTreeSet<String>,
        provider_tools: &[serde_json::Value],
    ) -> Option<Arc<dyn ChatModel>> {
        let _ = (tools, deferred, provider_tools);
        None
    }
}

/// A shared model is a model: what `stategraph::models::init_chat_model`
/// returns (`Arc<dyn ChatModel>`) goes straight to
/// [`create_react_agent`](super::create_react_agent).
#[async_trait]
impl<M: ChatModel + ?Sized> ChatModel for Arc<M> {
    async fn invoke(&self, messages: &[Message], ctx: &NodeContext) -> Result<Message, NodeError> {
        (**self).invoke(messages, ctx).await
    }

    fn bind_tools(&self, tools: &[Tool]) -> Arc<dyn ChatModel> {
        (**self).bind_tools(tools)
    }

    fn provider(&self) -> Option<String> {
        (**self).provider()
    }

    fn bind_tools_with(
        &self,
        tools: &[Tool],
        deferred: &std::collections::BTreeSet<String>,
        provider_tools: &[serde_json::Value],
    ) -> Option<Arc<dyn ChatModel>> {
        (**self).bind_tools_with(tools, deferred, provider_tools)
    }
}

/// A fresh message id as LangChain gives one to a model's answer that has none:
/// `lc_run--<uuid7 of the model run>` (the form of a streamed answer; an answer made
/// without streaming gets the same with `-0` after it).
pub fn run_message_id() -> String {
    format!("lc_run--{}", uuid7())
}

/// A version-7 uuid (Unix milliseconds, then random bits), as Python's `uuid7()`.
fn uuid7() -> uuid::Uuid {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut bytes = *uuid::Uuid::new_v4().as_bytes();
    bytes[..6].copy_from_slice(&millis.to_be_bytes()[2..]);
    bytes[6] = (bytes[6] & 0x0f) | 0x70;
    uuid::Uuid::from_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_message_ids_are_lc_run_uuid7() {
        let id = run_message_id();
        let uuid = id.strip_prefix("lc_run--").expect("LangChain's prefix");
        let parsed = uuid::Uuid::parse_str(uuid).expect("a uuid");
        assert_eq!(parsed.get_version_num(), 7);
        assert_ne!(run_message_id(), id);
    }
}
