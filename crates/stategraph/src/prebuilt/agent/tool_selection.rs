//! [`LlmToolSelectorMiddleware`] (langchain's `LLMToolSelectorMiddleware`): before each
//! model call, a selection model picks the tools relevant to the last user message, and
//! the model is called with those only.

use std::sync::Arc;

use async_trait::async_trait;
use stategraph_checkpoint::Value;

use super::middleware::{Hook, Middleware, ModelHandler, ModelRequest, ModelResponse};
use crate::messages::{Message, Role};
use crate::prebuilt::chat_model::ChatModel;
use crate::prebuilt::tool::Tool;
use crate::pregel::node_error::NodeError;

/// Python's `DEFAULT_SYSTEM_PROMPT` of the tool selector.
pub const TOOL_SELECTION_SYSTEM_PROMPT: &str =
    "Your goal is to select the most relevant tools for answering the user's query.";

/// The structured answer's schema title, the name of the tool the selection model calls.
const SELECTION: &str = "ToolSelectionResponse";

/// A function choosing the tools from the selection model's last malformed answer.
pub type ParsingFallback = Arc<dyn Fn(&Value) -> Vec<String> + Send + Sync>;

/// What the selector does when the selection model's answer is still malformed after
/// its retries (Python's `on_parsing_failure`).
#[derive(Clone, Default)]
pub enum OnParsingFailure {
    /// Fail the model call with a `ValueError` (the default).
    #[default]
    Error,
    /// Select no tools (`"none"`).
    None,
    /// Select every tool (`"all"`).
    All,
    /// Select these tools (a list of names).
    Tools(Vec<String>),
    /// Select the tools this function names (a callable).
    Custom(ParsingFallback),
}

impl std::fmt::Debug for OnParsingFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OnParsingFailure::Error => f.write_str("Error"),
            OnParsingFailure::None => f.write_str("None"),
            OnParsingFailure::All => f.write_str("All"),
            OnParsingFailure::Tools(t) => f.debug_tuple("Tools").field(t).finish(),
            OnParsingFailure::Custom(_) => f.write_str("Custom"),
        }
    }
}

/// Lets a model choose the tools of each model call (langchain's
/// `LLMToolSelectorMiddleware`): the selection model (by default the agent's) gets the
/// system prompt and the last user message, with a `ToolSelectionResponse` tool whose
/// `tools` argument lists the tool names it may pick (each with its description), and
/// answers by calling it (the form of langchain's default `with_structured_output`).
/// The model is then called with the tools picked (in the agent's order, at most
/// [`max_tools`](Self::max_tools) of them) and those of
/// [`always_include`](Self::always_include).
///
/// A malformed answer (no `ToolSelectionResponse` call with a `tools` list) is asked
/// again up to [`max_retries`](Self::max_retries) times, then handled as
/// [`OnParsingFailure`] says. Errors are Python's `ValueError`s: a tool of
/// `always_include` the request does not have, a selection naming an unknown tool.
///
/// ```
/// use stategraph::prebuilt::agent::{create_agent, LlmToolSelectorMiddleware};
/// use stategraph::prebuilt::FakeChatModel;
/// let selector = LlmToolSelectorMiddleware::new().max_tools(2).always_include(["search"]);
/// let agent = create_agent(FakeChatModel::new([stategraph::Message::ai("ok")]), vec![])
///     .middleware(selector)
///     .compile()
///     .unwrap();
/// # let _ = agent;
/// ```
#[derive(Clone)]
pub struct LlmToolSelectorMiddleware {
    model: Option<Arc<dyn ChatModel>>,
    system_prompt: String,
    max_tools: Option<usize>,
    always_include: Vec<String>,
    max_retries: usize,
    on_parsing_failure: OnParsingFailure,
}

impl std::fmt::Debug for LlmToolSelectorMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmToolSelectorMiddleware")
            .field("own_model", &self.model.is_some())
            .field("max_tools", &self.max_tools)
            .field("always_include", &self.always_include)
            .field("max_retries", &self.max_retries)
            .field("on_parsing_failure", &self.on_parsing_failure)
            .finish_non_exhaustive()
    }
}

