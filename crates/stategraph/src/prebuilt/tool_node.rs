//! The node that runs tool calls (LangGraph's `ToolNode`): those of the latest AI
//! message, or the one call a `Send` hands it.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use stategraph_checkpoint::Value;
use tracing::Instrument;

use super::messages_state::HasMessages;
use super::python_text::json_dumps;
use super::tool::{detached_context, Tool, ToolFailure, ToolReply, UPDATE_KEY};
use super::tool_input::ToolNodeInput;
use super::tool_runtime::ToolRuntime;
use crate::messages::{Message, Role, ToolCall};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// What a [`ToolNode`] does with a tool that fails (Python's `handle_tool_errors`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolErrorHandling {
    /// LangGraph's default: arguments that do not fit the tool come back to the model as
    /// an error tool message; a tool that fails fails the node (and the run).
    #[default]
    InvocationErrors,
    /// Every failure comes back to the model as an error tool message,
    /// `Error: Kind('message')\n Please fix your mistakes.` (`handle_tool_errors=True`).
    All,
    /// Every failure fails the node, bad arguments too (`handle_tool_errors=False`).
    Never,
}

/// Runs every tool call of the conversation's last AI message, concurrently, and answers
/// with one `ToolMessage` per call, in the calls' order (name and call id set, `status:
/// "error"` for an error). A call of an unknown tool is answered with LangGraph's
/// `Error: x is not a valid tool, try one of [a, b].`
#[derive(Clone, Debug)]
pub struct ToolNode {
    tools: Arc<Vec<Tool>>,
    by_name: Arc<HashMap<String, usize>>,
    errors: ToolErrorHandling,
}

impl ToolNode {
    /// A node running `tools` (with LangGraph's default error handling).
    pub fn new(tools: Vec<Tool>) -> ToolNode {
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name().to_owned(), i))
            .collect();
        ToolNode {
            tools: Arc::new(tools),
            by_name: Arc::new(by_name),
            errors: ToolErrorHandling::default(),
        }
    }

    /// Sets what a failing tool does (builder style).
    #[must_use]
    pub fn handle_tool_errors(mut self, errors: ToolErrorHandling) -> ToolNode {
        self.errors = errors;
        self
    }

    /// The tools, in the order given.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool messages answering the tool calls of the latest AI message of
    /// `messages` (a `ValueError` when there is none, as in Python). `ctx` is the
    /// running node's, handed to tools made with [`Tool::with_context`]; tools made with
    /// [`Tool::with_runtime`] read `{"messages": messages}` as the state.
    pub async fn run(
        &self,
        messages: &[Message],
        ctx: &NodeContext,
    ) -> Result<Vec<Message>, NodeError> {
        let mut state = stategraph_checkpoint::Map::with_capacity(1);
        let list: Vec<Value> = messages.iter().map(Message::to_value).collect();
        state.insert("messages", Value::list(list));
        let state = Value::Map(state);
        self.run_calls(latest_calls(messages)?, &state, ctx).await
    }

    /// The tool messages answering `calls`, made in `state` (a map of state keys, which
    /// [`ToolRuntime::state`] gives the tools), concurrently, in the calls' order.
    /// Writes to other channels a tool asks for (the agent's `write_todos`) are left
    /// out: only `create_agent`'s `tools` node makes them.
    pub async fn run_calls(
        &self,
        calls: &[ToolCall],
        state: &Value,
        ctx: &NodeContext,
    ) -> Result<Vec<Message>, NodeError> {
        let mut answers = self.answer_calls(calls, state, ctx).await?;
        for answer in &mut answers {
            answer.extra.remove(UPDATE_KEY);
        }
        Ok(answers)
    }

    /// [`ToolNode::run_calls`] with each tool's other writes kept in the message's
    /// `extra` under `UPDATE_KEY`, for the agent's `tools` node to take out.
    pub(crate) async fn answer_calls(
        &self,
        calls: &[ToolCall],
        state: &Value,
        ctx: &NodeContext,
    ) -> Result<Vec<Message>, NodeError> {
        let calls = calls.iter().map(|call| {
            let tool = self.by_name.get(&call.name).map(|&i| &self.tools[i]);
            let span = crate::spans::tool_span(
                &call.name,
                tool.map_or("", Tool::description),
                call.id.as_deref(),
                ctx.thread_id(),
                &call.args,
            );
            let rt = ToolRuntime::new(state.clone(), call.id.clone(), ctx.clone());
            let run = self.call(call, tool, rt);
            async move {
                let (result, error_kind) = run.instrument(span.clone()).await;
                crate::spans::tool_result(&span, &result, error_kind);
                result
            }
        });
        futures::future::join_all(calls).await.into_iter().collect()
    }

    /// Runs the tool calls of the last message of `messages` outside a graph (Python's
    /// `ToolNode(tools).invoke({"messages": [...]})`): the tool messages a run would
    /// store. A tool that interrupts fails here, as there is no run to pause.
    pub async fn invoke(&self, messages: &[Message]) -> Result<Vec<Message>, NodeError> {
        self.run(messages, &detached_context("tools")).await
    }

    /// Runs one tool call; with the error's kind when the answer is an error message.
    async fn call(
        &self,
        call: &ToolCall,
        tool: Option<&Tool>,
        rt: ToolRuntime,
    ) -> (Result<Message, NodeError>, Option<&'static str>) {
        let id = call.id.clone().unwrap_or_default();
        let Some(tool) = tool else {
            let names: Vec<&str> = self.tools.iter().map(Tool::name).collect();
            let text = format!(
                "Error: {} is not a valid tool, try one of [{}].",
                call.name,
                names.join(", ")
            );
            return (
                Ok(error_message(text, &call.name, id)),
                Some("ToolNotFound"),
            );
        };
        let result = match tool.run(call.args.clone(), rt).await {
            Ok(reply) => Ok(reply_message(reply, &call.name, id)),
            Err(ToolFailure::Invocation(text)) if self.errors != ToolErrorHandling::Never => {
                let answer = error_message(text, &call.name, id);
                return (Ok(answer), Some("ToolInvocationError"));
            }
            Err(ToolFailure::Invocation(text)) => {
                Err(NodeError::named("ToolInvocationError", text))
            }
            Err(ToolFailure::Failed(e)) if self.errors == ToolErrorHandling::All => {
                let text = format!("Error: {}\n Please fix your mistakes.", e.repr());
                return (Ok(error_message(text, &call.name, id)), Some("ToolError"));
            }
            Err(ToolFailure::Failed(e)) => Err(NodeError::named(&e.kind, &e.message)),
            // A failure of a context tool is handled as any tool's; an interrupt or a
            // parent command always goes up.
            Err(ToolFailure::Node(e)) => match e.repr() {
                Some(repr) if self.errors == ToolErrorHandling::All => {
                    let text = format!("Error: {repr}\n Please fix your mistakes.");
                    return (Ok(error_message(text, &call.name, id)), Some("ToolError"));
                }
                _ => Err(e),
            },
        };
        (result, None)
    }

    /// This tool node as a node function of a graph over `S`:
    /// `graph.add_node("tools", tool_node.node::<S>())`. It takes each of a tool node's
    /// inputs ([`ToolNodeInput`]): triggered by an edge, it answers every call of the
    /// latest AI message (`version="v1"`); sent a
    /// [`ToolCallWithContext`](super::ToolCallWithContext) (see
    /// [`tool_call_sends`](super::tool_call_sends)), it answers that one call, its tools
    /// reading the state the payload carries; sent a list of tool calls (langchain's
    /// `create_agent`), it answers those, its tools reading the graph's current state.
    pub fn node<S: HasMessages>(
        &self,
    ) -> impl Fn(ToolNodeInput, NodeContext) -> BoxFuture<'static, Result<S::Update, NodeError>>
           + Send
           + Sync
           + 'static {
        let this = self.clone();
        move |input: ToolNodeInput, ctx: NodeContext| {
            let this = this.clone();
            async move {
                let answers = match input {
                    ToolNodeInput::State(values) => {
                        let state = map_value(&values);
                        let s = S::from_owned_values(values)
                            .map_err(|e| NodeError::named("InvalidUpdateError", e))?;
                        let calls = latest_calls(s.messages())?;
                        this.run_calls(calls, &state, &ctx).await?
                    }
                    ToolNodeInput::Call(p) => {
                        this.run_calls(std::slice::from_ref(&p.tool_call), &p.state, &ctx)
                            .await?
                    }
                    ToolNodeInput::Calls(calls) => {
                        let state = current_state::<S>(&ctx);
                        this.run_calls(&calls, &state, &ctx).await?
                    }
                };
                Ok(S::messages_update(answers))
            }
            .boxed()
        }
    }
}

