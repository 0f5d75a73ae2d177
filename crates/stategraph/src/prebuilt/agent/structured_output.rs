//! `response_format`: the agent's final answer read as structured data, through a tool
//! the model calls ([`ResponseFormat::tool`], Python's `ToolStrategy`) or from the
//! model's own JSON answer ([`ResponseFormat::provider`], `ProviderStrategy`).
//!
//! The schema is a JSON Schema object; the stored `structured_response` is the answer's
//! dict, as Python stores it for a JSON-schema `response_format`. As in Python, the
//! answer is taken as it is (a provider's answer must be JSON);
//! [`ResponseFormat::checked`] also checks it against the schema's `required` keys and
//! the `type` of each declared property, as a Pydantic model would, and an answer that
//! does not fit is a [`StructuredOutputError`].

use stategraph_checkpoint::Value;

use crate::messages::{Message, ToolCall};
use crate::pregel::node_error::NodeError;

/// How the final answer becomes `structured_response`.
#[derive(Clone, Debug, PartialEq)]
pub enum ResponseFormat {
    /// The model answers by calling a tool named after the schema (Python's
    /// `ToolStrategy`); the agent answers that call with a tool message and ends.
    Tool(ToolStrategy),
    /// The model's answer is JSON text fitting the schema (Python's `ProviderStrategy`).
    Provider {
        /// The JSON Schema of the answer.
        schema: serde_json::Value,
        /// The answer is checked against the schema ([`ResponseFormat::checked`]).
        check: bool,
    },
}

/// The options of [`ResponseFormat::Tool`].
#[derive(Clone, Debug, PartialEq)]
pub struct ToolStrategy {
    /// The JSON Schema of the answer (its `title` names the tool).
    pub schema: serde_json::Value,
    /// The tool message answering the call (default `Returning structured response: ..`).
    pub tool_message_content: Option<String>,
    /// An answer that does not fit is sent back to the model with the error (`true`,
    /// Python's default) or fails the run with [`StructuredOutputError`] (`false`).
    pub handle_errors: bool,
    /// The answer is checked against the schema ([`ResponseFormat::checked`]).
    pub check: bool,
}

impl ResponseFormat {
    /// Python's `ToolStrategy(schema)`: errors go back to the model.
    pub fn tool(schema: serde_json::Value) -> ResponseFormat {
        ResponseFormat::Tool(ToolStrategy {
            schema,
            tool_message_content: None,
            handle_errors: true,
            check: false,
        })
    }

    /// This format with answers checked against the schema (required keys, property
    /// types): one that does not fit goes back to the model (or fails the run, see
    /// [`ToolStrategy::handle_errors`]).
    pub fn checked(mut self) -> ResponseFormat {
        match &mut self {
            ResponseFormat::Tool(t) => t.check = true,
            ResponseFormat::Provider { check, .. } => *check = true,
        }
        self
    }

    /// A [`ResponseFormat::tool`] whose bad answers fail the run (`handle_errors=False`).
    pub fn strict(mut self) -> ResponseFormat {
        if let ResponseFormat::Tool(t) = &mut self {
            t.handle_errors = false;
        }
        self
    }

    /// Python's `ProviderStrategy(schema)`.
    pub fn provider(schema: serde_json::Value) -> ResponseFormat {
        ResponseFormat::Provider {
            schema,
            check: false,
        }
    }

    /// The name of the schema: its `title` (Python falls back to a random name).
    pub fn name(&self) -> String {
        let schema = match self {
            ResponseFormat::Tool(t) => &t.schema,
            ResponseFormat::Provider { schema, .. } => schema,
        };
        schema
            .get("title")
            .and_then(|t| t.as_str())
            .unwrap_or("response_format")
            .to_owned()
    }
}

/// Why a structured answer was not taken (the error a run fails with, kind
/// `StructuredOutputValidationError` or `MultipleStructuredOutputsError`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StructuredOutputError {
    /// The model called the structured-output tool more than once.
    #[error("Model incorrectly returned multiple structured responses ({}) when only one is expected.", .0.join(", "))]
    Multiple(Vec<String>),
    /// The answer does not fit the schema.
    #[error("Failed to parse structured output for tool '{tool}': {reason}.")]
    Validation {
        /// The schema's name.
        tool: String,
        /// What does not fit, and where.
        reason: String,
    },
}

