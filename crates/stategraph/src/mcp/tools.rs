//! An MCP server's tool as a stategraph [`Tool`]: its name (optionally prefixed with the
//! server's), description and input schema as the server lists them, and a function that
//! calls it over the session and turns the result into a tool message's parts.

use std::sync::Arc;

use futures::FutureExt;
use rmcp::model::{JsonObject, Tool as McpTool};
use stategraph_checkpoint::serde::rust::from_value;
use stategraph_checkpoint::Value;

use super::content::convert_result;
use super::session::Session;
use crate::prebuilt::tool::{ToolFailure, ToolFn, ToolReply};
use crate::prebuilt::{Tool, ToolError};

/// `tool` of the server behind `session` as a [`Tool`]; named `{server}_{name}` when
/// `prefix` is set (the adapter's `tool_name_prefix=True`), else as the server names it.
pub(crate) fn to_tool(session: &Arc<Session>, tool: McpTool, prefix: bool) -> Tool {
    let mcp_name = tool.name.to_string();
    let name = if prefix {
        format!("{}_{mcp_name}", session.server())
    } else {
        mcp_name.clone()
    };
    let description = tool.description.map(|d| d.to_string()).unwrap_or_default();
    let schema = serde_json::Value::Object((*tool.input_schema).clone());
    let session = session.clone();
    let func: ToolFn = Arc::new(move |args: Value, _ctx| {
        let session = session.clone();
        let mcp_name = mcp_name.clone();
        async move {
            let arguments = arguments(args)?;
            let result = session
                .call_tool(&mcp_name, arguments)
                .await
                .map_err(|e| ToolFailure::Failed(ToolError::named(e.kind(), e)))?;
            let converted = convert_result(&result).map_err(ToolFailure::Failed)?;
            Ok(ToolReply::Message {
                content: converted.content,
                artifact: converted.artifact,
                error: converted.error,
            })
        }
        .boxed()
    });
    Tool::from_raw(name, description, schema, func)
}

/// A tool call's arguments as the JSON object MCP sends (no arguments: an empty one).
fn arguments(args: Value) -> Result<JsonObject, ToolFailure> {
    match from_value::<serde_json::Value>(args) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(serde_json::Value::Null) => Ok(JsonObject::new()),
        Ok(_) => Err(ToolFailure::Invocation(
            "Input should be a valid dictionary".to_owned(),
        )),
        Err(e) => Err(ToolFailure::Invocation(e.to_string())),
    }
}