/// The tool calls of the latest AI message (Python's `ToolNode` input parsing).
fn latest_calls(messages: &[Message]) -> Result<&[ToolCall], NodeError> {
    if messages.is_empty() {
        return Err(NodeError::named("ValueError", "No message found in input"));
    }
    match messages.iter().rev().find(|m| m.role == Role::Ai) {
        Some(ai) => Ok(&ai.tool_calls),
        None => Err(NodeError::named(
            "ValueError",
            "No AIMessage found in input",
        )),
    }
}

/// Channel values as a map value.
fn map_value(values: &indexmap::IndexMap<String, Value>) -> Value {
    let mut m = stategraph_checkpoint::Map::with_capacity(values.len());
    for (k, v) in values {
        m.insert(k.as_str(), v.clone());
    }
    Value::Map(m)
}

/// The graph's state as the task reads it now: `S`'s channels that hold a value.
fn current_state<S: HasMessages>(ctx: &NodeContext) -> Value {
    let mut m = stategraph_checkpoint::Map::new();
    for (k, _) in S::channels() {
        if let Some(ch) = ctx.inner.channels.get(&k) {
            if ch.is_available() {
                m.insert(k, ch.get().unwrap_or_default());
            }
        }
    }
    Value::Map(m)
}

/// An error tool message.
fn error_message(text: String, name: &str, id: String) -> Message {
    let mut m = Message::tool(text, id).with_name(name);
    m.status = "error".to_owned();
    m
}

/// A tool's result as message content: a string as is, anything else as JSON text.
fn content_of(out: Value) -> Value {
    match out {
        Value::Str(s) => Value::Str(s),
        other => Value::from(json_dumps(&other)),
    }
}

/// The tool message answering a call with `reply`.
fn reply_message(reply: ToolReply, name: &str, id: String) -> Message {
    match reply {
        ToolReply::Value(out) => Message::tool(content_of(out), id).with_name(name),
        ToolReply::Message {
            content,
            artifact,
            error,
        } => {
            let mut m = Message::tool(content, id).with_name(name);
            m.artifact = artifact;
            if error {
                m.status = "error".to_owned();
            }
            m
        }
        ToolReply::Update { content, update } => {
            let mut m = Message::tool(content, id).with_name(name);
            let mut writes = stategraph_checkpoint::Map::with_capacity(update.len());
            for (k, v) in update {
                writes.insert(k.as_str(), v);
            }
            m.extra.insert(UPDATE_KEY, Value::Map(writes));
            m
        }
    }
}
