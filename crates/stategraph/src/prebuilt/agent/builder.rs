//! [`create_agent`]'s builder and the graph it compiles: Python's `create_agent` nodes
//! (`model`, `tools`, `<middleware>.<hook>`), edges and channels.

use std::sync::Arc;

use stategraph_checkpoint::CheckpointSaver;

use super::middleware::{Hook, Middleware};
use super::nodes::{hook_node, tools_node, AgentNode, ModelNode};
use super::state::agent_channels;
use super::structured_output::ResponseFormat;
use super::wiring::Plan;
use crate::error::{Error, Result};
use crate::graph::{CompileOptions, CompiledGraph, StateGraph};
use crate::messages::Message;
use crate::prebuilt::chat_model::ChatModel;
use crate::prebuilt::tool::Tool;
use crate::prebuilt::tool_input::ToolNodeInput;
use crate::prebuilt::tool_node::{ToolErrorHandling, ToolNode};
use crate::state::DynState;
use crate::RunConfig;

/// An agent (langchain 1.x's `create_agent`): a `model` node calling `model` with
/// `tools` bound, a `tools` node running its tool calls, in a loop until the model
/// answers without calling a tool; [`Middleware`] hooks run as nodes around them, or
/// wrap each model and tool call.
///
/// The graph, its channels (`messages`, `jump_to`, `structured_response`, the
/// middleware's) and the checkpoints a run stores are Python's for the same
/// configuration, so a thread is shared with Python's agent; its drawing is Python's.
/// The state is a [`DynState`]; read it with
/// [`AgentState`](super::AgentState). Runs take Python's defaults
/// (`recursion_limit` 9999, metadata `ls_integration: "langchain_create_agent"`).
pub fn create_agent(model: impl ChatModel, tools: Vec<Tool>) -> AgentBuilder {
    AgentBuilder {
        model: Arc::new(model),
        tools,
        system_prompt: None,
        middleware: Vec::new(),
        response_format: None,
        name: None,
        errors: ToolErrorHandling::default(),
        options: CompileOptions::new(),
    }
}

