//! A tool an agent's model may call: a name, a description, a JSON schema of its
//! arguments, and an async function (LangChain's `BaseTool`, built from a closure).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use stategraph_checkpoint::serde::rust::{from_value, to_value};
use stategraph_checkpoint::Value;

use super::python_text::{exception_repr, repr};
use super::tool_runtime::ToolRuntime;
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// A tool's failure: an error type name and a message, stored and shown as Python shows
/// an exception (`ToolException('message')`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    /// The error's type name (Python's exception class), `ToolException` by default.
    pub kind: String,
    /// The message.
    pub message: String,
}

impl ToolError {
    /// A `ToolException` with this message (LangChain's error type for tools).
    pub fn new(message: impl fmt::Display) -> ToolError {
        ToolError::named("ToolException", message)
    }

    /// An error of type `kind` (`ValueError`, ...) with this message.
    pub fn named(kind: impl Into<String>, message: impl fmt::Display) -> ToolError {
        ToolError {
            kind: kind.into(),
            message: message.to_string(),
        }
    }

    /// Python's `repr` of the error: `Kind('message')`.
    pub fn repr(&self) -> String {
        exception_repr(&self.kind, &self.message)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// Why a tool call did not return a value.
#[derive(Debug)]
pub(crate) enum ToolFailure {
    /// The arguments do not fit the tool (Python's `ToolInvocationError`): the text
    /// LangGraph puts in the tool message.
    Invocation(String),
    /// The tool ran and failed.
    Failed(ToolError),
    /// A tool given the node's context stopped with a node error: an interrupt (which
    /// pauses the run), a command for the parent graph, or a failure.
    Node(NodeError),
}

/// What a tool call returned.
#[derive(Debug)]
pub(crate) enum ToolReply {
    /// A value (a closure tool's result): the tool message's content is the string, or
    /// the JSON text of anything else.
    Value(Value),
    /// A whole tool message's parts (an MCP tool: content blocks, an artifact, and
    /// whether the server reported an error, which the model reads as a failed call).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    Message {
        /// The message's content, as is.
        content: Value,
        /// The artifact (`Nil` for none).
        artifact: Value,
        /// The call failed (the message's `status` is `"error"`).
        error: bool,
    },
    /// A tool message's content with writes to other state channels (a Python tool
    /// returning `Command(update={..., "messages": [ToolMessage(..)]})`; the agent's
    /// `tools` node writes them).
    Update {
        /// The tool message's content.
        content: Value,
        /// The other channels' writes, in order.
        update: Vec<(String, Value)>,
    },
}

/// The key of [`Message::extra`](crate::messages::Message) that carries a
/// [`ToolReply::Update`]'s writes from the tool node to the agent's `tools` node (taken
/// out before the message is stored).
pub(crate) const UPDATE_KEY: &str = "__stategraph_tool_update";

pub(crate) type ToolFn = Arc<
    dyn Fn(Value, ToolRuntime) -> BoxFuture<'static, Result<ToolReply, ToolFailure>> + Send + Sync,
>;

/// A tool: what the model sees (name, description, argument schema) and what runs.
///
/// ```
/// use stategraph::prebuilt::{Tool, ToolError};
/// #[derive(serde::Deserialize)]
/// struct Weather { city: String }
/// let weather = Tool::new("get_weather", "The weather in a city.", |a: Weather| async move {
///     if a.city.is_empty() { return Err(ToolError::named("ValueError", "no city")) }
///     Ok(format!("sunny in {}", a.city))
/// })
/// .arg("city", "string");
/// assert_eq!(weather.name(), "get_weather");
/// ```
#[derive(Clone)]
pub struct Tool {
    name: String,
    description: String,
    params: Vec<(String, String)>,
    schema: Option<serde_json::Value>,
    func: ToolFn,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("schema", &self.schema())
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool running `f` on its arguments, read as `A` (a `serde::Deserialize` struct,
    /// or `serde_json::Value` / [`Value`] for the raw map). `f` returns anything
    /// `Serialize`: a string becomes the tool message's content as is, anything else its
    /// JSON text (as LangGraph's `ToolNode` writes it). Arguments that do not read as `A`
    /// are an invocation error, returned to the model as a tool message.
    pub fn new<A, F, Fut, R>(name: impl Into<String>, description: impl Into<String>, f: F) -> Tool
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let f = Arc::new(f);
        let func: ToolFn = Arc::new(move |args: Value, _rt: ToolRuntime| {
            let f = f.clone();
            async move {
                let input: A = read_args(args)?;
                write_result(&f(input).await.map_err(ToolFailure::Failed)?).map(ToolReply::Value)
            }
            .boxed()
        });
        Tool::from_parts(name.into(), description.into(), func)
    }