impl Default for LlmToolSelectorMiddleware {
    fn default() -> Self {
        LlmToolSelectorMiddleware::new()
    }
}

impl LlmToolSelectorMiddleware {
    /// Python's defaults: the agent's model selects, [`TOOL_SELECTION_SYSTEM_PROMPT`], no
    /// limit, one retry, a malformed answer an error.
    pub fn new() -> LlmToolSelectorMiddleware {
        LlmToolSelectorMiddleware {
            model: None,
            system_prompt: TOOL_SELECTION_SYSTEM_PROMPT.to_owned(),
            max_tools: None,
            always_include: Vec::new(),
            max_retries: 1,
            on_parsing_failure: OnParsingFailure::Error,
        }
    }

    /// The model that selects (Python's `model=`; by default the agent's).
    pub fn model(mut self, model: impl ChatModel) -> Self {
        self.model = Some(Arc::new(model));
        self
    }

    /// The selection model's instructions (Python's `system_prompt=`).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = prompt.into();
        self
    }

    /// At most this many tools picked (the first ones the model lists); the prompt says
    /// so.
    pub fn max_tools(mut self, max: usize) -> Self {
        self.max_tools = Some(max);
        self
    }

    /// Tools always given to the model, not counted in `max_tools` nor offered to the
    /// selection model.
    pub fn always_include<I: IntoIterator<Item = T>, T: Into<String>>(mut self, names: I) -> Self {
        self.always_include = names.into_iter().map(Into::into).collect();
        self
    }

    /// How many times a malformed answer is asked again (Python's `max_retries`, 1).
    pub fn max_retries(mut self, retries: usize) -> Self {
        self.max_retries = retries;
        self
    }

    /// What a still malformed answer does (Python's `on_parsing_failure`).
    pub fn on_parsing_failure(mut self, failure: OnParsingFailure) -> Self {
        self.on_parsing_failure = failure;
        self
    }

    /// The system prompt the selection model reads.
    fn prompt(&self) -> String {
        match self.max_tools {
            Some(max) => format!(
                "{}\nIMPORTANT: List the tool names in order of relevance, with the most relevant first. If you exceed the maximum number of tools, only the first {max} will be used.",
                self.system_prompt
            ),
            None => self.system_prompt.clone(),
        }
    }

    /// The tools `names` pick from `available`, then the always-included ones of
    /// `request` (Python's `_process_selection_response`).
    fn pick(
        &self,
        names: &[Value],
        available: &[Tool],
        request: &ModelRequest,
        cap: Option<usize>,
    ) -> Result<Vec<Tool>, NodeError> {
        let (mut picked, mut invalid) = (Vec::<&str>::new(), Vec::new());
        for name in names {
            match name
                .as_str()
                .filter(|n| available.iter().any(|t| t.name() == *n))
            {
                None => invalid.push(name.clone()),
                Some(n) if !picked.contains(&n) && cap.is_none_or(|c| picked.len() < c) => {
                    picked.push(n);
                }
                Some(_) => {}
            }
        }
        if !invalid.is_empty() {
            let msg = format!(
                "Model selected invalid tools: {}",
                Value::list(invalid).repr()
            );
            return Err(NodeError::named("ValueError", msg));
        }
        let chosen = available.iter().filter(|t| picked.contains(&t.name()));
        let always = request
            .tools
            .iter()
            .filter(|t| self.always_include.iter().any(|n| n == t.name()));
        Ok(chosen.chain(always).cloned().collect())
    }

    /// The names a still malformed `answer` falls back to.
    fn fallback(&self, answer: &Value, available: &[Tool]) -> Result<Vec<Value>, NodeError> {
        let names: Vec<String> = match &self.on_parsing_failure {
            OnParsingFailure::Error => {
                let msg = format!(
                    "LLMToolSelectorMiddleware: selection model returned a malformed response after {} retries (expected a dict with a 'tools' list): {}",
                    self.max_retries,
                    answer.repr()
                );
                return Err(NodeError::named("ValueError", msg));
            }
            OnParsingFailure::None => Vec::new(),
            OnParsingFailure::All => available.iter().map(|t| t.name().to_owned()).collect(),
            OnParsingFailure::Tools(names) => names.clone(),
            OnParsingFailure::Custom(f) => f(answer),
        };
        Ok(names.into_iter().map(Value::from).collect())
    }
}

