//! The agent's nodes: `model` (the model call inside the `wrap_model_call` chain),
//! `tools` (each pending tool call inside the `wrap_tool_call` chain) and one node per
//! middleware state hook.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use indexmap::IndexMap;
use stategraph_checkpoint::Value;

use super::middleware::{
    chain_model_calls, chain_tool_calls, Hook, Middleware, ModelHandler, ModelRequest,
    ModelResponse, ToolCallRequest, ToolHandler,
};
use super::state::{AgentState, AgentUpdate};
use super::structured_output::{parse_provider, ResponseFormat, StructuredOutputError};
use crate::messages::{Message, Role, ToolCall};
use crate::prebuilt::chat_history::validate_chat_history;
use crate::prebuilt::chat_model::{run_message_id, ChatModel};
use crate::prebuilt::tool::{Tool, UPDATE_KEY};
use crate::prebuilt::tool_input::ToolNodeInput;
use crate::prebuilt::tool_node::ToolNode;
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;
use crate::state::DynState;

/// A node function of the agent's graph.
pub(crate) type AgentNode = Arc<
    dyn Fn(DynState, NodeContext) -> BoxFuture<'static, Result<Vec<(String, Value)>, NodeError>>
        + Send
        + Sync,
>;

/// What the `model` node needs.
pub(crate) struct ModelNode {
    pub model: Arc<dyn ChatModel>,
    pub tools: Vec<Tool>,
    pub system_message: Option<Message>,
    pub response_format: Option<ResponseFormat>,
    pub name: Option<String>,
    pub middleware: Vec<Arc<dyn Middleware>>,
}

/// The innermost model handler: bind the tools (and the structured-output tool), call
/// the model, read a structured answer.
fn execute_model(name: Option<String>) -> ModelHandler {
    ModelHandler(Arc::new(move |request: ModelRequest| {
        let name = name.clone();
        async move {
            let mut tools = request.tools.clone();
            if let Some(ResponseFormat::Tool(strategy)) = &request.response_format {
                tools.push(structured_tool(strategy, &request.response_format));
            }
            let model = if tools.is_empty() {
                request.model.clone()
            } else {
                request.model.bind_tools(&tools)
            };
            let mut input = Vec::with_capacity(request.messages.len() + 1);
            input.extend(request.system_message.clone());
            input.extend_from_slice(&request.messages);
            let call = model.invoke(&input, &request.ctx);
            let mut answer = crate::spans::chat(request.ctx.thread_id(), &input, call).await?;
            if answer.id.is_none() {
                answer.id = Some(format!("{}-0", run_message_id()));
            }
            if name.is_some() {
                answer.name = name;
            }
            handle_output(answer, request.response_format.as_ref())
        }
        .boxed()
    }))
}

/// The tool the model calls to give a structured answer (never run: the model node
/// answers its call).
fn structured_tool(
    strategy: &super::structured_output::ToolStrategy,
    format: &Option<ResponseFormat>,
) -> Tool {
    let name = format
        .as_ref()
        .map(ResponseFormat::name)
        .unwrap_or_default();
    let description = strategy
        .schema
        .get("description")
        .and_then(|d| d.as_str())
        .unwrap_or("")
        .to_owned();
    Tool::new(name, description, |_: Value| async move {
        Ok::<_, crate::prebuilt::ToolError>(Value::Nil)
    })
    .with_schema(strategy.schema.clone())
}

/// The model's answer as the messages to store and the structured response.
fn handle_output(
    answer: Message,
    format: Option<&ResponseFormat>,
) -> Result<ModelResponse, NodeError> {
    match format {
        Some(ResponseFormat::Provider { schema, check }) if answer.tool_calls.is_empty() => {
            let name = format.map(ResponseFormat::name).unwrap_or_default();
            let structured = parse_provider(schema, *check, &name, &answer)
                .map_err(StructuredOutputError::into_node_error)?;
            Ok(ModelResponse {
                messages: vec![answer],
                structured_response: Some(structured),
            })
        }
        Some(format @ ResponseFormat::Tool(strategy)) if !answer.tool_calls.is_empty() => {
            let (messages, structured_response) = strategy
                .handle(&format.name(), answer)
                .map_err(StructuredOutputError::into_node_error)?;
            Ok(ModelResponse {
                messages,
                structured_response,
            })
        }
        _ => Ok(ModelResponse::message(answer)),
    }
}

