//! `HumanInTheLoopMiddleware`: the run pauses after the model asks for tools that need
//! a person's decision (approve, edit, reject, respond), in Python's interrupt and
//! resume shapes (`HITLRequest`, `{"decisions": [...]}`), so a client written for
//! Python's agent answers this one.

use std::sync::Arc;

use async_trait::async_trait;
use indexmap::IndexMap;
use stategraph_checkpoint::{Map, Value};

use super::error::MiddlewareConfigError;
use super::hitl_per_call::{decision_schema, InterruptMode};
use super::middleware::{Hook, Middleware, ToolCallRequest, ToolHandler};
use super::state::{AgentState, AgentUpdate};
use crate::channels::{Channel, LastValue};
use crate::messages::{Message, ToolCall};
use crate::prebuilt::python_text::{json_dumps, repr};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// The channel holding the reviewer's edits, tool call id to `{name, args}`.
const EDITED: &str = "hitl_edited_tool_calls";

/// The note put before the result of a call a reviewer edited (Python's default).
const EDIT_NOTICE: &str = "Note: a human reviewer replaced this tool call before it ran. The call recorded in your message is the one you produced, not the one that executed. This was intentional and authorized. Do not re-issue your original call.";

/// A decision a reviewer may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecisionType {
    /// Run the call as the model asked.
    Approve,
    /// Run another call in its place (`edited_action: {name, args}`).
    Edit,
    /// Do not run it; the model is told (`message`: the reason).
    Reject,
    /// Do not run it; `message` is the tool's answer.
    Respond,
}

impl DecisionType {
    /// The stored form (`"approve"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionType::Approve => "approve",
            DecisionType::Edit => "edit",
            DecisionType::Reject => "reject",
            DecisionType::Respond => "respond",
        }
    }

    /// Every decision, in Python's order (what `interrupt_on={"tool": True}` allows).
    pub const ALL: [DecisionType; 4] = [
        DecisionType::Approve,
        DecisionType::Edit,
        DecisionType::Reject,
        DecisionType::Respond,
    ];
}

/// A predicate deciding, call by call, whether a tool call is reviewed (Python's
/// `InterruptOnConfig(when=...)`): `false` runs it unreviewed. It sees the call, the
/// agent's state and the node's context (`request.ctx.context::<C>()`); it runs again
/// when the run resumes, so it must answer the same for the same call.
#[derive(Clone)]
pub struct When(pub Arc<dyn Fn(&ToolCallRequest) -> bool + Send + Sync>);

impl std::fmt::Debug for When {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("When(..)")
    }
}

impl PartialEq for When {
    fn eq(&self, other: &When) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// How one tool is reviewed (Python's `InterruptOnConfig`).
#[derive(Clone, Debug, PartialEq)]
pub struct InterruptOnConfig {
    /// The decisions allowed (not empty).
    pub allowed_decisions: Vec<DecisionType>,
    /// The text shown to the reviewer (default: the prefix, the tool and its arguments).
    pub description: Option<String>,
    /// Which calls are reviewed (`None`: every one).
    pub when: Option<When>,
}

impl InterruptOnConfig {
    /// A review allowing `decisions`.
    pub fn new(decisions: impl IntoIterator<Item = DecisionType>) -> InterruptOnConfig {
        InterruptOnConfig {
            allowed_decisions: decisions.into_iter().collect(),
            description: None,
            when: None,
        }
    }

    /// Reviews only the calls `predicate` says yes to (builder style).
    #[must_use]
    pub fn when(
        mut self,
        predicate: impl Fn(&ToolCallRequest) -> bool + Send + Sync + 'static,
    ) -> InterruptOnConfig {
        self.when = Some(When(Arc::new(predicate)));
        self
    }

