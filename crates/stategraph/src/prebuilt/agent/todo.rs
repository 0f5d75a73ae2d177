//! [`TodoListMiddleware`] (langchain's `TodoListMiddleware`): a `write_todos` tool
//! that replaces the agent's `todos` list, a system-prompt addition telling the model
//! how to use it, and an `after_model` check refusing parallel `write_todos` calls.

use async_trait::async_trait;
use futures::FutureExt;
use stategraph_checkpoint::{Map, Value};

use super::middleware::{Hook, Middleware, ModelHandler, ModelRequest, ModelResponse};
use super::state::{AgentState, AgentUpdate};
use super::todo_prompts::{WRITE_TODOS_SYSTEM_PROMPT, WRITE_TODOS_TOOL_DESCRIPTION};
use crate::channels::{Channel, LastValue};
use crate::messages::{Message, Role};
use crate::prebuilt::tool::{Tool, ToolFailure, ToolFn, ToolReply};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// The statuses a todo may have (Python's `Literal["pending", "in_progress", "completed"]`).
const STATUSES: [&str; 3] = ["pending", "in_progress", "completed"];

/// The tool message answering each of several `write_todos` calls of one model turn.
const PARALLEL_ERROR: &str = "Error: The `write_todos` tool should never be called multiple times in parallel. Please call it only once per model invocation to update the todo list.";

/// Gives the agent a todo list (langchain's `TodoListMiddleware`): the model plans with
/// the `write_todos` tool, whose call replaces the `todos` channel (a list of
/// `{"content": .., "status": "pending" | "in_progress" | "completed"}`) and answers
/// `Updated todo list to [..]`; each model call gets the system prompt with
/// [`WRITE_TODOS_SYSTEM_PROMPT`] added as a text block; a model turn calling
/// `write_todos` more than once gets an error tool message for each of those calls.
///
/// ```
/// use stategraph::prebuilt::agent::{create_agent, TodoListMiddleware};
/// use stategraph::prebuilt::FakeChatModel;
/// let agent = create_agent(FakeChatModel::new([stategraph::Message::ai("ok")]), vec![])
///     .middleware(TodoListMiddleware::new())
///     .compile()
///     .unwrap();
/// assert!(agent.pregel().channels.contains_key("todos"));
/// ```
#[derive(Clone, Debug)]
pub struct TodoListMiddleware {
    system_prompt: String,
    tool_description: String,
}

impl Default for TodoListMiddleware {
    fn default() -> Self {
        TodoListMiddleware::new()
    }
}

impl TodoListMiddleware {
    /// Python's defaults: [`WRITE_TODOS_SYSTEM_PROMPT`] and
    /// [`WRITE_TODOS_TOOL_DESCRIPTION`].
    pub fn new() -> TodoListMiddleware {
        TodoListMiddleware {
            system_prompt: WRITE_TODOS_SYSTEM_PROMPT.to_owned(),
            tool_description: WRITE_TODOS_TOOL_DESCRIPTION.to_owned(),
        }
    }

    /// The text added to the system prompt (Python's `system_prompt=`).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = prompt.into();
        self
    }

    /// The `write_todos` tool's description (Python's `tool_description=`).
    pub fn tool_description(mut self, description: impl Into<String>) -> Self {
        self.tool_description = description.into();
        self
    }
}

/// The `write_todos` tool with `description`: its schema is Python's
/// `WriteTodosInput` as the model reads it (title `write_todos`, the description, a
/// `Todo` definition).
pub fn write_todos_tool(description: &str) -> Tool {
    let func: ToolFn = std::sync::Arc::new(|args: Value, _rt| {
        async move {
            let todos = read_todos(&args).map_err(ToolFailure::Invocation)?;
            let content = format!("Updated todo list to {}", todos.repr());
            Ok(ToolReply::Update {
                content: Value::from(content),
                update: vec![("todos".to_owned(), todos)],
            })
        }
        .boxed()
    });
    Tool::from_fn(
        "write_todos".to_owned(),
        description.to_owned(),
        todos_schema(description),
        func,
    )
}

/// Python's `write_todos.tool_call_schema.model_json_schema()`.
fn todos_schema(description: &str) -> serde_json::Value {
    serde_json::json!({
        "$defs": {"Todo": {
            "description": "A single todo item with content and status.",
            "properties": {
                "content": {"title": "Content", "type": "string"},
                "status": {"enum": STATUSES, "title": "Status", "type": "string"},
            },
            "required": ["content", "status"],
            "title": "Todo",
            "type": "object",
        }},
        "description": description,
        "properties": {"todos": {"items": {"$ref": "#/$defs/Todo"}, "title": "Todos", "type": "array"}},
        "required": ["todos"],
        "title": "write_todos",
        "type": "object",
    })
}