    /// A tool that also gets the running node's [`NodeContext`]: it may pause the run
    /// for a human with `ctx.interrupt(question)?` (the whole tool node runs again on
    /// resume, as in Python), reach the store, or stream custom data. Its errors are
    /// [`NodeError`]s: a failure is handled as any tool's failure, an interrupt pauses.
    pub fn with_context<A, F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Tool
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(A, NodeContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, NodeError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let f = Arc::new(f);
        let func: ToolFn = Arc::new(move |args: Value, rt: ToolRuntime| {
            let f = f.clone();
            async move {
                let input: A = read_args(args)?;
                let out = f(input, rt.into_ctx()).await;
                write_result(&out.map_err(ToolFailure::Node)?).map(ToolReply::Value)
            }
            .boxed()
        });
        Tool::from_parts(name.into(), description.into(), func)
    }

    /// A tool that also gets a [`ToolRuntime`]: the graph's state (Python's
    /// `InjectedState`), the store (`InjectedStore`), its tool call id
    /// (`InjectedToolCallId`) and the node's context. None of these is an argument: the
    /// schema the model reads holds only `A`'s (as Python leaves injected arguments out
    /// of it). Errors as [`Tool::with_context`]'s: a failure is handled as any tool's, an
    /// interrupt pauses.
    pub fn with_runtime<A, F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Tool
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(A, ToolRuntime) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, NodeError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let f = Arc::new(f);
        let func: ToolFn = Arc::new(move |args: Value, rt: ToolRuntime| {
            let f = f.clone();
            async move {
                let input: A = read_args(args)?;
                write_result(&f(input, rt).await.map_err(ToolFailure::Node)?).map(ToolReply::Value)
            }
            .boxed()
        });
        Tool::from_parts(name.into(), description.into(), func)
    }