    /// Sets the description (builder style).
    #[must_use]
    pub fn description(mut self, text: impl Into<String>) -> InterruptOnConfig {
        self.description = Some(text.into());
        self
    }
}

/// Pauses the agent so a person reviews the tool calls of `interrupt_on`'s tools before
/// they run (Python's `HumanInTheLoopMiddleware`). In [`InterruptMode::Batched`] (the
/// default), one interrupt per model answer, whose value is a `HITLRequest`
/// (`action_requests` `[{name, args, description}]`, `review_configs` `[{action_name,
/// allowed_decisions}]`), resumed with `{"decisions": [...]}`, one per request in order
/// (`{"type": "approve"}`, `{"type": "edit", "edited_action": {"name", "args"}}`,
/// `{"type": "reject", "message": ..}`, `{"type": "respond", "message": ..}`). In
/// [`InterruptMode::PerCall`], one interrupt per gated call as it starts (a
/// `ToolApprovalRequest` with Python's `response_schema`), each answered with one
/// decision by the interrupt's id. [`InterruptOnConfig::when`] skips the calls its
/// predicate says no to. The agent needs a checkpointer.
#[derive(Clone, Debug)]
pub struct HumanInTheLoopMiddleware {
    interrupt_on: IndexMap<String, InterruptOnConfig>,
    description_prefix: String,
    edit_notice: Option<String>,
    mode: InterruptMode,
}

impl Default for HumanInTheLoopMiddleware {
    fn default() -> Self {
        HumanInTheLoopMiddleware::new()
    }
}

impl HumanInTheLoopMiddleware {
    /// A middleware reviewing nothing yet; add tools with [`Self::interrupt_on`].
    pub fn new() -> HumanInTheLoopMiddleware {
        HumanInTheLoopMiddleware {
            interrupt_on: IndexMap::new(),
            description_prefix: "Tool execution requires approval".to_owned(),
            edit_notice: Some(EDIT_NOTICE.to_owned()),
            mode: InterruptMode::Batched,
        }
    }

    /// Reviews every call of `tool`, all decisions allowed (Python's `{"tool": True}`).
    #[must_use]
    pub fn interrupt_on(mut self, tool: impl Into<String>) -> Self {
        let config = InterruptOnConfig::new(DecisionType::ALL);
        self.interrupt_on.insert(tool.into(), config);
        self
    }

    /// Reviews every call of `tool` as `config` says; a config allowing no decision is
    /// refused (Python's `ValueError`: it would silently turn the review off).
    pub fn interrupt_on_with(
        mut self,
        tool: impl Into<String>,
        config: InterruptOnConfig,
    ) -> Result<Self, MiddlewareConfigError> {
        let tool = tool.into();
        if config.allowed_decisions.is_empty() {
            let msg = format!("Invalid `interrupt_on` config for tool '{tool}': `allowed_decisions` must be a non-empty list of decision types (e.g. ['approve', 'reject']).");
            return Err(MiddlewareConfigError::new("HumanInTheLoopMiddleware", msg));
        }
        self.interrupt_on.insert(tool, config);
        Ok(self)
    }

    /// The first line of the default description.
    #[must_use]
    pub fn description_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.description_prefix = prefix.into();
        self
    }

    /// How the run pauses: [`InterruptMode::Batched`] (the default) or
    /// [`InterruptMode::PerCall`] (Python's `interrupt_mode="per_call"`).
    #[must_use]
    pub fn interrupt_mode(mut self, mode: InterruptMode) -> Self {
        self.mode = mode;
        self
    }

    /// The note before an edited call's result (`None`: no note).
    #[must_use]
    pub fn edit_notice(mut self, notice: Option<String>) -> Self {
        self.edit_notice = notice;
        self
    }

    /// The action request and review config of one call.
    fn request(&self, call: &ToolCall, config: &InterruptOnConfig) -> (Value, Value) {
        let description = config.description.clone().unwrap_or_else(|| {
            format!(
                "{}\n\nTool: {}\nArgs: {}",
                self.description_prefix,
                call.name,
                repr(&call.args)
            )
        });
        let mut action = Map::new();
        action.insert("name", call.name.as_str());
        action.insert("args", call.args.clone());
        action.insert("description", description);
        let mut review = Map::new();
        review.insert("action_name", call.name.as_str());
        let allowed: Vec<Value> = config
            .allowed_decisions
            .iter()
            .map(|d| Value::from(d.as_str()))
            .collect();
        review.insert("allowed_decisions", Value::list(allowed));
        (Value::Map(action), Value::Map(review))
    }
}

/// A `ValueError` node error.
fn value_error(message: impl Into<String>) -> NodeError {
    NodeError::named("ValueError", message.into())
}

