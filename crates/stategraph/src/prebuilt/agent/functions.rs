//! Middleware made of one function, as Python's decorators make them
//! (`@before_model`, `@after_model`, `@before_agent`, `@after_agent`,
//! `@wrap_model_call`, `@wrap_tool_call`, `@dynamic_prompt`).
//!
//! Python names the middleware after the decorated function, so its node is
//! `"<function>.before_model"`; a closure has no name, so each of these takes it first.
//!
//! ```
//! use stategraph::prebuilt::agent::{before_model, dynamic_prompt, AgentUpdate, JumpTo};
//! use stategraph::prebuilt::agent::{create_agent, wrap_tool_call};
//! use stategraph::prebuilt::FakeChatModel;
//! use stategraph::Message;
//!
//! let enough = before_model("enough", |state, _ctx| async move {
//!     let done = state.messages().len() > 10;
//!     Ok(if done { AgentUpdate::none().jump_to(JumpTo::End) } else { AgentUpdate::none() })
//! })
//! .can_jump_to([JumpTo::End]);
//! let prompt = dynamic_prompt("prompt", |request| {
//!     format!("{} messages so far.", request.messages.len())
//! });
//! let logged = wrap_tool_call("logged", |request, handler| async move {
//!     println!("calling {}", request.call.name);
//!     handler.call(request).await
//! });
//! let agent = create_agent(FakeChatModel::new([Message::ai("hi")]), vec![])
//!     .middleware(enough)
//!     .middleware(prompt)
//!     .middleware(logged)
//!     .compile()
//!     .unwrap();
//! assert!(agent.get_graph().draw_mermaid().contains("enough"));
//! ```

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use futures::future::BoxFuture;
use futures::FutureExt;

use super::middleware::{
    Hook, Middleware, ModelHandler, ModelRequest, ModelResponse, ToolCallRequest, ToolHandler,
};
use super::state::{AgentState, AgentUpdate, JumpTo};
use crate::channels::Channel;
use crate::messages::Message;
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;
use crate::Value;

type Out<T> = BoxFuture<'static, Result<T, NodeError>>;
type StateFn = dyn Fn(AgentState, NodeContext) -> Out<AgentUpdate> + Send + Sync;
type ModelFn = dyn Fn(ModelRequest, ModelHandler) -> Out<ModelResponse> + Send + Sync;
type ToolFn = dyn Fn(ToolCallRequest, ToolHandler) -> Out<Message> + Send + Sync;
type ChannelsFn = dyn Fn() -> Vec<(String, Box<dyn Channel>)> + Send + Sync;

#[derive(Clone)]
enum Body {
    State(Hook, Arc<StateFn>),
    Model(Arc<ModelFn>),
    Tool(Arc<ToolFn>),
}

/// A middleware of one function (what [`before_model`], [`wrap_model_call`],
/// [`dynamic_prompt`], ... give): one hook, named as given.
#[derive(Clone)]
pub struct FnMiddleware {
    name: String,
    body: Body,
    can_jump_to: Vec<JumpTo>,
    channels: Option<Arc<ChannelsFn>>,
}

impl std::fmt::Debug for FnMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnMiddleware")
            .field("name", &self.name)
            .field("hook", &self.hook())
            .field("can_jump_to", &self.can_jump_to)
            .finish_non_exhaustive()
    }
}

impl FnMiddleware {
    fn new(name: impl Into<String>, body: Body) -> Self {
        FnMiddleware {
            name: name.into(),
            body,
            can_jump_to: Vec::new(),
            channels: None,
        }
    }

    /// The hook the function is.
    pub fn hook(&self) -> Hook {
        match &self.body {
            Body::State(hook, _) => *hook,
            Body::Model(_) => Hook::WrapModelCall,
            Body::Tool(_) => Hook::WrapToolCall,
        }
    }

    /// Where a state hook may jump (Python's `@before_model(can_jump_to=[..])`); a wrap
    /// hook does not jump, so there it changes nothing.
    pub fn can_jump_to(mut self, to: impl IntoIterator<Item = JumpTo>) -> Self {
        self.can_jump_to = to.into_iter().collect();
        self
    }

    /// Channels the middleware adds to the agent's state (Python's `state_schema=`),
    /// made anew for each agent.
    pub fn channels(
        mut self,
        channels: impl Fn() -> Vec<(String, Box<dyn Channel>)> + Send + Sync + 'static,
    ) -> Self {
        self.channels = Some(Arc::new(channels));
        self
    }
}

