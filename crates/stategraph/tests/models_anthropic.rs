//! `ChatAnthropic` against a real server speaking Anthropic's Messages API: LiteLLM's
//! proxy in front of the local model (see tests/models_common): a call, streaming into
//! the `messages` mode, a tool call end to end through `create_react_agent`, structured
//! output (a forced tool call), parallel tool uses and a named `tool_choice`.

#![cfg(all(feature = "models", feature = "sqlite"))]
#![allow(clippy::unwrap_used)]

#[path = "models_common/mod.rs"]
mod common;

use std::sync::Arc;

use futures::StreamExt;
use serde_json::json;
use stategraph::models::{parse_structured, ChatAnthropic, ToolChoice, ToolSpec};
use stategraph::prebuilt::{create_react_agent, MessagesState, Tool, ToolError};
use stategraph::{Message, Role, RunConfig, State, StreamMode, StreamPart, Value};

fn model(server: &common::Server) -> ChatAnthropic {
    ChatAnthropic::new(&server.model)
        .base_url(&server.base_url)
        .api_key("sk-local")
        .temperature(0.0)
        .max_tokens(200)
}

/// The fields LangChain's `ChatAnthropic` stores on every answer.
fn assert_langchain_answer(m: &Message, streamed: bool) {
    assert_eq!(m.role, Role::Ai);
    let id = m.id.as_deref().unwrap();
    assert!(
        id.starts_with("lc_run--") && id.ends_with("-0") != streamed,
        "{id}"
    );
    let meta = Value::Map(m.response_metadata.clone()).to_json();
    assert_eq!(meta["model_provider"], "anthropic");
    assert!(meta["model_name"].is_string(), "{meta}");
    let reason = meta["stop_reason"].as_str().unwrap();
    assert!(
        ["end_turn", "max_tokens", "tool_use", "stop_sequence"].contains(&reason),
        "{reason}"
    );
    let usage = m.usage_metadata.as_ref().unwrap().to_json();
    assert!(usage["output_tokens"].as_i64().unwrap() > 0, "{usage}");
    assert_eq!(
        usage["input_tokens"].as_i64().unwrap() + usage["output_tokens"].as_i64().unwrap(),
        usage["total_tokens"].as_i64().unwrap()
    );
    if !streamed {
        assert!(meta["usage"]["input_tokens"].is_i64(), "{meta}");
        assert!(meta["id"].is_string(), "{meta}");
    }
}

#[tokio::test]
async fn a_call_answers_as_chatanthropic_stores_it() {
    let Some(server) = common::anthropic() else {
        return;
    };
    let m = model(&server)
        .call(
            &[Message::system("Be brief."), Message::human("Say hello.")],
            false,
        )
        .await
        .unwrap();
    assert_langchain_answer(&m, false);
    assert!(
        m.content.as_str().is_some_and(|t| !t.is_empty()),
        "one text block reads as a string: {:?}",
        m.content
    );
    let streamed = model(&server)
        .call(&[Message::human("Say hello.")], true)
        .await
        .unwrap();
    assert_langchain_answer(&streamed, true);
}

#[derive(serde::Deserialize)]
struct Shout {
    word: String,
}

fn shout_tool() -> Tool {
    Tool::new("shout", "Shouts a word.", |a: Shout| async move {
        Ok::<_, ToolError>(a.word.to_uppercase())
    })
    .arg("word", "string")
}

#[tokio::test]
async fn a_streamed_tool_call_runs_end_to_end_through_the_agent() {
    let Some(server) = common::anthropic() else {
        return;
    };
    let agent = create_react_agent(model(&server), vec![shout_tool()])
        .checkpointer(Arc::new(stategraph::checkpoint::MemorySaver::new()))
        .compile()
        .unwrap();
    let config = RunConfig::thread("anthropic-tools");
    let mut parts = agent.stream_typed(
        MessagesState::input(Message::human("Shout hello.")),
        &config,
        StreamMode::Messages,
    );
    let mut agent_chunks = 0;
    while let Some(part) = parts.next().await {
        if let StreamPart::Messages { metadata, .. } = part.unwrap() {
            agent_chunks += usize::from(metadata.langgraph_node == "agent");
        }
    }
    assert!(agent_chunks > 2, "the answers streamed");
    let state = agent.get_state(&config).await.unwrap();
    let messages = MessagesState::from_values(&state.values).unwrap().messages;
    // The model may call the tool several times at once (parallel calls): each valid call
    // is answered by its tool message, in order, then the model answers in text.
    let calls = &messages[1].tool_calls;
    assert!(!calls.is_empty(), "{messages:?}");
    let roles: Vec<Role> = messages.iter().map(|m| m.role.clone()).collect();
    let mut want = vec![Role::Human, Role::Ai];
    want.extend(calls.iter().map(|_| Role::Tool));
    want.push(Role::Ai);
    assert_eq!(roles, want, "{messages:?}");
    for (call, answer) in calls.iter().zip(&messages[2..]) {
        assert_eq!(call.name, "shout");
        let word = call.args.get("word").and_then(Value::as_str).unwrap();
        assert_eq!(answer.text(), word.to_uppercase());
        assert_eq!(answer.tool_call_id, call.id);
    }
    assert_langchain_answer(&messages[1], true);
    assert_eq!(
        messages[1]
            .response_metadata
            .get("stop_reason")
            .and_then(Value::as_str),
        Some("tool_use")
    );
    // With tools bound, the content is the list of blocks, as LangChain merges them.
    let blocks = messages[1].content.to_json();
    assert!(
        blocks
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "tool_use"),
        "{blocks}"
    );
    assert_langchain_answer(messages.last().unwrap(), true);
}

