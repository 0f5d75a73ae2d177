//! An MCP `CallToolResult` as the parts of a LangChain `ToolMessage`, as
//! langchain-mcp-adapters (0.3) writes them: the content a list of LangChain content
//! blocks (each with an `lc_` id), the structured content as the artifact
//! `{"structured_content": ...}`, and an `isError` result a message with `status: "error"`.
//!
//! It reads the result's wire JSON (the MCP schema, stable across SDK versions) rather than
//! the SDK's Rust types, so it is a pure function of what the server sent.

use serde_json::Value as Json;
use stategraph_checkpoint::serde::rust::to_value;
use stategraph_checkpoint::{map, Value};

use crate::prebuilt::ToolError;

/// A result's content, artifact and error flag; or the error that the adapter raises for
/// content it cannot represent (audio, an unknown block type).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Converted {
    /// The LangChain content blocks.
    pub(crate) content: Value,
    /// `{"structured_content": ...}`, or `Nil` without structured content (or on error).
    pub(crate) artifact: Value,
    /// The server marked the result as an error.
    pub(crate) error: bool,
}

/// Converts a `tools/call` result (its JSON) as the adapter does.
pub(crate) fn convert_result(result: &Json) -> Result<Converted, ToolError> {
    let blocks = match result.get("content") {
        Some(Json::Array(items)) => items.iter().map(convert_block).collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    let error = result.get("isError").and_then(Json::as_bool) == Some(true);
    if error {
        let blocks = if blocks.is_empty() {
            vec![text_block("MCP tool returned an error with empty content.")]
        } else {
            blocks
        };
        return Ok(Converted {
            content: Value::list(blocks),
            artifact: Value::Nil,
            error,
        });
    }
    let artifact = match result.get("structuredContent") {
        None | Some(Json::Null) => Value::Nil,
        Some(structured) => map! {"structured_content" => json_value(structured)?},
    };
    Ok(Converted {
        content: Value::list(blocks),
        artifact,
        error,
    })
}

/// One MCP content block as a LangChain content block.
fn convert_block(block: &Json) -> Result<Value, ToolError> {
    let field = |name: &str| block.get(name).and_then(Json::as_str);
    let mime = field("mimeType").filter(|m| !m.is_empty());
    match field("type").unwrap_or_default() {
        "text" => Ok(text_block(field("text").unwrap_or_default())),
        "image" => Ok(data_block("image", "base64", field("data"), mime)),
        "audio" => Err(ToolError::named(
            "NotImplementedError",
            format!(
                "AudioContent conversion to LangChain content blocks is not yet supported. \
                 Received audio with mime type: {}",
                mime.unwrap_or("None")
            ),
        )),
        "resource_link" => Ok(data_block(kind_of(mime), "url", field("uri"), mime)),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Json::Null);
            let inner = |name: &str| resource.get(name).and_then(Json::as_str);
            let mime = inner("mimeType").filter(|m| !m.is_empty());
            if let Some(text) = inner("text") {
                Ok(text_block(text))
            } else if let Some(blob) = inner("blob") {
                Ok(data_block(kind_of(mime), "base64", Some(blob), mime))
            } else {
                Err(ToolError::named(
                    "ValueError",
                    "Unknown embedded resource type: neither text nor blob",
                ))
            }
        }
        other => Err(ToolError::named(
            "ValueError",
            format!("Unknown MCP content type: {other:?}"),
        )),
    }
}

/// `image` for an `image/*` MIME type, else `file`.
fn kind_of(mime: Option<&str>) -> &'static str {
    match mime {
        Some(m) if m.starts_with("image/") => "image",
        _ => "file",
    }
}

/// LangChain's `create_text_block(text=...)`: `{"type", "text", "id"}`.
fn text_block(text: &str) -> Value {
    map! {"type" => "text", "text" => text, "id" => block_id()}
}

/// LangChain's `create_image_block` / `create_file_block` with `base64=` or `url=`:
/// `{"type", "id", source, "mime_type"}` (no `mime_type` when the server gave none).
fn data_block(kind: &str, source: &str, data: Option<&str>, mime: Option<&str>) -> Value {
    let mut block = map! {"type" => kind, "id" => block_id(), source => data.unwrap_or_default()};
    if let (Value::Map(m), Some(mime)) = (&mut block, mime) {
        m.insert(Value::from("mime_type"), Value::from(mime));
    }
    block
}

/// A content block's id as LangChain makes one: `lc_` and a random UUID.
fn block_id() -> String {
    format!("lc_{}", uuid::Uuid::new_v4())
}

/// A JSON value as a stored value.
fn json_value(json: &Json) -> Result<Value, ToolError> {
    to_value(json).map_err(|e| ToolError::named("ValueError", format!("structured content: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn without_ids(v: &Value) -> Json {
        let mut j: Json = stategraph_checkpoint::serde::rust::from_value(v.clone()).unwrap();
        if let Json::Array(items) = &mut j {
            for item in items {
                let id = item.as_object_mut().unwrap().remove("id").unwrap();
                assert!(id.as_str().unwrap().starts_with("lc_"), "{id}");
            }
        }
        j
    }

    #[test]
    fn blocks_and_artifact_as_the_adapter_writes_them() {
        let out = convert_result(&json!({
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "demo://a", "name": "a", "mimeType": "text/plain"},
                {"type": "resource_link", "uri": "demo://b", "name": "b"},
                {"type": "resource", "resource": {"uri": "demo://c", "text": "inline"}},
                {"type": "resource", "resource": {"uri": "demo://d", "blob": "QUJD", "mimeType": "image/gif"}},
            ],
            "structuredContent": {"x": 1},
        }))
        .unwrap();
        assert_eq!(
            without_ids(&out.content),
            json!([
                {"type": "text", "text": "hi"},
                {"type": "image", "base64": "AAAA", "mime_type": "image/png"},
                {"type": "file", "url": "demo://a", "mime_type": "text/plain"},
                {"type": "file", "url": "demo://b"},
                {"type": "text", "text": "inline"},
                {"type": "image", "base64": "QUJD", "mime_type": "image/gif"},
            ])
        );
        assert_eq!(out.artifact, map! {"structured_content" => map! {"x" => 1}});
        assert!(!out.error);
    }

    #[test]
    fn an_error_result_keeps_its_blocks_and_no_artifact() {
        let out = convert_result(&json!({
            "content": [{"type": "text", "text": "boom"}],
            "structuredContent": {"x": 1},
            "isError": true,
        }))
        .unwrap();
        assert!(out.error);
        assert_eq!(out.artifact, Value::Nil);
        assert_eq!(
            without_ids(&out.content),
            json!([{"type": "text", "text": "boom"}])
        );
        let empty = convert_result(&json!({"content": [], "isError": true})).unwrap();
        assert_eq!(
            without_ids(&empty.content),
            json!([{"type": "text", "text": "MCP tool returned an error with empty content."}])
        );
    }

    #[test]
    fn audio_and_unknown_blocks_are_errors() {
        let audio = json!({"content": [{"type": "audio", "data": "", "mimeType": "audio/wav"}]});
        assert_eq!(
            convert_result(&audio).unwrap_err().kind,
            "NotImplementedError"
        );
        let odd = json!({"content": [{"type": "hologram"}]});
        assert_eq!(convert_result(&odd).unwrap_err().kind, "ValueError");
    }
}
