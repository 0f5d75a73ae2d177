//! `PiiMiddleware` and `ContextEditingMiddleware` against the pinned langchain 1.5.0:
//! the detectors and strategies on sample texts, and, per agent configuration, the
//! stored conversation, the model's requests, the error and the graph's drawing
//! (tests/interop/create_agent_mwb.json, written by tests/interop/create_agent_mwb.py).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{json, Value as Json};
use stategraph::checkpoint::MemorySaver;
use stategraph::prebuilt::agent::{
    apply_strategy, create_agent, detect_credit_card, detect_email, detect_ip, detect_mac_address,
    detect_url, AgentState, ClearToolUsesEdit, ContextEditingMiddleware, Detector, Middleware,
    MiddlewareConfigError, PiiMatch, PiiMiddleware, RedactionStrategy,
};
use stategraph::prebuilt::{FakeChatModel, MessagesState, Tool};
use stategraph::{map, Message, Role, RunConfig, ToolCall, Value};

fn fixture() -> Json {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/interop/create_agent_mwb.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const CUSTOM: &str = r"sk-[a-zA-Z0-9]{8}";

fn strategy(name: &str) -> RedactionStrategy {
    match name {
        "redact" => RedactionStrategy::Redact,
        "mask" => RedactionStrategy::Mask,
        "hash" => RedactionStrategy::Hash,
        _ => RedactionStrategy::Block,
    }
}

#[test]
fn detectors_and_strategies_give_pythons_matches_and_text() {
    let fx = fixture();
    let custom = Detector::regex("api_key", CUSTOM).unwrap();
    for row in fx["detectors"].as_array().unwrap() {
        let text = row["text"].as_str().unwrap();
        for (name, expected) in row["types"].as_object().unwrap() {
            let matches: Vec<PiiMatch> = match name.as_str() {
                "email" => detect_email(text),
                "credit_card" => detect_credit_card(text),
                "ip" => detect_ip(text),
                "mac_address" => detect_mac_address(text),
                "url" => detect_url(text),
                _ => custom.detect(text),
            };
            let got: Vec<Json> = matches
                .iter()
                .map(|m| json!([m.pii_type, m.value, m.start, m.end]))
                .collect();
            assert_eq!(Json::from(got), expected["matches"], "{name} in {text:?}");
            for s in ["redact", "mask", "hash"] {
                let out = apply_strategy(text, &matches, strategy(s)).unwrap();
                assert_eq!(out, expected[s].as_str().unwrap(), "{name} {s} of {text:?}");
            }
            if let Some(first) = matches.first() {
                let err = apply_strategy(text, &matches, RedactionStrategy::Block).unwrap_err();
                let msg = format!(
                    "Detected {} instance(s) of {} in text content",
                    matches.len(),
                    first.pii_type
                );
                assert_eq!(err.to_string(), msg);
            }
        }
    }
}

#[test]
fn bad_configuration_is_a_typed_error() {
    let err = PiiMiddleware::new("phone").unwrap_err();
    assert_eq!(err.middleware, "PIIMiddleware");
    assert_eq!(
        err.message,
        "Unknown PII type: phone. Must be one of ['email', 'credit_card', 'ip', 'mac_address', 'url'] or provide a custom detector."
    );
    // Look-around is a feature of Python's `re` the `regex` crate lacks.
    let err: MiddlewareConfigError = PiiMiddleware::with_regex("key", r"(?<=id:)\d+").unwrap_err();
    assert!(err.message.contains("(?<=id:)"), "{err}");
    assert_eq!(
        PiiMiddleware::new("url").unwrap().name(),
        "PIIMiddleware[url]"
    );
}

fn tool(name: &'static str, description: &'static str) -> Tool {
    Tool::new(name, description, move |a: serde_json::Value| async move {
        let q = a["query"].as_str().unwrap_or_default().to_owned();
        Ok::<_, stategraph::prebuilt::ToolError>(match name {
            "lookup" => format!("Customer {q}: reached from 10.0.0.7, card 4532015112830366."),
            _ => format!("Results for {q}: {}", "lorem ipsum ".repeat(8)),
        })
    })
    .arg("query", "string")
}

fn call(name: &str, i: u32, query: &str) -> ToolCall {
    ToolCall::new(name, map! {"query" => query}, format!("call-{i}"))
}

/// The script's answers.
fn answers(scenario: &str) -> Vec<Message> {
    if scenario.starts_with("pii") {
        return vec![
            Message::ai("")
                .with_id("ai-1")
                .with_tool_calls(vec![call("lookup", 1, "jo@corp.com")]),
            Message::ai("Write to jo@corp.com, or see www.corp.com/help.").with_id("ai-2"),
        ];
    }
    vec![
        Message::ai("")
            .with_id("ai-1")
            .with_tool_calls(vec![call("search", 1, "rust")]),
        Message::ai("")
            .with_id("ai-2")
            .with_tool_calls(vec![call("lookup", 2, "ann"), call("search", 3, "go")]),
        Message::ai("")
            .with_id("ai-3")
            .with_tool_calls(vec![call("search", 4, "zig")]),
        Message::ai("Done.").with_id("ai-4"),
    ]
}

/// Where "corp" is, typed by the middleware (Python's function detector without `type`).
fn corp(text: &str) -> Vec<PiiMatch> {
    text.match_indices("corp")
        .map(|(i, v)| {
            let start = text[..i].chars().count();
            PiiMatch {
                pii_type: String::new(),
                value: v.to_owned(),
                start,
                end: start + 4,
            }
        })
        .collect()
}

fn middleware(scenario: &str) -> Vec<Arc<dyn Middleware>> {
    use RedactionStrategy::{Block, Hash, Mask};
    let pii = |t: &str| PiiMiddleware::new(t).unwrap();
    let ctx = |e: ClearToolUsesEdit| -> Vec<Arc<dyn Middleware>> {
        vec![Arc::new(ContextEditingMiddleware::new(vec![e]))]
    };
    match scenario {
        "pii" => vec![
            Arc::new(pii("email").apply_to_output(true)),
            Arc::new(
                pii("credit_card")
                    .strategy(Mask)
                    .apply_to_tool_results(true),
            ),
            Arc::new(pii("ip").strategy(Hash).apply_to_tool_results(true)),
            Arc::new(pii("mac_address").strategy(Mask)),
            Arc::new(pii("url").apply_to_input(false).apply_to_output(true)),
        ],
        "pii_custom" => vec![
            Arc::new(
                PiiMiddleware::with_regex("ticket", r"T-\d{3}")
                    .unwrap()
                    .strategy(Hash),
            ),
            Arc::new(
                PiiMiddleware::with_detector("corp", Detector::function(corp))
                    .strategy(Mask)
                    .apply_to_output(true),
            ),
        ],
        "pii_block" => vec![Arc::new(
            pii("email")
                .strategy(Block)
                .apply_to_input(false)
                .apply_to_tool_results(true),
        )],
        "ctx" => ctx(ClearToolUsesEdit {
            trigger: 60,
            keep: 1,
            exclude_tools: vec!["lookup".into()],
            ..ClearToolUsesEdit::default()
        }),
        "ctx_inputs" => ctx(ClearToolUsesEdit {
            trigger: 60,
            keep: 0,
            clear_at_least: 70,
            clear_tool_inputs: true,
            placeholder: "[gone]".into(),
            ..ClearToolUsesEdit::default()
        }),
        _ => vec![Arc::new(ContextEditingMiddleware::default())],
    }
}

/// `id` as the fixture has it: a uuid by its kind.
fn id(id: &Option<String>) -> Json {
    match id {
        Some(s) if uuid::Uuid::parse_str(s).is_ok() => json!("<uuid>"),
        Some(s) => json!(s),
        None => Json::Null,
    }
}

/// A message as the Python script dumps it.
fn dump(m: &Message) -> Json {
    let kind = match m.role {
        Role::Human => "human",
        Role::Ai => "ai",
        Role::Tool => "tool",
        _ => "system",
    };
    let mut d = json!({
        "type": kind,
        "content": m.content.to_json(),
        "id": id(&m.id),
        "response_metadata": Value::Map(m.response_metadata.clone()).to_json(),
    });
    if m.role == Role::Ai {
        let calls = m
            .tool_calls
            .iter()
            .map(|c| json!([c.name, c.args.to_json(), c.id]));
        d["tool_calls"] = Json::from(calls.collect::<Vec<_>>());
    }
    if m.role == Role::Tool {
        d["name"] = json!(m.name);
        d["tool_call_id"] = json!(m.tool_call_id);
        d["artifact"] = m.artifact.to_json();
    }
    d
}

/// The fixture's messages with uuids by their kind.
fn shaped(messages: &Json) -> Json {
    let mut messages = messages.clone();
    for m in messages.as_array_mut().unwrap() {
        let shaped = id(&m["id"].as_str().map(str::to_owned));
        m["id"] = shaped;
    }
    messages
}

async fn check(scenario: &str) {
    let fx = fixture();
    let expected = &fx["agents"][scenario];
    let model = FakeChatModel::new(answers(scenario));
    let mut b = create_agent(
        model.clone(),
        vec![
            tool("lookup", "Look a customer up."),
            tool("search", "Search the web."),
        ],
    )
    .system_prompt("Be brief.")
    .checkpointer(Arc::new(MemorySaver::new()));
    for m in middleware(scenario) {
        b = b.middleware_arc(m);
    }
    let agent = b.compile().unwrap();
    assert_eq!(
        agent.get_graph().draw_mermaid(),
        expected["mermaid"].as_str().unwrap(),
        "{scenario}"
    );
    let config = RunConfig::thread(scenario);
    let human = if scenario == "pii_custom" {
        "Ticket T-123 for corp, T-45 and T-678."
    } else {
        "I am jo@corp.com, card 4532-0151-1283-0366, from 192.168.0.1 (MAC 00:1A:2B:3C:4D:5E)."
    };
    let input = MessagesState::input(Message::human(human).with_id("h-1"));
    let result = agent.invoke(input, &config).await;
    match expected["error"].as_str() {
        Some(error) => {
            // Python's `PIIDetectionError: <message>`; stategraph's node error names both.
            let err = result.unwrap_err().to_string();
            let (kind, message) = error.split_once(": ").unwrap();
            assert!(
                err.contains(kind) && err.contains(message),
                "{scenario}: {err}"
            );
        }
        None => {
            let _ = result.unwrap();
        }
    }
    let history = agent
        .get_state_history(&config, &Default::default())
        .await
        .unwrap();
    let history: Vec<Json> = history
        .iter()
        .rev()
        .map(|s| {
            let messages = AgentState::from_values(s.values.clone()).unwrap();
            let messages: Vec<Json> = messages.messages().iter().map(dump).collect();
            json!([s.metadata.as_ref().and_then(|m| m.step), s.next, messages])
        })
        .collect();
    let want: Vec<Json> = expected["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| json!([c[0], c[1], shaped(&c[2])]))
        .collect();
    assert_eq!(
        Json::from(history),
        Json::from(want),
        "{scenario}: checkpoints"
    );
    let state = agent.get_state(&config).await.unwrap();
    assert_eq!(
        Json::from(state.next.clone()),
        expected["next"],
        "{scenario}"
    );
    let stored = AgentState::from_values(state.values.clone()).unwrap();
    let got: Vec<Json> = stored.messages().iter().map(dump).collect();
    assert_eq!(
        Json::from(got),
        shaped(&expected["messages"]),
        "{scenario}: stored"
    );
    let requests: Vec<Json> = model
        .calls()
        .iter()
        .map(|c| Json::from(c.iter().map(dump).collect::<Vec<_>>()))
        .collect();
    let want: Vec<Json> = expected["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(shaped)
        .collect();
    assert_eq!(
        Json::from(requests),
        Json::from(want),
        "{scenario}: requests"
    );
}

#[tokio::test]
async fn pii_on_input_output_and_tool_results_stores_pythons_thread() {
    check("pii").await;
}

#[tokio::test]
async fn pii_with_a_regex_and_a_function_detector() {
    check("pii_custom").await;
}

#[tokio::test]
async fn pii_block_fails_before_the_model_as_python() {
    check("pii_block").await;
}

#[tokio::test]
async fn context_editing_keeps_recent_and_excluded_tool_results() {
    check("ctx").await;
}

#[tokio::test]
async fn context_editing_clears_inputs_until_enough_tokens_are_cleared() {
    check("ctx_inputs").await;
}

#[tokio::test]
async fn context_editing_defaults_leave_a_short_conversation_alone() {
    check("ctx_default").await;
}