/// The `ToolSelectionResponse` tool offering `tools` (Python's `TypeAdapter` schema: a
/// `const` per tool name with its description, `anyOf` when there are several).
fn selection_tool(tools: &[Tool]) -> Tool {
    let items: Vec<serde_json::Value> = tools
        .iter()
        .map(|t| serde_json::json!({"const": t.name(), "description": t.description(), "type": "string"}))
        .collect();
    let items = match <[serde_json::Value; 1]>::try_from(items) {
        Ok([one]) => one,
        Err(many) => serde_json::json!({ "anyOf": many }),
    };
    let description = "Use to select relevant tools.";
    let schema = serde_json::json!({
        "description": description,
        "properties": {"tools": {
            "description": "Tools to use. Place the most relevant tools first.",
            "items": items,
            "title": "Tools",
            "type": "array",
        }},
        "required": ["tools"],
        "title": SELECTION,
        "type": "object",
    });
    Tool::new(SELECTION, description, |_: Value| async move {
        Ok::<_, crate::prebuilt::ToolError>(Value::Nil)
    })
    .with_schema(schema)
}

/// The structured answer of `answer`: the arguments of its first `ToolSelectionResponse`
/// call (`None`, Python's, when it has none).
fn parsed(answer: &Message) -> Value {
    let call = answer.tool_calls.iter().find(|c| c.name == SELECTION);
    call.map_or(Value::Nil, |c| c.args.clone())
}

/// The `tools` list of a well-formed answer.
fn selected(answer: &Value) -> Option<&[Value]> {
    answer.as_map()?.get("tools")?.as_list()
}

#[async_trait]
impl Middleware for LlmToolSelectorMiddleware {
    fn name(&self) -> String {
        "LLMToolSelectorMiddleware".into()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::WrapModelCall]
    }

    async fn wrap_model_call(
        &self,
        mut request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        if request.tools.is_empty() {
            return handler.call(request).await;
        }
        let missing: Vec<Value> = self
            .always_include
            .iter()
            .filter(|n| request.tools.iter().all(|t| t.name() != n.as_str()))
            .map(|n| Value::from(n.as_str()))
            .collect();
        if !missing.is_empty() {
            let mut names: Vec<&str> = request.tools.iter().map(Tool::name).collect();
            names.sort_unstable();
            names.dedup();
            let names = Value::list(names.into_iter().map(Value::from).collect::<Vec<_>>());
            let msg = format!(
                "Tools in always_include not found in request: {}. Available tools: {}",
                Value::list(missing).repr(),
                names.repr()
            );
            return Err(NodeError::named("ValueError", msg));
        }
        let available: Vec<Tool> = request
            .tools
            .iter()
            .filter(|t| !self.always_include.iter().any(|n| n == t.name()))
            .cloned()
            .collect();
        if available.is_empty() {
            return handler.call(request).await;
        }
        let Some(user) = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Human)
        else {
            let msg = "No user message found in request messages";
            return Err(NodeError::named("AssertionError", msg));
        };
        let input = [Message::system(self.prompt()), user.clone()];
        let model = self.model.clone().unwrap_or_else(|| request.model.clone());
        let model = model.bind_tools(&[selection_tool(&available)]);
        let mut answer = parsed(&model.invoke(&input, &request.ctx).await?);
        let mut attempts = 0;
        while selected(&answer).is_none() && attempts < self.max_retries {
            answer = parsed(&model.invoke(&input, &request.ctx).await?);
            attempts += 1;
        }
        let tools = match selected(&answer) {
            Some(names) => self.pick(names, &available, &request, self.max_tools)?,
            None => {
                let names = self.fallback(&answer, &available)?;
                self.pick(&names, &available, &request, None)?
            }
        };
        request.tools = tools;
        handler.call(request).await
    }
}