impl StructuredOutputError {
    /// Python's exception class name.
    pub fn kind(&self) -> &'static str {
        match self {
            StructuredOutputError::Multiple(_) => "MultipleStructuredOutputsError",
            StructuredOutputError::Validation { .. } => "StructuredOutputValidationError",
        }
    }
}

impl StructuredOutputError {
    /// The node error a run fails with: of kind [`StructuredOutputError::kind`].
    pub fn into_node_error(self) -> NodeError {
        NodeError::named(self.kind(), self.to_string())
    }
}

/// Checks `data` against the schema's `required` keys and property types.
fn check(schema: &serde_json::Value, data: &serde_json::Value) -> Result<(), String> {
    let Some(obj) = data.as_object() else {
        return Err(format!("expected an object, got {data}"));
    };
    if let Some(required) = schema.get("required").and_then(|r| r.as_array()) {
        for key in required.iter().filter_map(|k| k.as_str()) {
            if !obj.contains_key(key) {
                return Err(format!("missing required field '{key}'"));
            }
        }
    }
    let props = schema.get("properties").and_then(|p| p.as_object());
    for (key, spec) in props.into_iter().flatten() {
        let (Some(v), Some(ty)) = (obj.get(key), spec.get("type").and_then(|t| t.as_str())) else {
            continue;
        };
        let fits = match ty {
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "array" => v.is_array(),
            "object" => v.is_object(),
            "null" => v.is_null(),
            _ => true,
        };
        if !fits {
            return Err(format!("field '{key}' should be of type {ty}, got {v}"));
        }
    }
    Ok(())
}

impl ToolStrategy {
    /// The structured-output tool calls of `answer`, their schema checked: the
    /// messages to store and the structured response (`None` after an error sent back
    /// to the model).
    pub(crate) fn handle(
        &self,
        name: &str,
        answer: Message,
    ) -> Result<(Vec<Message>, Option<Value>), StructuredOutputError> {
        let calls: Vec<ToolCall> = answer
            .tool_calls
            .iter()
            .filter(|c| c.name == name)
            .cloned()
            .collect();
        let reply = |content: String, call: &ToolCall| {
            Message::tool(content, call.id.clone().unwrap_or_default()).with_name(&call.name)
        };
        if calls.len() > 1 {
            let err =
                StructuredOutputError::Multiple(calls.iter().map(|c| c.name.clone()).collect());
            if !self.handle_errors {
                return Err(err);
            }
            let text = format!("Error: {err}\n Please fix your mistakes.");
            let mut out = vec![answer];
            out.extend(calls.iter().map(|c| reply(text.clone(), c)));
            return Ok((out, None));
        }
        let Some(call) = calls.first() else {
            return Ok((vec![answer], None));
        };
        let data = call.args.to_json();
        let fits = if self.check {
            check(&self.schema, &data)
        } else {
            Ok(())
        };
        match fits {
            Ok(()) => {
                let content = self.tool_message_content.clone().unwrap_or_else(|| {
                    format!("Returning structured response: {}", call.args.repr())
                });
                let message = reply(content, call);
                Ok((vec![answer, message], Some(call.args.clone())))
            }
            Err(reason) => {
                let err = StructuredOutputError::Validation {
                    tool: name.to_owned(),
                    reason,
                };
                if !self.handle_errors {
                    return Err(err);
                }
                let text = format!("Error: {err}\n Please fix your mistakes.");
                let message = reply(text, call);
                Ok((vec![answer, message], None))
            }
        }
    }
}

/// A provider-strategy answer: its text parsed as JSON and checked.
pub(crate) fn parse_provider(
    schema: &serde_json::Value,
    checked: bool,
    name: &str,
    answer: &Message,
) -> Result<Value, StructuredOutputError> {
    let invalid = |reason: String| StructuredOutputError::Validation {
        tool: name.to_owned(),
        reason,
    };
    let data: serde_json::Value = serde_json::from_str(&answer.text()).map_err(|e| {
        invalid(format!(
            "Native structured output expected valid JSON for {name}, but parsing failed: {e}."
        ))
    })?;
    if checked {
        check(schema, &data).map_err(invalid)?;
    }
    Ok(serde_json::from_value(data).unwrap_or(Value::Nil))
}