impl ModelNode {
    /// The node function.
    pub(crate) fn into_node(self) -> AgentNode {
        let this = Arc::new(self);
        let handler = chain_model_calls(&this.middleware, execute_model(this.name.clone()));
        Arc::new(move |state: DynState, ctx: NodeContext| {
            let (this, handler) = (this.clone(), handler.clone());
            async move {
                let state = AgentState::from_dyn(state)?;
                let repaired = patch_invalid_tool_calls(state.messages());
                let messages = repaired
                    .clone()
                    .unwrap_or_else(|| state.messages().to_vec());
                validate_chat_history(&messages)?;
                let request = ModelRequest {
                    model: this.model.clone(),
                    messages,
                    system_message: this.system_message.clone(),
                    tools: this.tools.clone(),
                    response_format: this.response_format.clone(),
                    state,
                    ctx,
                };
                let response = handler.call(request).await?;
                // With repaired calls the conversation is written anew, as Python does.
                let written = match repaired {
                    Some(mut all) => {
                        all.insert(0, Message::remove_all());
                        all.extend(response.messages);
                        all
                    }
                    None => response.messages,
                };
                let mut update = AgentUpdate::none().messages(written);
                match response.structured_response {
                    Some(v) => update = update.set("structured_response", v),
                    None if this.response_format.is_some() => {
                        update = update.set("structured_response", Value::Nil);
                    }
                    None => {}
                }
                Ok(update.into_writes())
            }
            .boxed()
        })
    }
}

/// The conversation with an error tool message after each AI message's invalid tool call
/// that nothing answers (Python's `_patch_invalid_tool_calls`); `None` when none needs one.
fn patch_invalid_tool_calls(messages: &[Message]) -> Option<Vec<Message>> {
    let mut answered: Vec<String> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.clone())
        .collect();
    let mut out = Vec::with_capacity(messages.len());
    let mut changed = false;
    for m in messages {
        out.push(m.clone());
        if m.role != Role::Ai {
            continue;
        }
        for call in &m.invalid_tool_calls {
            let Some(id) = call.get("id").and_then(Value::as_str) else {
                continue;
            };
            if answered.iter().any(|a| a == id) {
                continue;
            }
            let name = call
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .unwrap_or("unknown");
            let text = format!("Tool call {name} with id {id} could not be executed - arguments were malformed or truncated.");
            let mut answer = Message::tool(text, id).with_name(name);
            answer.status = "error".to_owned();
            out.push(answer);
            answered.push(id.to_owned());
            changed = true;
        }
    }
    changed.then_some(out)
}

/// The tool calls of the last AI message that no tool message answers yet (and that are
/// not the structured-output tool's).
pub(crate) fn pending_tool_calls(state: &AgentState, structured: Option<&str>) -> Vec<ToolCall> {
    let Some((ai, tools)) = state.last_ai_and_tool_messages() else {
        return Vec::new();
    };
    let answered: Vec<Option<&str>> = tools.iter().map(|m| m.tool_call_id.as_deref()).collect();
    ai.tool_calls
        .iter()
        .filter(|c| !answered.contains(&c.id.as_deref()) && Some(c.name.as_str()) != structured)
        .cloned()
        .collect()
}

/// A `tools` node function (its input is a tool node's: langchain's
/// `Send("tools", [tool_call])`, or the state after a `jump_to: "tools"`).
pub(crate) type ToolsNode = Arc<
    dyn Fn(
            ToolNodeInput,
            NodeContext,
        ) -> BoxFuture<'static, Result<Vec<(String, Value)>, NodeError>>
        + Send
        + Sync,
>;