    /// A tool whose argument schema is derived from `A` (with `schemars`): field types,
    /// doc comments as descriptions, serde's renames and defaults, nested types inlined
    /// (see [`Tool::schema`]). Otherwise as [`Tool::new`]: arguments that do not read as
    /// `A` come back to the model as an invocation error.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use stategraph::prebuilt::Tool;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Weather {
    ///     /// The city to look up.
    ///     city: String,
    ///     /// How many days ahead (default 1).
    ///     #[serde(default)]
    ///     days: Option<u32>,
    /// }
    ///
    /// let tool = Tool::typed("get_weather", "The weather in a city.", |a: Weather| async move {
    ///     Ok(format!("sunny in {} for {} day(s)", a.city, a.days.unwrap_or(1)))
    /// });
    /// let schema = tool.schema();
    /// assert_eq!(schema["properties"]["city"]["description"], "The city to look up.");
    /// assert_eq!(schema["required"], serde_json::json!(["city"]));
    /// ```
    #[cfg(feature = "schemars")]
    #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
    pub fn typed<A, F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Tool
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let tool = Tool::new(name, description, f);
        let schema = super::tool_schema::schema_for::<A>(&tool.name, &tool.description);
        tool.with_schema(schema)
    }

    /// [`Tool::with_context`] with the argument schema derived from `A`, as
    /// [`Tool::typed`] derives it.
    #[cfg(feature = "schemars")]
    #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
    pub fn typed_with_context<A, F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Tool
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(A, NodeContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, NodeError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let tool = Tool::with_context(name, description, f);
        let schema = super::tool_schema::schema_for::<A>(&tool.name, &tool.description);
        tool.with_schema(schema)
    }

    /// [`Tool::with_runtime`] with the argument schema derived from `A`, as
    /// [`Tool::typed`] derives it (the runtime is not in it).
    #[cfg(feature = "schemars")]
    #[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
    pub fn typed_with_runtime<A, F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Tool
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(A, ToolRuntime) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, NodeError>> + Send + 'static,
        R: Serialize + 'static,
    {
        let tool = Tool::with_runtime(name, description, f);
        let schema = super::tool_schema::schema_for::<A>(&tool.name, &tool.description);
        tool.with_schema(schema)
    }

    /// A tool running `func` on the raw arguments, with the schema given (MCP tools).
    #[cfg(feature = "mcp")]
    pub(crate) fn from_raw(
        name: String,
        description: String,
        schema: serde_json::Value,
        func: ToolFn,
    ) -> Tool {
        Tool::from_parts(name, description, func).with_schema(schema)
    }

    /// A tool running `func` on the raw arguments with the schema given (the agent's
    /// built-in tools, e.g. `write_todos`).
    pub(crate) fn from_fn(
        name: String,
        description: String,
        schema: serde_json::Value,
        func: ToolFn,
    ) -> Tool {
        Tool::from_parts(name, description, func).with_schema(schema)
    }

    fn from_parts(name: String, description: String, func: ToolFn) -> Tool {
        Tool {
            name,
            description,
            params: Vec::new(),
            schema: None,
            func,
        }
    }

    /// Declares a required argument of JSON-schema type `json_type` (`"string"`,
    /// `"integer"`, `"number"`, `"boolean"`, `"array"`, `"object"`), builder style.
    /// Declared arguments are checked before the call, with pydantic's words, as Python
    /// checks a tool's arguments against its signature.
    #[must_use]
    pub fn arg(mut self, name: impl Into<String>, json_type: impl Into<String>) -> Tool {
        self.params.push((name.into(), json_type.into()));
        self
    }

    /// Sets the whole JSON schema of the arguments (replacing the one built from
    /// [`Tool::arg`]); builder style.
    #[must_use]
    pub fn with_schema(mut self, schema: serde_json::Value) -> Tool {
        self.schema = Some(schema);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description the model reads.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON schema of the arguments (an object schema; arguments declared with
    /// [`Tool::arg`] are required). A tool's runtime ([`Tool::with_runtime`]) is not in
    /// it, as Python leaves injected arguments out.
    pub fn schema(&self) -> serde_json::Value {
        if let Some(s) = &self.schema {
            return s.clone();
        }
        let mut props = serde_json::Map::new();
        for (name, ty) in &self.params {
            props.insert(name.clone(), serde_json::json!({ "type": ty }));
        }
        let required: Vec<&String> = self.params.iter().map(|(n, _)| n).collect();
        let mut schema = serde_json::json!({
            "type": "object",
            "title": self.name,
            "description": self.description,
            "properties": props,
        });
        // Pydantic leaves `required` out of a schema with no required field.
        if !required.is_empty() {
            schema["required"] = serde_json::json!(required);
        }
        schema
    }

    /// Runs the tool on `args` (a map); an invocation error's text is the one LangGraph
    /// returns to the model.
    pub(crate) async fn run(&self, args: Value, rt: ToolRuntime) -> Result<ToolReply, ToolFailure> {
        let errors = self.check(&args);
        if !errors.is_empty() {
            return Err(ToolFailure::Invocation(
                self.invocation_error(&args, &errors),
            ));
        }
        let shown = args.clone();
        match (self.func)(args, rt).await {
            Err(ToolFailure::Invocation(e)) => {
                Err(ToolFailure::Invocation(self.invocation_error(&shown, &e)))
            }
            other => other,
        }
    }

    /// Runs the tool directly (outside a graph, with a context that has no run: an
    /// `interrupt` there fails): its result, or its error (bad arguments: a
    /// `ToolInvocationError` with the text an agent would see). For an MCP tool the
    /// result is the tool message's content (a list of content blocks), and a result the
    /// server marked as an error is a `ToolException` with its text.
    pub async fn invoke(&self, args: impl Into<Value>) -> Result<Value, ToolError> {
        let rt = ToolRuntime::new(Value::Nil, None, detached_context(&self.name));
        match self.run(args.into(), rt).await {
            Ok(ToolReply::Value(v)) => Ok(v),
            Ok(ToolReply::Message {
                content,
                error: false,
                ..
            }) => Ok(content),
            Ok(ToolReply::Message { content, .. }) => Err(ToolError::new(error_text(&content))),
            Ok(ToolReply::Update { content, .. }) => Ok(content),
            Err(ToolFailure::Invocation(text)) => {
                Err(ToolError::named("ToolInvocationError", text))
            }
            Err(ToolFailure::Failed(e)) => Err(e),
            Err(ToolFailure::Node(e)) => Err(ToolError::named("NodeError", e)),
        }
    }

    /// LangGraph's `ToolInvocationError` text.
    fn invocation_error(&self, args: &Value, error: &str) -> String {
        format!(
            "Error invoking tool '{}' with kwargs {} with error:\n {error}\n Please fix the error and try again.",
            self.name,
            repr(args)
        )
    }

    /// The declared arguments that are missing or of the wrong type, one
    /// `name: message` line each, in declaration order (pydantic's wording).
    fn check(&self, args: &Value) -> String {
        let Some(map) = args.as_map() else {
            return if self.params.is_empty() {
                String::new()
            } else {
                "Input should be a valid dictionary".to_owned()
            };
        };
        let mut lines = Vec::new();
        for (name, ty) in &self.params {
            let msg = match map.get(name.as_str()) {
                None => Some("Field required"),
                Some(v) => type_error(ty, v),
            };
            if let Some(msg) = msg {
                lines.push(format!("{name}: {msg}"));
            }
        }
        lines.join("\n")
    }
}

/// A context outside any run, for a tool or tool node invoked directly.
pub(crate) fn detached_context(name: &str) -> NodeContext {
    NodeContext::detached(
        String::new(),
        name.to_owned(),
        0,
        Arc::new(crate::channels::Channels::default()),
    )
}

/// The text of an error result's content: its text blocks, one a line.
fn error_text(content: &Value) -> String {
    match content {
        Value::Str(s) => s.to_string(),
        Value::List(blocks) => blocks
            .iter()
            .filter_map(|b| b.as_map()?.get("text")?.as_str().map(str::to_owned))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The arguments read as `A`; a mismatch is an invocation error.
fn read_args<A: DeserializeOwned>(args: Value) -> Result<A, ToolFailure> {
    from_value(args).map_err(|e| ToolFailure::Invocation(e.to_string()))
}

/// A tool's result as a stored value.
fn write_result<R: Serialize>(out: &R) -> Result<Value, ToolFailure> {
    to_value(out).map_err(|e| {
        ToolFailure::Failed(ToolError::named("TypeError", format!("tool result: {e}")))
    })
}

/// Pydantic's (lax mode) message when `v` does not fit JSON-schema type `ty`.
fn type_error(ty: &str, v: &Value) -> Option<&'static str> {
    match (ty, v) {
        ("integer", Value::Int(_) | Value::UInt(_)) => None,
        ("integer", Value::Float(f)) if f.fract() == 0.0 => None,
        ("integer", Value::Str(s)) if s.trim().parse::<i64>().is_ok() => None,
        ("integer", Value::Str(_)) => {
            Some("Input should be a valid integer, unable to parse string as an integer")
        }
        ("integer", _) => Some("Input should be a valid integer"),
        ("number", Value::Int(_) | Value::UInt(_) | Value::Float(_)) => None,
        ("number", Value::Str(s)) if s.trim().parse::<f64>().is_ok() => None,
        ("number", Value::Str(_)) => {
            Some("Input should be a valid number, unable to parse string as a number")
        }
        ("number", _) => Some("Input should be a valid number"),
        ("string", Value::Str(_)) => None,
        ("string", _) => Some("Input should be a valid string"),
        ("boolean", Value::Bool(_)) => None,
        ("boolean", _) => Some("Input should be a valid boolean"),
        ("array", Value::List(_)) => None,
        ("array", _) => Some("Input should be a valid list"),
        ("object", Value::Map(_)) => None,
        ("object", _) => Some("Input should be a valid dictionary"),
        _ => None,
    }
}