fn state_hook<F, Fut>(name: impl Into<String>, hook: Hook, f: F) -> FnMiddleware
where
    F: Fn(AgentState, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AgentUpdate, NodeError>> + Send + 'static,
{
    FnMiddleware::new(
        name,
        Body::State(hook, Arc::new(move |s, c| f(s, c).boxed())),
    )
}

/// A `before_agent` hook from a function (Python's `@before_agent`): node `"<name>.before_agent"`.
pub fn before_agent<F, Fut>(name: impl Into<String>, f: F) -> FnMiddleware
where
    F: Fn(AgentState, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AgentUpdate, NodeError>> + Send + 'static,
{
    state_hook(name, Hook::BeforeAgent, f)
}

/// A `before_model` hook from a function (Python's `@before_model`): node `"<name>.before_model"`.
pub fn before_model<F, Fut>(name: impl Into<String>, f: F) -> FnMiddleware
where
    F: Fn(AgentState, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AgentUpdate, NodeError>> + Send + 'static,
{
    state_hook(name, Hook::BeforeModel, f)
}

/// An `after_model` hook from a function (Python's `@after_model`): node `"<name>.after_model"`.
pub fn after_model<F, Fut>(name: impl Into<String>, f: F) -> FnMiddleware
where
    F: Fn(AgentState, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AgentUpdate, NodeError>> + Send + 'static,
{
    state_hook(name, Hook::AfterModel, f)
}

/// An `after_agent` hook from a function (Python's `@after_agent`): node `"<name>.after_agent"`.
pub fn after_agent<F, Fut>(name: impl Into<String>, f: F) -> FnMiddleware
where
    F: Fn(AgentState, NodeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AgentUpdate, NodeError>> + Send + 'static,
{
    state_hook(name, Hook::AfterAgent, f)
}

/// A `wrap_model_call` hook from a function (Python's `@wrap_model_call`): it gets each
/// model call and the rest of the chain.
pub fn wrap_model_call<F, Fut>(name: impl Into<String>, f: F) -> FnMiddleware
where
    F: Fn(ModelRequest, ModelHandler) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ModelResponse, NodeError>> + Send + 'static,
{
    FnMiddleware::new(name, Body::Model(Arc::new(move |r, h| f(r, h).boxed())))
}

/// A `wrap_tool_call` hook from a function (Python's `@wrap_tool_call`): it gets each
/// tool call and the rest of the chain.
pub fn wrap_tool_call<F, Fut>(name: impl Into<String>, f: F) -> FnMiddleware
where
    F: Fn(ToolCallRequest, ToolHandler) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Message, NodeError>> + Send + 'static,
{
    FnMiddleware::new(name, Body::Tool(Arc::new(move |r, h| f(r, h).boxed())))
}

/// The system prompt of each model call from a function of the call (Python's
/// `@dynamic_prompt`): it replaces the agent's `system_prompt` for that call.
pub fn dynamic_prompt<F, P>(name: impl Into<String>, f: F) -> FnMiddleware
where
    F: Fn(&ModelRequest) -> P + Send + Sync + 'static,
    P: Into<Value>,
{
    let f = Arc::new(f);
    wrap_model_call(
        name,
        move |mut request: ModelRequest, handler: ModelHandler| {
            request.system_message = Some(Message::system(f(&request)));
            async move { handler.call(request).await }
        },
    )
}

#[async_trait]
impl Middleware for FnMiddleware {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![self.hook()]
    }

    fn can_jump_to(&self, hook: Hook) -> Vec<JumpTo> {
        match &self.body {
            Body::State(h, _) if *h == hook => self.can_jump_to.clone(),
            _ => Vec::new(),
        }
    }

    fn channels(&self) -> Vec<(String, Box<dyn Channel>)> {
        self.channels.as_ref().map(|c| c()).unwrap_or_default()
    }

    async fn before_agent(
        &self,
        s: &AgentState,
        c: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        self.run_state(Hook::BeforeAgent, s, c).await
    }

    async fn before_model(
        &self,
        s: &AgentState,
        c: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        self.run_state(Hook::BeforeModel, s, c).await
    }

    async fn after_model(&self, s: &AgentState, c: &NodeContext) -> Result<AgentUpdate, NodeError> {
        self.run_state(Hook::AfterModel, s, c).await
    }

    async fn after_agent(&self, s: &AgentState, c: &NodeContext) -> Result<AgentUpdate, NodeError> {
        self.run_state(Hook::AfterAgent, s, c).await
    }

    async fn wrap_model_call(
        &self,
        request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        match &self.body {
            Body::Model(f) => f(request, handler).await,
            _ => handler.call(request).await,
        }
    }

    async fn wrap_tool_call(
        &self,
        request: ToolCallRequest,
        handler: ToolHandler,
    ) -> Result<Message, NodeError> {
        match &self.body {
            Body::Tool(f) => f(request, handler).await,
            _ => handler.call(request).await,
        }
    }
}

impl FnMiddleware {
    /// The function when it is `hook`'s; no change otherwise.
    async fn run_state(
        &self,
        hook: Hook,
        state: &AgentState,
        ctx: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        match &self.body {
            Body::State(h, f) if *h == hook => f(state.clone(), ctx.clone()).await,
            _ => Ok(AgentUpdate::none()),
        }
    }
}