/// The message a rejected or answered call gets in place of the tool's result.
fn answer_message(call: &ToolCall, kind: &str, message: Option<&str>) -> Message {
    let id = call.id.clone().unwrap_or_default();
    let content = match (kind, message) {
        ("respond", m) => m.unwrap_or_default().to_owned(),
        (_, Some(reason)) if !reason.is_empty() => format!(
            "User rejected the tool call for `{}` with reason: {reason}",
            call.name
        ),
        _ => format!(
            "User rejected the tool call for `{}` with id {id}. The tool was not executed. Do not retry this tool call unless the user explicitly requests it.",
            call.name
        ),
    };
    let mut m = Message::tool(content, id).with_name(&call.name);
    m.status = if kind == "respond" {
        "success"
    } else {
        "error"
    }
    .to_owned();
    m
}

#[async_trait]
impl Middleware for HumanInTheLoopMiddleware {
    fn name(&self) -> String {
        "HumanInTheLoopMiddleware".to_owned()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::AfterModel, Hook::WrapToolCall]
    }

    fn channels(&self) -> Vec<(String, Box<dyn Channel>)> {
        vec![(EDITED.to_owned(), Box::new(LastValue::new()))]
    }

    async fn after_model(
        &self,
        state: &AgentState,
        ctx: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        if self.mode == InterruptMode::PerCall {
            return Ok(AgentUpdate::none()); // the calls are reviewed as they start
        }
        let Some((ai, _)) = state.last_ai_and_tool_messages() else {
            return Ok(AgentUpdate::none());
        };
        if ai.tool_calls.is_empty() {
            return Ok(AgentUpdate::none());
        }
        let ai = ai.clone();
        let (mut actions, mut reviews, mut gated) = (Vec::new(), Vec::new(), Vec::new());
        for (i, call) in ai.tool_calls.iter().enumerate() {
            if let Some(config) = self.interrupt_on.get(&call.name) {
                if let Some(when) = &config.when {
                    let request = ToolCallRequest {
                        call: call.clone(),
                        // The model's answer is reviewed before any tool is looked up.
                        tool: None,
                        state: state.clone(),
                        ctx: ctx.clone(),
                    };
                    if !(when.0)(&request) {
                        continue;
                    }
                }
                let (action, review) = self.request(call, config);
                actions.push(action);
                reviews.push(review);
                gated.push(i);
            }
        }
        if gated.is_empty() {
            let edited = state.get(EDITED).and_then(Value::as_map);
            if edited.is_some_and(|m| !m.is_empty()) {
                return Ok(AgentUpdate::none().set(EDITED, Value::Map(Map::new())));
            }
            return Ok(AgentUpdate::none());
        }
        let mut request = Map::new();
        request.insert("action_requests", Value::list(actions));
        request.insert("review_configs", Value::list(reviews));
        let answer = ctx.interrupt(Value::Map(request))?;
        let decisions = answer
            .get("decisions")
            .and_then(Value::as_list)
            .ok_or_else(|| {
                value_error(format!(
                    "the resume value has no `decisions` list: {}",
                    repr(&answer)
                ))
            })?;
        if decisions.len() != gated.len() {
            return Err(value_error(format!(
                "Number of human decisions ({}) does not match number of hanging tool calls ({}).",
                decisions.len(),
                gated.len()
            )));
        }
        let (mut answers, mut edited) = (Vec::new(), Map::new());
        for (decision, &i) in decisions.iter().zip(&gated) {
            let call = &ai.tool_calls[i];
            let allowed = &self.interrupt_on[&call.name].allowed_decisions;
            let kind = decision.get("type").and_then(Value::as_str).unwrap_or("");
            let ok = allowed.iter().any(|d| d.as_str() == kind);
            if !ok {
                let names: Vec<Value> = allowed.iter().map(|d| Value::from(d.as_str())).collect();
                return Err(value_error(format!(
                    "Unexpected human decision: {}. Decision type '{kind}' is not allowed for tool '{}'. Expected one of {} based on the tool's configuration.",
                    repr(decision),
                    call.name,
                    repr(&Value::list(names))
                )));
            }
            match kind {
                "edit" => {
                    let action = decision.get("edited_action").cloned().unwrap_or_default();
                    if let Some(id) = &call.id {
                        edited.insert(id.as_str(), action);
                    }
                }
                "reject" | "respond" => {
                    let message = decision.get("message").and_then(Value::as_str);
                    answers.push(answer_message(call, kind, message));
                }
                _ => {}
            }
        }
        // The calls stay as the model made them (an edit runs through `wrap_tool_call`).
        let mut messages = vec![ai];
        messages.extend(answers);
        Ok(AgentUpdate::none()
            .messages(messages)
            .set(EDITED, Value::Map(edited)))
    }

    async fn wrap_tool_call(
        &self,
        request: ToolCallRequest,
        handler: ToolHandler,
    ) -> Result<Message, NodeError> {
        let edit = if self.mode == InterruptMode::PerCall {
            match self.review_one(&request)? {
                Reviewed::Run(edit) => edit,
                Reviewed::Answered(message) => return Ok(*message),
            }
        } else {
            request
                .call
                .id
                .as_deref()
                .and_then(|id| request.state.get(EDITED)?.get(id).cloned())
        };
        let Some(edit) = edit else {
            return handler.call(request).await;
        };
        self.run_edited(request, handler, edit).await
    }
}

