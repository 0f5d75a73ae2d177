//! The [`Middleware`] trait: state hooks that run as nodes of the agent's graph
//! (`before_agent`, `before_model`, `after_model`, `after_agent`) and handler-wrapping
//! hooks around each model call and each tool call (`wrap_model_call`,
//! `wrap_tool_call`), as langchain's `AgentMiddleware`.

use std::sync::Arc;

use async_trait::async_trait;
use futures::future::BoxFuture;
use stategraph_checkpoint::Value;

use super::state::{AgentState, AgentUpdate, JumpTo};
use super::structured_output::ResponseFormat;
use crate::channels::Channel;
use crate::messages::{Message, ToolCall};
use crate::prebuilt::chat_model::ChatModel;
use crate::prebuilt::tool::Tool;
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// A hook a middleware implements. Python finds the methods a middleware class
/// overrides; Rust asks [`Middleware::hooks`], and the graph gets one node for each
/// state hook listed (`"<name>.before_model"`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hook {
    /// Once, when the agent starts (node `<name>.before_agent`).
    BeforeAgent,
    /// Before each model call (node `<name>.before_model`).
    BeforeModel,
    /// After each model call (node `<name>.after_model`).
    AfterModel,
    /// Once, when the agent ends (node `<name>.after_agent`).
    AfterAgent,
    /// Around each model call, inside the `model` node.
    WrapModelCall,
    /// Around each tool call, inside the `tools` node.
    WrapToolCall,
}

impl Hook {
    /// The hook's name, the suffix of its node's name (`before_model`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::BeforeAgent => "before_agent",
            Hook::BeforeModel => "before_model",
            Hook::AfterModel => "after_model",
            Hook::AfterAgent => "after_agent",
            Hook::WrapModelCall => "wrap_model_call",
            Hook::WrapToolCall => "wrap_tool_call",
        }
    }
}

/// One model call as `wrap_model_call` sees it: change any part and pass it on.
#[derive(Clone)]
pub struct ModelRequest {
    /// The model to call (tools are bound when it is called).
    pub model: Arc<dyn ChatModel>,
    /// The conversation (without the system message).
    pub messages: Vec<Message>,
    /// The system message put before the conversation, if any.
    pub system_message: Option<Message>,
    /// The tools the model may call.
    pub tools: Vec<Tool>,
    /// How the model's final answer is read (`create_agent(..).response_format(..)`).
    pub response_format: Option<ResponseFormat>,
    /// The agent's state when the `model` node started.
    pub state: AgentState,
    /// The running node's context.
    pub ctx: NodeContext,
}

impl std::fmt::Debug for ModelRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelRequest")
            .field("messages", &self.messages)
            .field("system_message", &self.system_message)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

/// What a model call gave: the messages to store (the AI message, and for a structured
/// answer given through a tool, its tool message) and the structured answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelResponse {
    /// The messages to add to the conversation.
    pub messages: Vec<Message>,
    /// The structured answer, when the agent has a `response_format` and the model gave
    /// one that fits.
    pub structured_response: Option<Value>,
}

impl ModelResponse {
    /// A response of one AI message.
    pub fn message(message: Message) -> ModelResponse {
        ModelResponse {
            messages: vec![message],
            structured_response: None,
        }
    }
}

type ModelFn =
    dyn Fn(ModelRequest) -> BoxFuture<'static, Result<ModelResponse, NodeError>> + Send + Sync;

/// The rest of the model-call chain (the inner middleware, then the model itself),
/// handed to [`Middleware::wrap_model_call`]; call it any number of times (a retry).
#[derive(Clone)]
pub struct ModelHandler(pub(crate) Arc<ModelFn>);

impl ModelHandler {
    /// Calls the rest of the chain with `request`.
    pub async fn call(&self, request: ModelRequest) -> Result<ModelResponse, NodeError> {
        (self.0)(request).await
    }
}

impl std::fmt::Debug for ModelHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ModelHandler")
    }
}

/// One tool call as `wrap_tool_call` sees it.
#[derive(Clone)]
pub struct ToolCallRequest {
    /// The call (change its name or arguments to run another).
    pub call: ToolCall,
    /// The tool the call names (Python's `request.tool`; `None` when the agent has no
    /// tool of that name).
    pub tool: Option<Tool>,
    /// The agent's state when the `tools` node started.
    pub state: AgentState,
    /// The running node's context.
    pub ctx: NodeContext,
}

impl std::fmt::Debug for ToolCallRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallRequest")
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}

type ToolFn =
    dyn Fn(ToolCallRequest) -> BoxFuture<'static, Result<Message, NodeError>> + Send + Sync;

/// The rest of the tool-call chain (the inner middleware, then the tool), handed to
/// [`Middleware::wrap_tool_call`].
#[derive(Clone)]
pub struct ToolHandler(pub(crate) Arc<ToolFn>);

