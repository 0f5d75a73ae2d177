//! What both clients are configured with: the tools a model sees, which one it must call,
//! the options sent with every request and the builder methods that set them.

use super::error::{ModelError, ModelErrorKind};
use crate::prebuilt::Tool;

/// A tool as the model sees it: name, description and the JSON schema of its arguments.
/// Made from a [`Tool`] by [`ChatModel::bind_tools`](crate::prebuilt::ChatModel::bind_tools),
/// or given directly (e.g. read from OpenAI-style JSON) to `bind_tool_specs`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What the model reads about it.
    pub description: String,
    /// The JSON schema of the arguments (an object schema).
    pub parameters: serde_json::Value,
}

impl ToolSpec {
    /// A tool spec from its parts.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    /// Reads an OpenAI-style function tool, `{"type": "function", "function": {"name",
    /// "description", "parameters"}}` (or the inner `function` object alone).
    pub fn from_openai_json(v: &serde_json::Value) -> Result<ToolSpec, ModelError> {
        let f = v.get("function").unwrap_or(v);
        let name = f.get("name").and_then(|n| n.as_str()).ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::Config,
                "openai",
                format!("a tool without a name: {v}"),
            )
        })?;
        let description = f.get("description").and_then(|d| d.as_str()).unwrap_or("");
        let parameters = f
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
        Ok(ToolSpec::new(name, description, parameters))
    }
}

impl From<&Tool> for ToolSpec {
    /// The tool's schema without its top-level `title` and `description` (the
    /// description travels beside it), as LangChain's `convert_to_openai_tool` sends it.
    fn from(tool: &Tool) -> ToolSpec {
        let mut parameters = tool.schema();
        if let Some(map) = parameters.as_object_mut() {
            map.remove("title");
            map.remove("description");
        }
        ToolSpec::new(tool.name(), tool.description(), parameters)
    }
}

/// Which tool the model must call (`tool_choice`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (the default when tools are bound).
    Auto,
    /// No tool (OpenAI `"none"`; Anthropic `{"type": "none"}`).
    None,
    /// At least one tool (OpenAI `"required"`, Anthropic `{"type": "any"}`).
    Required,
    /// This tool.
    Tool(String),
}

/// Where a streamed answer's chunks go.
pub(crate) type ChunkSink<'a> = &'a mut (dyn FnMut(&crate::Message) + Send);

/// Options both clients send with every request.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
    pub(crate) temperature: Option<f64>,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) stop: Vec<String>,
    pub(crate) seed: Option<i64>,
    pub(crate) streaming: Option<bool>,
    pub(crate) tool_choice: Option<ToolChoice>,
    pub(crate) parallel_tool_calls: Option<bool>,
    pub(crate) tools: Vec<ToolSpec>,
    /// `(name, schema)` of a structured-output format.
    pub(crate) json_schema: Option<(String, serde_json::Value)>,
    /// Attempts again after a connection failure (`None`: the SDKs' default, 2).
    pub(crate) max_retries: Option<u32>,
    /// A named `tool_choice` goes out as that tool alone with `Required`.
    pub(crate) narrow_named_choice: bool,
    /// Names of the bound tools sent with `defer_loading: true` (provider tool search).
    pub(crate) deferred: std::collections::BTreeSet<String>,
    /// Raw provider tool entries sent after the bound tools (`{"type":
    /// "tool_search_tool_bm25_20251119", ..}`).
    pub(crate) provider_tools: Vec<serde_json::Value>,
}

impl Options {
    /// How many times a request is sent again after a connection failure.
    pub(crate) fn retries(&self) -> u32 {
        self.max_retries.unwrap_or(2)
    }

    /// The choice to send with tools named `names`, and the one tool to send alone if the
    /// choice is narrowed (`narrow_named_choice` and a named choice of one of them).
    pub(crate) fn choice_to_send<'a>(
        &self,
        choice: Option<&'a ToolChoice>,
        names: impl IntoIterator<Item = &'a str>,
    ) -> (Option<ToolChoice>, Option<&'a str>) {
        match choice {
            Some(ToolChoice::Tool(name))
                if self.narrow_named_choice && names.into_iter().any(|n| n == name) =>
            {
                (Some(ToolChoice::Required), Some(name.as_str()))
            }
            other => (other.cloned(), None),
        }
    }
}

