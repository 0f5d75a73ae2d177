//! `create_react_agent`: a model node (`agent`) and a tool node (`tools`) in a loop,
//! LangGraph's prebuilt ReAct agent.

use std::sync::Arc;

use stategraph_checkpoint::{CheckpointSaver, Value};

use super::chat_history::validate_chat_history;
use super::chat_model::{run_message_id, ChatModel};
use super::messages_state::{HasMessages, MessagesState};
use super::tool::Tool;
use super::tool_input::{state_value, tool_call_sends};
use super::tool_node::{ToolErrorHandling, ToolNode};
use super::tools_condition::tools_condition;
use crate::error::Result;
use crate::graph::BranchTargets;
use crate::graph::{CompileOptions, CompiledGraph, StateGraph, END, START};
use crate::messages::{Message, Role};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// A ReAct agent over [`MessagesState`]: `model` answers the conversation; while its
/// answer calls tools, the `tools` node runs them and the model is asked again.
///
/// The graph is Python's `create_react_agent(model, tools)`: nodes `agent` and `tools`,
/// `START → agent`, a conditional edge from `agent` to `tools` or `END`, `tools →
/// agent` (with no tools, `agent → END` only). Its drawing
/// (`get_graph().draw_mermaid()`) is Python's. Options come from the returned builder;
/// [`ReactAgentBuilder::compile`] makes the graph.
///
/// As Python's default (`version="v2"`), each tool call of an answer is its own `tools`
/// task: the edge from `agent` sends one [`ToolCallWithContext`](super::ToolCallWithContext)
/// per call ([`tool_call_sends`](super::tool_call_sends)), stored as Python stores it, so
/// several tools may interrupt in one step and be resumed by interrupt id.
/// [`ReactAgentBuilder::version`]`(`[`AgentVersion::V1`]`)` runs every call of an answer
/// in one task instead.
///
/// As Python's, the model's answer is replaced by "Sorry, need more steps to process
/// this request." when the run's remaining steps ([`NodeContext::remaining_steps`])
/// are too few: fewer than 2 for an answer calling tools, fewer than 1 for any (so a
/// run near its recursion limit ends with that answer instead of the error).
///
/// **Deprecated** (as in Python since LangGraph 1.0, where `create_react_agent` "has been
/// moved to `langchain.agents`"): new agents use
/// [`agent::create_agent`](super::agent::create_agent), langchain 1.x's agent with
/// middleware. This one stays for graphs and threads that use it.
pub fn create_react_agent(model: impl ChatModel, tools: Vec<Tool>) -> ReactAgentBuilder {
    ReactAgentBuilder {
        model: Arc::new(model),
        tools,
        prompt: None,
        name: None,
        errors: ToolErrorHandling::default(),
        version: AgentVersion::default(),
        options: CompileOptions::new(),
    }
}

/// How the agent runs the tool calls of an answer (Python's `version=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AgentVersion {
    /// Every call of an answer in one `tools` task (`version="v1"`).
    V1,
    /// One `tools` task per call, each sent with the state (`version="v2"`, the default).
    #[default]
    V2,
}

/// The options of [`create_react_agent`] (builder style); [`ReactAgentBuilder::compile`]
/// makes the graph.
#[must_use]
pub struct ReactAgentBuilder {
    model: Arc<dyn ChatModel>,
    tools: Vec<Tool>,
    prompt: Option<Message>,
    name: Option<String>,
    errors: ToolErrorHandling,
    version: AgentVersion,
    options: CompileOptions,
}

