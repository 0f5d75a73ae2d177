//! The Anthropic Messages request: its JSON body (the options under the API reference's
//! names, structured output as a forced tool call) and the history in the wire's form.
//! Below `anthropic.rs`.

use serde_json::{json, Value as Json};

use super::endpoint::Endpoint;
use super::options::ToolChoice;
use super::wire::str_at;
use crate::messages::{Message, Role};

/// The request's JSON body.
pub(super) fn request_body(e: &Endpoint, messages: &[Message], stream: bool) -> Json {
    let o = &e.options;
    let mut body = serde_json::Map::new();
    body.insert("max_tokens".into(), json!(o.max_tokens.unwrap_or(4096)));
    let (system, wire) = wire_messages(messages);
    body.insert("messages".into(), Json::Array(wire));
    body.insert("model".into(), json!(e.model));
    if let Some(system) = system {
        body.insert("system".into(), json!(system));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    if let Some(t) = o.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !o.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(o.stop));
    }
    let mut tools: Vec<Json> = o
        .tools
        .iter()
        .map(|t| {
            let mut tool =
                json!({"name": t.name, "input_schema": t.parameters, "description": t.description});
            if o.deferred.contains(&t.name) {
                tool["defer_loading"] = json!(true);
            }
            tool
        })
        .chain(o.provider_tools.iter().cloned())
        .collect();
    let mut choice = o.tool_choice.clone();
    if let Some((name, schema)) = &o.json_schema {
        tools.push(json!({"name": name, "input_schema": schema, "description": "The answer, as structured output."}));
        choice = Some(ToolChoice::Tool(name.clone()));
    }
    let names = tools.iter().filter_map(|t| str_at(t, "name"));
    let (choice, alone) = o.choice_to_send(choice.as_ref(), names);
    if let Some(alone) = alone.map(str::to_owned) {
        tools.retain(|t| str_at(t, "name") == Some(alone.as_str()));
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Json::Array(tools));
        if let Some(choice) = &choice {
            let mut c = match choice {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Required => json!({"type": "any"}),
                ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
            };
            if o.parallel_tool_calls == Some(false) {
                c["disable_parallel_tool_use"] = json!(true);
            }
            body.insert("tool_choice".into(), c);
        }
    }
    Json::Object(body)
}

/// The betas the request's tools need, as langchain-anthropic adds them (its
/// `_TOOL_TYPE_TO_BETA` for the tool-search tools): the `anthropic-beta` header's value.
pub(super) fn betas(e: &Endpoint) -> Option<String> {
    let needed = e.options.provider_tools.iter().any(|t| {
        matches!(
            str_at(t, "type"),
            Some("tool_search_tool_regex_20251119" | "tool_search_tool_bm25_20251119")
        )
    });
    needed.then(|| "advanced-tool-use-2025-11-20".to_owned())
}

/// The system prompt and the conversation in the wire's form: tool results are user
/// turns of `tool_result` blocks, merged with the user turn before them.
fn wire_messages(messages: &[Message]) -> (Option<String>, Vec<Json>) {
    let mut system: Vec<String> = Vec::new();
    let mut out: Vec<Json> = Vec::new();
    for m in messages {
        let (role, blocks) = match m.role {
            Role::System => {
                system.push(m.text());
                continue;
            }
            Role::Ai => ("assistant", ai_blocks(m)),
            Role::Tool => {
                let mut block = json!({"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.text()});
                if m.status == "error" {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
            _ => ("user", user_blocks(m)),
        };
        if let Some(last) = out.last_mut().filter(|l| l["role"] == role) {
            if let Some(list) = last["content"].as_array_mut() {
                list.extend(blocks);
                continue;
            }
        }
        out.push(json!({"role": role, "content": blocks}));
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, out)
}

fn user_blocks(m: &Message) -> Vec<Json> {
    match m.content.to_json() {
        Json::Array(items) => items
            .into_iter()
            .map(|b| match b {
                Json::String(s) => json!({"type": "text", "text": s}),
                other => other,
            })
            .collect(),
        _ => vec![json!({"type": "text", "text": m.text()})],
    }
}

fn ai_blocks(m: &Message) -> Vec<Json> {
    let mut blocks = Vec::new();
    let text = m.text();
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for c in &m.tool_calls {
        blocks.push(
            json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.args.to_json()}),
        );
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_join_the_user_turn_and_system_goes_apart() {
        let ai = Message::ai("").with_tool_calls(vec![
            crate::ToolCall::new("add", crate::map! {"a" => 1}, "t1"),
            crate::ToolCall::new("add", crate::map! {"a" => 2}, "t2"),
        ]);
        let msgs = [
            Message::system("be brief"),
            Message::human("hi"),
            ai,
            Message::tool("1", "t1"),
            Message::tool("2", "t2"),
        ];
        let (system, wire) = wire_messages(&msgs);
        assert_eq!(system.as_deref(), Some("be brief"));
        assert_eq!(wire.len(), 3);
        assert_eq!(wire[2]["content"].as_array().map(Vec::len), Some(2));
        assert_eq!(wire[1]["content"][0]["type"], "tool_use");
    }
}
