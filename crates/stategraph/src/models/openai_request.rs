//! The OpenAI Chat Completions request: its JSON body (the options under the API
//! reference's names) and the history in the wire's form. Below `openai.rs`.

use serde_json::{json, Value as Json};

use super::endpoint::Endpoint;
use super::options::ToolChoice;
use crate::messages::{Message, Role};
use crate::Value;

/// OpenAI's own base URL, the default when `OPENAI_BASE_URL` is not set.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// The request's JSON body (`stream_usage`: ask a streamed answer for its usage).
pub(super) fn request_body(
    e: &Endpoint,
    stream_usage: bool,
    messages: &[Message],
    stream: bool,
) -> Json {
    let o = &e.options;
    let mut body = serde_json::Map::new();
    body.insert("model".into(), json!(e.model));
    body.insert("stream".into(), json!(stream));
    let wire: Vec<Json> = messages.iter().map(wire_message).collect();
    body.insert("messages".into(), Json::Array(wire));
    if stream && stream_usage {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(t) = o.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(n) = o.max_tokens {
        // OpenAI's reasoning models take only the new name; other servers know the old.
        let key = if e.base_url.starts_with(OPENAI_BASE_URL) {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), json!(n));
    }
    if !o.stop.is_empty() {
        body.insert("stop".into(), json!(o.stop));
    }
    if let Some(seed) = o.seed {
        body.insert("seed".into(), json!(seed));
    }
    if let Some((name, schema)) = &o.json_schema {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema}}),
        );
    }
    if !o.tools.is_empty() {
        let names = o.tools.iter().map(|t| t.name.as_str());
        let (choice, alone) = o.choice_to_send(o.tool_choice.as_ref(), names);
        let tools: Vec<Json> = o
            .tools
            .iter()
            .filter(|t| alone.is_none_or(|name| t.name == name))
            .map(|t| {
                let mut tool = json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}});
                if o.deferred.contains(&t.name) {
                    tool["defer_loading"] = json!(true);
                }
                tool
            })
            .chain(o.provider_tools.iter().cloned())
            .collect();
        body.insert("tools".into(), Json::Array(tools));
        if let Some(choice) = &choice {
            body.insert("tool_choice".into(), tool_choice(choice));
        }
        if let Some(p) = o.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), json!(p));
        }
    }
    Json::Object(body)
}

fn tool_choice(choice: &ToolChoice) -> Json {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

/// A message in the wire's form.
fn wire_message(m: &Message) -> Json {
    let mut out = serde_json::Map::new();
    let role = match &m.role {
        Role::Human => "user",
        Role::Ai => "assistant",
        Role::System => match m
            .additional_kwargs
            .get("__openai_role__")
            .and_then(Value::as_str)
        {
            Some("developer") => "developer",
            _ => "system",
        },
        Role::Tool => "tool",
        Role::Function => "function",
        Role::Chat(role) => role.as_str(),
        Role::Remove => "user",
    };
    out.insert("role".into(), json!(role));
    let content = match (&m.role, m.content.as_str()) {
        (_, Some(text)) => json!(text),
        (Role::Human, None) => m.content.to_json(),
        _ => json!(m.text()),
    };
    if let Some(name) = &m.name {
        out.insert("name".into(), json!(name));
    }
    if m.role == Role::Ai {
        let calls = ai_tool_calls(m);
        let empty = content.as_str() == Some("");
        out.insert(
            "content".into(),
            if empty && !calls.is_empty() {
                Json::Null
            } else {
                content
            },
        );
        if !calls.is_empty() {
            out.insert("tool_calls".into(), Json::Array(calls));
        }
    } else {
        out.insert("content".into(), content);
    }
    if let Some(id) = &m.tool_call_id {
        out.insert("tool_call_id".into(), json!(id));
    }
    Json::Object(out)
}

/// An AI message's calls, the invalid ones too (with their text as is), as LangChain
/// sends them back.
fn ai_tool_calls(m: &Message) -> Vec<Json> {
    let mut calls: Vec<Json> = m
        .tool_calls
        .iter()
        .map(|c| {
            let args = serde_json::to_string(&c.args.to_json()).unwrap_or_default();
            json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": args}})
        })
        .collect();
    for bad in &m.invalid_tool_calls {
        let bad = bad.to_json();
        calls.push(json!({"id": bad["id"], "type": "function",
            "function": {"name": bad["name"], "arguments": bad["args"]}}));
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_goes_out_in_the_wire_form() {
        let ai = Message::ai("").with_tool_calls(vec![crate::ToolCall::new(
            "add",
            crate::map! {"a" => 1},
            "c1",
        )]);
        let w = wire_message(&ai);
        assert_eq!(w["content"], Json::Null);
        assert_eq!(w["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
        let t = wire_message(&Message::tool("3", "c1"));
        assert_eq!(
            t,
            json!({"role": "tool", "content": "3", "tool_call_id": "c1"})
        );
    }
}