/// The `todos` argument as pydantic reads it into `list[Todo]` (each item its `content`
/// and `status` only), or pydantic's error lines (`todos.0.status: Input should be ..`).
fn read_todos(args: &Value) -> Result<Value, String> {
    let todos = match args.as_map().and_then(|m| m.get("todos")) {
        None => return Err("todos: Field required".to_owned()),
        Some(Value::List(items)) => items,
        Some(_) => return Err("todos: Input should be a valid list".to_owned()),
    };
    let (mut out, mut errors) = (Vec::with_capacity(todos.len()), Vec::new());
    for (i, item) in todos.iter().enumerate() {
        let Some(item) = item.as_map() else {
            errors.push(format!("todos.{i}: Input should be a valid dictionary"));
            continue;
        };
        let content = match item.get("content") {
            None => Err("Field required"),
            Some(Value::Str(s)) => Ok(s.clone()),
            Some(_) => Err("Input should be a valid string"),
        };
        let status = match item.get("status") {
            None => Err("Field required"),
            Some(Value::Str(s)) if STATUSES.contains(&s.as_ref()) => Ok(s.clone()),
            Some(_) => Err("Input should be 'pending', 'in_progress' or 'completed'"),
        };
        match (content, status) {
            (Ok(content), Ok(status)) => {
                let mut todo = Map::with_capacity(2);
                todo.insert("content", content);
                todo.insert("status", status);
                out.push(Value::Map(todo));
            }
            (content, status) => {
                for (field, r) in [("content", content.err()), ("status", status.err())] {
                    if let Some(msg) = r {
                        errors.push(format!("todos.{i}.{field}: {msg}"));
                    }
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(Value::list(out))
    } else {
        Err(errors.join("\n"))
    }
}

/// A message's content as content blocks (langchain's `content_blocks` of a text
/// message: a string is one text block, an empty one none).
fn content_blocks(content: &Value) -> Vec<Value> {
    let text = |s: &str| {
        let mut block = Map::with_capacity(2);
        block.insert("type", "text");
        block.insert("text", s);
        Value::Map(block)
    };
    match content {
        Value::Str(s) if s.is_empty() => Vec::new(),
        Value::Str(s) => vec![text(s)],
        Value::List(items) => items
            .iter()
            .map(|b| match b {
                Value::Str(s) => text(s),
                other => other.clone(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[async_trait]
impl Middleware for TodoListMiddleware {
    fn name(&self) -> String {
        "TodoListMiddleware".into()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::AfterModel, Hook::WrapModelCall]
    }

    fn channels(&self) -> Vec<(String, Box<dyn Channel>)> {
        vec![("todos".to_owned(), Box::new(LastValue::new()))]
    }

    fn tools(&self) -> Vec<Tool> {
        vec![write_todos_tool(&self.tool_description)]
    }

    async fn wrap_model_call(
        &self,
        mut request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        let blocks = match &request.system_message {
            Some(system) => {
                let mut blocks = content_blocks(&system.content);
                blocks.extend(content_blocks(&Value::list(vec![Value::from(format!(
                    "\n\n{}",
                    self.system_prompt
                ))])));
                blocks
            }
            None => content_blocks(&Value::list(vec![Value::from(self.system_prompt.as_str())])),
        };
        request.system_message = Some(Message::system(Value::list(blocks)));
        handler.call(request).await
    }

    async fn after_model(
        &self,
        state: &AgentState,
        _ctx: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let Some(ai) = state.messages().iter().rev().find(|m| m.role == Role::Ai) else {
            return Ok(AgentUpdate::none());
        };
        let calls: Vec<_> = ai
            .tool_calls
            .iter()
            .filter(|c| c.name == "write_todos")
            .collect();
        if calls.len() <= 1 {
            return Ok(AgentUpdate::none());
        }
        let errors = calls.iter().map(|c| {
            let mut m = Message::tool(PARALLEL_ERROR, c.id.clone().unwrap_or_default());
            m.status = "error".to_owned();
            m
        });
        Ok(AgentUpdate::none().messages(errors.collect()))
    }
}