/// What a `per_call` review decided.
enum Reviewed {
    /// Run the call, as the reviewer edited it if they did (`{name, args}`).
    Run(Option<Value>),
    /// Do not run it; this is its answer.
    Answered(Box<Message>),
}

impl HumanInTheLoopMiddleware {
    /// Asks the reviewer about one call (`per_call` mode), if it is gated.
    fn review_one(&self, request: &ToolCallRequest) -> Result<Reviewed, NodeError> {
        let call = &request.call;
        let Some(config) = self.interrupt_on.get(&call.name) else {
            return Ok(Reviewed::Run(None));
        };
        if config.when.as_ref().is_some_and(|w| !(w.0)(request)) {
            return Ok(Reviewed::Run(None));
        }
        let Some(id) = &call.id else {
            return Err(value_error(format!("Tool call `{}` has no ID, so its result can't be matched to it. Make sure the chat model returns tool call IDs.", call.name)));
        };
        let (action, _) = self.request(call, config);
        let mut value = Map::new();
        value.insert("type", "tool_approval");
        value.insert("tool_call_id", id.as_str());
        value.insert("name", call.name.as_str());
        value.insert("args", call.args.clone());
        value.insert(
            "description",
            action.get("description").cloned().unwrap_or_default(),
        );
        let allowed: Vec<&str> = config
            .allowed_decisions
            .iter()
            .map(|d| d.as_str())
            .collect();
        let schema = decision_schema(&allowed, &call.name);
        let decision = request.ctx.interrupt_with(Value::Map(value), schema)?;
        let kind = decision.get("type").and_then(Value::as_str).unwrap_or("");
        if !config.allowed_decisions.iter().any(|d| d.as_str() == kind) {
            return Err(value_error(format!(
                "Unexpected human decision: {}. Decision type '{kind}' is not allowed for tool '{}'.",
                repr(&decision),
                call.name
            )));
        }
        match kind {
            "approve" => Ok(Reviewed::Run(None)),
            "edit" => {
                let action = decision.get("edited_action").cloned().unwrap_or_default();
                let name = action.get("name").and_then(Value::as_str);
                if name != Some(call.name.as_str())
                    || action.get("args").and_then(Value::as_map).is_none()
                {
                    return Err(value_error(format!(
                        "An edit of tool `{}` must give `edited_action` with name '{}' and an `args` object: {}",
                        call.name, call.name, repr(&decision)
                    )));
                }
                Ok(Reviewed::Run(Some(action)))
            }
            _ => {
                let message = decision.get("message").and_then(Value::as_str);
                if kind == "respond" && message.is_none() {
                    return Err(value_error(format!(
                        "A `respond` decision needs a `message`: {}",
                        repr(&decision)
                    )));
                }
                Ok(Reviewed::Answered(Box::new(answer_message(
                    call, kind, message,
                ))))
            }
        }
    }

    /// Runs the reviewer's call in place of the model's, noting it in the result.
    async fn run_edited(
        &self,
        mut request: ToolCallRequest,
        handler: ToolHandler,
        edit: Value,
    ) -> Result<Message, NodeError> {
        let name = edit
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let args = edit.get("args").cloned().unwrap_or_default();
        request.call.name = name.clone();
        request.call.args = args.clone();
        let mut answer = handler.call(request).await?;
        if let Some(notice) = &self.edit_notice {
            let content = answer.text();
            let mut note = format!(
                "{notice} Executed instead: {name} with arguments {}.",
                json_dumps(&args)
            );
            if !content.is_empty() {
                note.push_str("\n\nTool response:");
            }
            if answer.content.as_str().is_some() && !content.contains(&note) {
                let sep = if content.is_empty() { "" } else { "\n" };
                answer.content = Value::from(format!("{note}{sep}{content}"));
            }
        }
        Ok(answer)
    }
}