/// The graph's state channels as the task reads them now (not the engine's).
fn current_state(ctx: &NodeContext) -> IndexMap<String, Value> {
    let channels = ctx.inner.channels.iter();
    let state = channels
        .filter(|(k, ch)| !k.starts_with("branch:") && !k.starts_with("__") && ch.is_available());
    state
        .map(|(k, ch)| (k.clone(), ch.get().unwrap_or_default()))
        .collect()
}

/// The `tools` node: the calls sent to it (or, after a jump, the pending ones), each
/// through the `wrap_tool_call` chain, concurrently, the answers in the calls' order.
pub(crate) fn tools_node(
    tool_node: ToolNode,
    middleware: &[Arc<dyn Middleware>],
    structured: Option<String>,
) -> ToolsNode {
    let tools: Vec<Tool> = tool_node.tools().to_vec();
    let inner = ToolHandler(Arc::new(move |request: ToolCallRequest| {
        let tool_node = tool_node.clone();
        async move {
            let state = request.state.to_value();
            let calls = std::slice::from_ref(&request.call);
            let mut answers = tool_node.answer_calls(calls, &state, &request.ctx).await?;
            answers
                .pop()
                .ok_or_else(|| NodeError::named("ValueError", "the tool gave no message"))
        }
        .boxed()
    }));
    let handler = chain_tool_calls(middleware, inner);
    Arc::new(move |input: ToolNodeInput, ctx: NodeContext| {
        let (handler, structured, tools) = (handler.clone(), structured.clone(), tools.clone());
        async move {
            let (state, calls) = match input {
                ToolNodeInput::Calls(calls) => {
                    (AgentState::from_values(current_state(&ctx))?, calls)
                }
                ToolNodeInput::Call(p) => {
                    let values = p.state.as_map().map(|m| {
                        let pairs = m
                            .iter()
                            .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), v.clone())));
                        pairs.collect()
                    });
                    (
                        AgentState::from_values(values.unwrap_or_default())?,
                        vec![p.tool_call],
                    )
                }
                ToolNodeInput::State(values) => {
                    let state = AgentState::from_values(values)?;
                    let calls = pending_tool_calls(&state, structured.as_deref());
                    (state, calls)
                }
            };
            let runs = calls.into_iter().map(|call| {
                let tool = tools.iter().find(|t| t.name() == call.name).cloned();
                handler.call(ToolCallRequest {
                    call,
                    tool,
                    state: state.clone(),
                    ctx: ctx.clone(),
                })
            });
            let mut answers = futures::future::join_all(runs)
                .await
                .into_iter()
                .collect::<Result<Vec<_>, _>>()?;
            // A tool's command: its other writes first, then the messages (Python's
            // `Command(update={"todos": .., "messages": [..]})`).
            let mut update = AgentUpdate::none();
            for answer in &mut answers {
                if let Some(Value::Map(writes)) = answer.extra.remove(UPDATE_KEY) {
                    for (k, v) in writes.into_pairs() {
                        if let Some(k) = k.as_str() {
                            update = update.set(k, v);
                        }
                    }
                }
            }
            Ok(update.messages(answers).into_writes())
        }
        .boxed()
    })
}

/// The node of one middleware's state hook.
pub(crate) fn hook_node(middleware: Arc<dyn Middleware>, hook: Hook) -> AgentNode {
    Arc::new(move |state: DynState, ctx: NodeContext| {
        let m = middleware.clone();
        async move {
            let state = AgentState::from_dyn(state)?;
            let update = match hook {
                Hook::BeforeAgent => m.before_agent(&state, &ctx).await?,
                Hook::BeforeModel => m.before_model(&state, &ctx).await?,
                Hook::AfterModel => m.after_model(&state, &ctx).await?,
                Hook::AfterAgent => m.after_agent(&state, &ctx).await?,
                Hook::WrapModelCall | Hook::WrapToolCall => AgentUpdate::none(),
            };
            Ok(update.into_writes())
        }
        .boxed()
    })
}
