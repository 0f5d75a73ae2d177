//! `HumanInTheLoopMiddleware`'s `per_call` mode: one interrupt per gated tool call, as
//! the call starts, whose value is Python's `ToolApprovalRequest` and whose
//! `response_schema` is the JSON Schema Python publishes for the decisions the tool
//! allows (pydantic's, key for key).

use serde_json::{json, Value as Json};
use stategraph_checkpoint::Value;

/// How [`HumanInTheLoopMiddleware`](super::HumanInTheLoopMiddleware) pauses (Python's
/// `interrupt_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InterruptMode {
    /// One interrupt per model answer, a `HITLRequest` answered with
    /// `{"decisions": [...]}` (`"batched"`, the default).
    #[default]
    Batched,
    /// One interrupt per gated tool call, as it starts: a `ToolApprovalRequest`
    /// (`{"type": "tool_approval", "tool_call_id", "name", "args", "description"}`)
    /// answered with one decision keyed by the interrupt's id
    /// (`Command::resume_by_id([(id, Decision::Approve.to_value())])`) (`"per_call"`).
    PerCall,
}

/// One decision's schema (pydantic's for Python's TypedDicts); `edit` refers to
/// `#/$defs/EditedAction`.
fn member(kind: &str) -> Json {
    let ty = |c: &str| json!({"const": c, "title": "Type", "type": "string"});
    let message = json!({"title": "Message", "type": "string"});
    match kind {
        "approve" => json!({
            "description": "Response when a human approves the action.",
            "properties": {"type": ty("approve")},
            "required": ["type"], "title": "ApproveDecision", "type": "object"
        }),
        "reject" => json!({
            "description": "Response when a human rejects the action.",
            "properties": {"type": ty("reject"), "message": message},
            "required": ["type"], "title": "RejectDecision", "type": "object"
        }),
        "respond" => json!({
            "description": "Response when a human answers on behalf of the tool, skipping execution.\n\nUsed for \"ask user\" style tools whose real implementation is the human's\nresponse. The tool is not executed; instead, a synthetic `ToolMessage` with\n`status=\"success\"` and the provided `message` is returned to the model.",
            "properties": {"type": ty("respond"), "message": message},
            "required": ["type", "message"], "title": "RespondDecision", "type": "object"
        }),
        "edit" => json!({
            "properties": {
                "type": ty("edit"),
                "edited_action": {"$ref": "#/$defs/EditedAction"}
            },
            "required": ["type", "edited_action"], "title": "EditDecision", "type": "object"
        }),
        _ => Json::Null,
    }
}

/// The `title` of a decision's schema.
fn title(kind: &str) -> &'static str {
    match kind {
        "approve" => "ApproveDecision",
        "edit" => "EditDecision",
        "reject" => "RejectDecision",
        "respond" => "RespondDecision",
        _ => "",
    }
}

/// The `response_schema` of a `per_call` interrupt for tool `name` allowing `allowed`
/// (duplicates dropped, order kept): Python's for a tool whose argument schema it
/// cannot see (an edit's `args` any object).
pub(crate) fn decision_schema(allowed: &[&str], name: &str) -> Value {
    let mut kinds: Vec<&str> = Vec::new();
    for &k in allowed {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let edited_action = json!({
        "properties": {
            "name": {"const": name, "title": "Name", "type": "string"},
            "args": {"title": "Args", "type": "object"}
        },
        "required": ["name", "args"], "title": "EditedAction", "type": "object"
    });
    let schema = if let [only] = kinds[..] {
        let body = member(only);
        if only == "edit" {
            let mut m = serde_json::Map::new();
            m.insert("$defs".into(), json!({"EditedAction": edited_action}));
            if let Json::Object(rest) = body {
                m.extend(rest);
            }
            Json::Object(m)
        } else {
            body
        }
    } else {
        // `$defs` and the discriminator's mapping sorted by name, `oneOf` in order.
        let mut defs: Vec<(String, Json)> = kinds
            .iter()
            .map(|&k| (title(k).to_owned(), member(k)))
            .collect();
        if kinds.contains(&"edit") {
            defs.push(("EditedAction".to_owned(), edited_action));
        }
        defs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut mapping: Vec<(&str, String)> = kinds
            .iter()
            .map(|&k| (k, format!("#/$defs/{}", title(k))))
            .collect();
        mapping.sort();
        let one_of: Vec<Json> = kinds
            .iter()
            .map(|&k| json!({"$ref": format!("#/$defs/{}", title(k))}))
            .collect();
        let mapping: serde_json::Map<String, Json> = mapping
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Json::String(v)))
            .collect();
        json!({
            "$defs": defs.into_iter().collect::<serde_json::Map<String, Json>>(),
            "discriminator": {"mapping": mapping, "propertyName": "type"},
            "oneOf": one_of
        })
    };
    serde_json::from_value(schema).unwrap_or_default()
}
