//! [`LlmToolEmulator`] (langchain's `LLMToolEmulator`): tool calls answered by a model
//! instead of the tools, for testing an agent without its tools' effects.

use std::sync::Arc;

use async_trait::async_trait;

use super::middleware::{Hook, Middleware, ToolCallRequest, ToolHandler};
use crate::messages::Message;
use crate::prebuilt::chat_model::ChatModel;
use crate::pregel::node_error::NodeError;

/// Answers tool calls with a model (langchain's `LLMToolEmulator`): for each call of an
/// emulated tool (all by default, or those named with [`tools`](Self::tools)) the model
/// gets one human message naming the tool, its description and the arguments (Python's
/// prompt, the arguments as Python prints a dict), and its answer's content is the tool
/// message's (named after the tool). Other calls run their tool.
///
/// Python's default model (an Anthropic model, deprecated there) has no Rust form: the
/// model is given.
///
/// ```
/// use stategraph::prebuilt::agent::{create_agent, LlmToolEmulator};
/// use stategraph::prebuilt::FakeChatModel;
/// let emulator = LlmToolEmulator::new(FakeChatModel::new([stategraph::Message::ai("sunny")]))
///     .tools(["get_weather"]);
/// let agent = create_agent(FakeChatModel::new([stategraph::Message::ai("ok")]), vec![])
///     .middleware(emulator)
///     .compile()
///     .unwrap();
/// # let _ = agent;
/// ```
#[derive(Clone)]
pub struct LlmToolEmulator {
    model: Arc<dyn ChatModel>,
    tools: Option<Vec<String>>,
}

impl std::fmt::Debug for LlmToolEmulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmToolEmulator")
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl LlmToolEmulator {
    /// Emulates every tool with `model`.
    pub fn new(model: impl ChatModel) -> LlmToolEmulator {
        LlmToolEmulator {
            model: Arc::new(model),
            tools: None,
        }
    }

    /// Emulates only the tools named (Python's `tools=[..]`; an empty list emulates
    /// none).
    pub fn tools<I: IntoIterator<Item = T>, T: Into<String>>(mut self, names: I) -> Self {
        self.tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    fn emulates(&self, name: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
    }
}

#[async_trait]
impl Middleware for LlmToolEmulator {
    fn name(&self) -> String {
        "LLMToolEmulator".into()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::WrapToolCall]
    }

    async fn wrap_tool_call(
        &self,
        request: ToolCallRequest,
        handler: ToolHandler,
    ) -> Result<Message, NodeError> {
        let call = &request.call;
        if !self.emulates(&call.name) {
            return handler.call(request).await;
        }
        let description = request
            .tool
            .as_ref()
            .map_or("No description available", |t| t.description());
        let prompt = format!(
            "You are emulating a tool call for testing purposes.\n\nTool: {}\nDescription: {description}\nArguments: {}\n\nGenerate a realistic response that this tool would return given these arguments.\nReturn ONLY the tool's output, no explanation or preamble. Introduce variation into your responses.",
            call.name,
            call.args.repr()
        );
        let answer = self
            .model
            .invoke(&[Message::human(prompt)], &request.ctx)
            .await?;
        let id = call.id.clone().unwrap_or_default();
        Ok(Message::tool(answer.content, id).with_name(call.name.as_str()))
    }
}