/// The options of [`create_agent`]; [`AgentBuilder::compile`] makes the graph.
#[must_use]
pub struct AgentBuilder {
    model: Arc<dyn ChatModel>,
    tools: Vec<Tool>,
    system_prompt: Option<Message>,
    middleware: Vec<Arc<dyn Middleware>>,
    response_format: Option<ResponseFormat>,
    name: Option<String>,
    errors: ToolErrorHandling,
    options: CompileOptions,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.middleware.iter().map(|m| m.name()).collect();
        f.debug_struct("AgentBuilder")
            .field("tools", &self.tools)
            .field("middleware", &names)
            .field("response_format", &self.response_format)
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// The system prompt put before the conversation at each model call (not stored).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(Message::system(prompt.into()));
        self
    }

    /// Adds a middleware (the first added is the outermost: its `before_*` hooks run
    /// first, its `after_*` hooks last).
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Adds a shared middleware.
    pub fn middleware_arc(mut self, middleware: Arc<dyn Middleware>) -> Self {
        self.middleware.push(middleware);
        self
    }

    /// Reads the final answer as structured data (`structured_response`).
    pub fn response_format(mut self, format: ResponseFormat) -> Self {
        self.response_format = Some(format);
        self
    }

    /// The agent's name, set on each AI message it stores.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// What a failing tool does (the default: only bad arguments go back to the model).
    pub fn handle_tool_errors(mut self, errors: ToolErrorHandling) -> Self {
        self.errors = errors;
        self
    }

    /// Where the conversation's checkpoints go.
    pub fn checkpointer(mut self, saver: Arc<dyn CheckpointSaver>) -> Self {
        self.options = self.options.checkpointer(saver);
        self
    }

    /// Stop before these nodes (Python's `interrupt_before=[..]`).
    pub fn interrupt_before<I: IntoIterator<Item = T>, T: Into<String>>(
        mut self,
        nodes: I,
    ) -> Self {
        self.options = self.options.interrupt_before(nodes);
        self
    }

    /// Stop after these nodes (Python's `interrupt_after=[..]`).
    pub fn interrupt_after<I: IntoIterator<Item = T>, T: Into<String>>(mut self, nodes: I) -> Self {
        self.options = self.options.interrupt_after(nodes);
        self
    }

    /// The long-term store the hooks and tools reach through the context.
    pub fn store(mut self, store: Arc<dyn stategraph_store::BaseStore>) -> Self {
        self.options = self.options.store(store);
        self
    }

    /// Builds and compiles the agent's graph. A middleware name given twice is an
    /// `Error::InvalidGraph` (Python: "Please remove duplicate middleware instances.").
    pub fn compile(mut self) -> Result<CompiledGraph<DynState>> {
        // Python: `middleware_tools + regular_tools`.
        let mut tools: Vec<Tool> = self.middleware.iter().flat_map(|m| m.tools()).collect();
        tools.append(&mut self.tools);
        self.tools = tools;
        let names: Vec<String> = self.middleware.iter().map(|m| m.name()).collect();
        if (1..names.len()).any(|i| names[..i].contains(&names[i])) {
            return Err(Error::InvalidGraph(
                "Please remove duplicate middleware instances.".into(),
            ));
        }
        let channels = agent_channels(self.middleware.iter().flat_map(|m| m.channels()));
        let mut g = StateGraph::<DynState>::with_channels(channels);
        let with = |hook: Hook| -> Vec<Arc<dyn Middleware>> {
            let hooked = self.middleware.iter().filter(|m| m.hooks().contains(&hook));
            hooked.cloned().collect()
        };
        let wraps_tools = !with(Hook::WrapToolCall).is_empty();
        let wraps_model = !with(Hook::WrapModelCall).is_empty();
        let structured = match &self.response_format {
            Some(f @ ResponseFormat::Tool(_)) => Some(f.name()),
            _ => None,
        };
        let tool_names: Vec<String> = self.tools.iter().map(|t| t.name().to_owned()).collect();
        let has_tools = !self.tools.is_empty() || wraps_tools;

        let model = ModelNode {
            model: self.model,
            tools: self.tools.clone(),
            system_message: self.system_prompt,
            response_format: self.response_format.clone(),
            name: self.name.clone(),
            middleware: self.middleware.clone(),
        };
        add(&mut g, "model", model.into_node());
        if has_tools {
            let tool_node = ToolNode::new(self.tools).handle_tool_errors(self.errors);
            let node = tools_node(tool_node, &self.middleware, structured.clone());
            g.add_node(
                "tools",
                move |input: ToolNodeInput, ctx: crate::NodeContext| node(input, ctx),
            );
        }
        for m in &self.middleware {
            for hook in [
                Hook::BeforeAgent,
                Hook::BeforeModel,
                Hook::AfterModel,
                Hook::AfterAgent,
            ] {
                if m.hooks().contains(&hook) {
                    let name = format!("{}.{}", m.name(), hook.as_str());
                    add(&mut g, &name, hook_node(m.clone(), hook));
                }
            }
        }
        let plan = Plan {
            middleware: &self.middleware,
            has_tools,
            structured,
            model_may_loop: self.response_format.is_some() || wraps_model,
        };
        plan.wire(&mut g);
        let mut compiled = g.compile_with(self.options)?;
        let topology = Arc::make_mut(&mut compiled.topology);
        if let Some(node) = topology.nodes.iter_mut().find(|n| n.name == "tools") {
            node.tools = tool_names;
        }
        let mut defaults = RunConfig::default()
            .recursion_limit(9_999)
            .with_metadata("ls_integration", "langchain_create_agent");
        if let Some(name) = &self.name {
            defaults = defaults.with_metadata("lc_agent_name", name.as_str());
        }
        Ok(compiled.with_config(defaults))
    }
}

/// Adds a node function.
fn add(g: &mut StateGraph<DynState>, name: &str, node: AgentNode) {
    g.add_node(name, move |state: DynState, ctx: crate::NodeContext| {
        node(state, ctx)
    });
}