impl std::fmt::Debug for ReactAgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReactAgentBuilder")
            .field("tools", &self.tools)
            .field("prompt", &self.prompt)
            .field("name", &self.name)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl ReactAgentBuilder {
    /// A system prompt put before the conversation at every model call (not stored in
    /// the state), as Python's `prompt="..."`.
    pub fn prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = Some(Message::system(prompt.into()));
        self
    }

    /// A system message put before the conversation at every model call.
    pub fn system_message(mut self, message: Message) -> Self {
        self.prompt = Some(message);
        self
    }

    /// The agent's name, set as the `name` of each AI message it stores (Python's
    /// `name=`; without one the name is cleared, as Python does).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Where the conversation's checkpoints go.
    pub fn checkpointer(mut self, saver: Arc<dyn CheckpointSaver>) -> Self {
        self.options = self.options.checkpointer(saver);
        self
    }

    /// The long-term store the nodes reach through [`NodeContext::store`].
    pub fn store(mut self, store: Arc<dyn stategraph_store::BaseStore>) -> Self {
        self.options = self.options.store(store);
        self
    }

    /// Stop before these nodes (`["tools"]`: a human approves each tool call).
    pub fn interrupt_before<I: IntoIterator<Item = T>, T: Into<String>>(
        mut self,
        nodes: I,
    ) -> Self {
        self.options = self.options.interrupt_before(nodes);
        self
    }

    /// Stop after these nodes.
    pub fn interrupt_after<I: IntoIterator<Item = T>, T: Into<String>>(mut self, nodes: I) -> Self {
        self.options = self.options.interrupt_after(nodes);
        self
    }

    /// What a failing tool does (LangGraph's default: only bad arguments are returned to
    /// the model).
    pub fn handle_tool_errors(mut self, errors: ToolErrorHandling) -> Self {
        self.errors = errors;
        self
    }

    /// How the tool calls of an answer run: [`AgentVersion::V2`] (the default, one task
    /// per call) or [`AgentVersion::V1`] (one task for all).
    pub fn version(mut self, version: AgentVersion) -> Self {
        self.version = version;
        self
    }

    /// Builds and compiles the agent's graph over [`MessagesState`].
    pub fn compile(self) -> Result<CompiledGraph<MessagesState>> {
        self.compile_with_state::<MessagesState>()
    }

    /// Builds and compiles the agent's graph over a state of your own (Python's
    /// `state_schema=`): any [`HasMessages`] state, e.g.
    /// [`DeltaMessagesState`](super::DeltaMessagesState) to store the conversation as
    /// deltas.
    pub fn compile_with_state<S: HasMessages>(self) -> Result<CompiledGraph<S>> {
        let model = if self.tools.is_empty() {
            self.model
        } else {
            self.model.bind_tools(&self.tools)
        };
        let (prompt, name) = (self.prompt, self.name);
        let run_name = crate::spans::RunName::Agent(name.as_deref().map(std::sync::Arc::from));
        let agent = move |state: S, ctx: NodeContext| {
            let (model, prompt, name) = (model.clone(), prompt.clone(), name.clone());
            async move {
                let messages = state.messages();
                validate_chat_history(messages)?;
                let mut input = Vec::with_capacity(messages.len() + 1);
                input.extend(prompt);
                input.extend_from_slice(messages);
                let call = model.invoke(&input, &ctx);
                let mut answer = crate::spans::chat(ctx.thread_id(), &input, call).await?;
                // LangChain ids an answer made without streaming `lc_run--<run>-0`.
                if answer.id.is_none() {
                    answer.id = Some(format!("{}-0", run_message_id()));
                }
                answer.name = name;
                if more_steps_needed(&answer, ctx.remaining_steps()) {
                    answer = Message::ai(NEED_MORE_STEPS).with_id(answer.id.unwrap_or_default());
                }
                Ok::<_, NodeError>(S::messages_update(vec![answer]))
            }
        };
        let mut g = StateGraph::<S>::new();
        g.add_node("agent", agent).add_edge(START, "agent");
        let names: Vec<String> = self.tools.iter().map(|t| t.name().to_owned()).collect();
        if self.tools.is_empty() {
            g.add_edge("agent", END);
        } else {
            let tool_node = ToolNode::new(self.tools).handle_tool_errors(self.errors);
            g.add_node("tools", tool_node.node::<S>());
            let paths = [("tools", "tools"), (END, END)];
            match self.version {
                AgentVersion::V1 => {
                    g.add_conditional_edges_with_map("agent", tools_condition::<S>, paths);
                }
                AgentVersion::V2 => {
                    let map = paths
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect();
                    g.push_context_branch(
                        "agent".to_owned(),
                        Arc::new(send_tool_calls::<S>),
                        Some(map),
                    );
                }
            }
            g.add_edge("tools", "agent");
        }
        let mut compiled = g.compile_with(self.options)?;
        compiled.run_name = run_name;
        let topology = Arc::make_mut(&mut compiled.topology);
        if let Some(node) = topology.nodes.iter_mut().find(|n| n.name == "tools") {
            node.tools = names;
        }
        Ok(compiled)
    }
}

/// The answer that replaces the model's when the run has too few steps left.
pub const NEED_MORE_STEPS: &str = "Sorry, need more steps to process this request.";

/// Python's `_are_more_steps_needed` (no tool here returns directly): the answer calls
/// tools with fewer than 2 steps left, or is final with fewer than 1.
fn more_steps_needed(answer: &Message, remaining_steps: i64) -> bool {
    if answer.tool_calls.is_empty() {
        remaining_steps < 1
    } else {
        remaining_steps < 2
    }
}

/// The v2 agent's edge after `agent`: one `Send` per tool call of the last message, each
/// with the state (Python's `should_continue`), or the end. The state sent is Python's
/// `AgentState`'s: the state's keys and the `remaining_steps` managed value.
fn send_tool_calls<S: HasMessages>(
    state: &S,
    ctx: &NodeContext,
) -> std::result::Result<BranchTargets, NodeError> {
    let Some(last) = state.messages().last() else {
        return Ok(BranchTargets::from(END));
    };
    if last.role != Role::Ai || last.tool_calls.is_empty() {
        return Ok(BranchTargets::from(END));
    }
    let mut values = state_value(state).map_err(|e| NodeError::named("InvalidUpdateError", e))?;
    if let Value::Map(m) = &mut values {
        if !m.contains_key("remaining_steps") {
            m.insert("remaining_steps", ctx.remaining_steps());
        }
    }
    Ok(BranchTargets::from(tool_call_sends(last, &values)))
}