#[tokio::test]
async fn structured_output_is_a_forced_tool_call() {
    let Some(server) = common::anthropic() else {
        return;
    };
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let answer = model(&server)
        .with_structured_output("answer", schema)
        .call(&[Message::human("A number?")], false)
        .await
        .unwrap();
    let doc = parse_structured(&answer).unwrap();
    assert!(doc["n"].is_i64(), "{doc}");
}

#[tokio::test]
async fn an_unknown_model_is_the_servers_typed_refusal() {
    let Some(server) = common::anthropic() else {
        return;
    };
    let m = ChatAnthropic::new("no-such-model")
        .base_url(&server.base_url)
        .api_key("sk-local")
        .max_tokens(8);
    let err = m.call(&[Message::human("hi")], false).await.unwrap_err();
    // LiteLLM refuses an unknown model with a 400 (OpenAI's own API says 404).
    assert_eq!(err.status, Some(400), "{err}");
    assert_eq!(err.kind, stategraph::models::ModelErrorKind::BadRequest);
    assert_eq!(err.error_type.as_deref(), Some("invalid_request_error"));
    assert!(err.message.contains("no-such-model"), "{err}");
}

#[derive(serde::Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

fn tool_specs() -> Vec<ToolSpec> {
    let add = Tool::new("add", "Adds two integers.", |x: Add| async move {
        Ok::<_, ToolError>(x.a.wrapping_add(x.b).to_string())
    })
    .with_schema(json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}));
    [add, shout_tool()].iter().map(ToolSpec::from).collect()
}

#[tokio::test]
async fn parallel_tool_uses_come_in_one_answer_plain_and_streamed() {
    let Some(server) = common::anthropic() else {
        return;
    };
    // The tiny model makes two calls when the prompt says "in parallel"; LiteLLM turns
    // the Chat Completions answer's two tool calls into two `tool_use` blocks.
    let m = model(&server).bind_tool_specs(tool_specs());
    let prompt = [Message::human(
        "Add 2 and 3 and shout hi: call both tools in parallel.",
    )];
    let plain = m.call(&prompt, false).await.unwrap();
    assert_langchain_answer(&plain, false);
    let calls = |m: &Message| -> Vec<(String, serde_json::Value)> {
        m.tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.args.to_json()))
            .collect()
    };
    let names: Vec<String> = calls(&plain).into_iter().map(|c| c.0).collect();
    assert_eq!(names, ["add", "shout"], "{:?}", plain.content);
    assert_eq!(plain.tool_calls[1].args.to_json(), json!({"word": "hi"}));
    let mut chunks = Vec::new();
    let streamed = m
        .stream_to(&prompt, |c| chunks.push(c.clone()))
        .await
        .unwrap();
    assert_langchain_answer(&streamed, true);
    assert_eq!(calls(&streamed), calls(&plain));
    // Each call's fragments carry its block's index; joined, they are its arguments.
    let mut by_index: Vec<(i64, String)> = Vec::new();
    for chunk in &chunks {
        let Some(frags) = chunk.extra.get("tool_call_chunks") else {
            continue;
        };
        for f in frags.to_json().as_array().unwrap() {
            let index = f["index"].as_i64().unwrap();
            match by_index.iter_mut().find(|(i, _)| *i == index) {
                Some((_, args)) => args.push_str(f["args"].as_str().unwrap_or("")),
                None => by_index.push((index, f["args"].as_str().unwrap_or("").to_owned())),
            }
        }
    }
    assert_eq!(by_index.len(), 2, "{by_index:?}");
    for ((_, args), call) in by_index.iter().zip(&streamed.tool_calls) {
        let args: serde_json::Value = serde_json::from_str(args).unwrap();
        assert_eq!(args, call.args.to_json());
    }
}

#[tokio::test]
async fn a_named_tool_choice_is_honoured_when_narrowed() {
    let Some(server) = common::anthropic() else {
        return;
    };
    let named = model(&server)
        .bind_tool_specs(tool_specs())
        .tool_choice(ToolChoice::Tool("shout".into()));
    let prompt = [Message::human("Use a tool.")];
    // `{"type": "tool", "name": "shout"}` beside both tools: LiteLLM passes it on in
    // OpenAI's named form, which llama-server reads as `auto`: the model calls `add`.
    let ignored = named.call(&prompt, false).await.unwrap();
    assert_eq!(ignored.tool_calls[0].name, "add", "{:?}", ignored.content);
    let narrowed = named.narrow_named_tool_choice(true);
    for stream in [false, true] {
        let m = narrowed.call(&prompt, stream).await.unwrap();
        let names: Vec<&str> = m.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["shout"], "stream {stream}");
    }
}