impl ToolHandler {
    /// Runs the rest of the chain with `request`: the tool message answering the call.
    pub async fn call(&self, request: ToolCallRequest) -> Result<Message, NodeError> {
        (self.0)(request).await
    }
}

impl std::fmt::Debug for ToolHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolHandler")
    }
}

/// A middleware of [`create_agent`](super::create_agent) (langchain's
/// `AgentMiddleware`): list the hooks it implements in [`Middleware::hooks`] and write
/// them; the others keep their defaults (no change, or the handler called as is).
///
/// A state hook returns an [`AgentUpdate`] (writes, possibly a [`JumpTo`]); a hook that
/// jumps lists where in [`Middleware::can_jump_to`], as Python's `@hook_config(can_jump_to=..)`,
/// which adds the graph's edges. A hook that fails (`Err`) fails its node: the run stops
/// at the checkpoint before it and can be resumed from there. A hook may pause the run
/// with [`NodeContext::interrupt`].
///
/// ```
/// use stategraph::prebuilt::agent::{AgentState, AgentUpdate, Hook, Middleware};
/// use stategraph::{NodeContext, NodeError};
///
/// struct Audit;
/// #[async_trait::async_trait]
/// impl Middleware for Audit {
///     fn name(&self) -> String { "Audit".into() }
///     fn hooks(&self) -> Vec<Hook> { vec![Hook::AfterModel] }
///     async fn after_model(&self, state: &AgentState, _: &NodeContext) -> Result<AgentUpdate, NodeError> {
///         println!("{} messages", state.messages().len());
///         Ok(AgentUpdate::none())
///     }
/// }
/// ```
#[async_trait]
pub trait Middleware: Send + Sync + 'static {
    /// The middleware's name, unique in an agent: its nodes are `"<name>.<hook>"`
    /// (Python's default is the class name).
    fn name(&self) -> String;

    /// The hooks this middleware implements.
    fn hooks(&self) -> Vec<Hook>;

    /// Where a state hook may jump (adds the graph's conditional edges).
    fn can_jump_to(&self, hook: Hook) -> Vec<JumpTo> {
        let _ = hook;
        Vec::new()
    }

    /// Tools this middleware adds to the agent (Python's `tools` attribute): bound to the
    /// model and run by the `tools` node, before the agent's own tools.
    fn tools(&self) -> Vec<Tool> {
        Vec::new()
    }

    /// Channels this middleware adds to the agent's state (Python's `state_schema`).
    fn channels(&self) -> Vec<(String, Box<dyn Channel>)> {
        Vec::new()
    }

    /// Runs once when the agent starts.
    async fn before_agent(
        &self,
        state: &AgentState,
        ctx: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let _ = (state, ctx);
        Ok(AgentUpdate::none())
    }

    /// Runs before each model call.
    async fn before_model(
        &self,
        state: &AgentState,
        ctx: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let _ = (state, ctx);
        Ok(AgentUpdate::none())
    }

    /// Runs after each model call.
    async fn after_model(
        &self,
        state: &AgentState,
        ctx: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let _ = (state, ctx);
        Ok(AgentUpdate::none())
    }

    /// Runs once when the agent ends.
    async fn after_agent(
        &self,
        state: &AgentState,
        ctx: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let _ = (state, ctx);
        Ok(AgentUpdate::none())
    }

    /// Wraps each model call: the first middleware listed is the outermost.
    async fn wrap_model_call(
        &self,
        request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        handler.call(request).await
    }

    /// Wraps each tool call: the first middleware listed is the outermost.
    async fn wrap_tool_call(
        &self,
        request: ToolCallRequest,
        handler: ToolHandler,
    ) -> Result<Message, NodeError> {
        handler.call(request).await
    }
}

/// `handlers` around `inner`, the first outermost.
pub(crate) fn chain_model_calls(
    middleware: &[Arc<dyn Middleware>],
    inner: ModelHandler,
) -> ModelHandler {
    middleware
        .iter()
        .rev()
        .filter(|m| m.hooks().contains(&Hook::WrapModelCall))
        .fold(inner, |next, m| {
            let m = m.clone();
            ModelHandler(Arc::new(move |request| {
                let (m, next) = (m.clone(), next.clone());
                Box::pin(async move { m.wrap_model_call(request, next).await })
            }))
        })
}

/// `handlers` around `inner`, the first outermost.
pub(crate) fn chain_tool_calls(
    middleware: &[Arc<dyn Middleware>],
    inner: ToolHandler,
) -> ToolHandler {
    middleware
        .iter()
        .rev()
        .filter(|m| m.hooks().contains(&Hook::WrapToolCall))
        .fold(inner, |next, m| {
            let m = m.clone();
            ToolHandler(Arc::new(move |request| {
                let (m, next) = (m.clone(), next.clone());
                Box::pin(async move { m.wrap_tool_call(request, next).await })
            }))
        })
}