/// The options builder methods both clients share (each sets its `Endpoint`'s).
macro_rules! option_builders {
    () => {
        /// Sets the sampling temperature (builder style).
        #[must_use]
        pub fn temperature(mut self, t: f64) -> Self {
            self.endpoint.options.temperature = Some(t);
            self
        }

        /// Sets the most tokens the answer may have (builder style).
        #[must_use]
        pub fn max_tokens(mut self, n: u32) -> Self {
            self.endpoint.options.max_tokens = Some(n);
            self
        }

        /// Sets the stop sequences (builder style).
        #[must_use]
        pub fn stop<I, S>(mut self, stop: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.endpoint.options.stop = stop.into_iter().map(Into::into).collect();
            self
        }

        /// Streams every answer (`true`), or never (`false`); unset, the model streams
        /// when the run streams the `messages` mode (builder style).
        #[must_use]
        pub fn streaming(mut self, on: bool) -> Self {
            self.endpoint.options.streaming = Some(on);
            self
        }

        /// Sets which tool the model must call (builder style).
        #[must_use]
        pub fn tool_choice(mut self, choice: crate::models::ToolChoice) -> Self {
            self.endpoint.options.tool_choice = Some(choice);
            self
        }

        /// Allows (or forbids) several tool calls in one answer (builder style; unset,
        /// the provider's default, which allows them).
        #[must_use]
        pub fn parallel_tool_calls(mut self, on: bool) -> Self {
            self.endpoint.options.parallel_tool_calls = Some(on);
            self
        }

        /// Sends a named `tool_choice` as that tool alone with `required` (the model then
        /// sees only that tool and must call it) rather than as the named form beside every
        /// bound tool, which LangChain always sends. For servers that know only the string
        /// forms: llama.cpp's server reads a named choice as `auto` (it reads `tool_choice`
        /// as a string and falls back to `auto` on an object), and LiteLLM passes
        /// Anthropic's `{"type": "tool"}` on to it in the named form. Off by default
        /// (builder style).
        #[must_use]
        pub fn narrow_named_tool_choice(mut self, on: bool) -> Self {
            self.endpoint.options.narrow_named_choice = on;
            self
        }

        /// Binds tools given as specs (e.g. read from OpenAI-style JSON) rather than as
        /// [`Tool`](crate::prebuilt::Tool)s (builder style).
        #[must_use]
        pub fn bind_tool_specs(mut self, tools: Vec<crate::models::ToolSpec>) -> Self {
            self.endpoint.options.tools = tools;
            self
        }

        /// Sends the bound tools named in `names` with `defer_loading: true` (the
        /// provider loads their schemas only when its tool search finds them; LangChain's
        /// `extras={"defer_loading": True}`) (builder style).
        #[must_use]
        pub fn defer_loading<S: Into<String>>(
            mut self,
            names: impl IntoIterator<Item = S>,
        ) -> Self {
            self.endpoint.options.deferred = names.into_iter().map(Into::into).collect();
            self
        }

        /// Adds a raw provider tool entry, sent as given after the bound tools (a
        /// server-side tool such as Anthropic's `{"type": "tool_search_tool_bm25_20251119",
        /// "name": "tool_search_tool_bm25"}`; LangChain's dict tools) (builder style).
        #[must_use]
        pub fn provider_tool(mut self, tool: serde_json::Value) -> Self {
            self.endpoint.options.provider_tools.push(tool);
            self
        }

        /// Asks for an answer that is a JSON document matching `schema` (structured
        /// output: LangChain's `with_structured_output(schema, method="json_schema")`);
        /// the answer's content is the JSON text, read it with
        /// [`parse_structured`](crate::models::parse_structured). `name` names the
        /// schema (OpenAI requires one).
        #[must_use]
        pub fn with_structured_output(
            mut self,
            name: impl Into<String>,
            schema: serde_json::Value,
        ) -> Self {
            self.endpoint.options.json_schema = Some((name.into(), schema));
            self
        }

        /// Sets how many times a request is sent again when its connection fails before
        /// an answer (refused, reset, or a pooled connection the server had closed): 2 by
        /// default, as the providers' Python SDKs (`max_retries`). Error statuses,
        /// timeouts and cut streams are not retried here: they fail the call (a node's
        /// `RetryPolicy` decides); builder style.
        #[must_use]
        pub fn max_retries(mut self, n: u32) -> Self {
            self.endpoint.options.max_retries = Some(n);
            self
        }

        /// Sets how long to wait for the connection and for each read of the answer
        /// (default 10 minutes; builder style).
        #[must_use]
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.endpoint.set_timeout(timeout);
            self
        }
    };
}
pub(crate) use option_builders;
