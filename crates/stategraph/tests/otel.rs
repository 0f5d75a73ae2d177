//! Traces over OTLP (feature `otel`): one agent run (`create_react_agent` with a scripted
//! model that reports usage and calls a tool) is exported by `stategraph::otel` to a real
//! OTLP receiver (Arize Phoenix, started by scripts/otlp-receiver.sh) and read back through
//! the receiver's REST API: span names, GenAI attributes, parent links (run > task > chat /
//! execute_tool), the thread id as `gen_ai.conversation.id`, content only when opted in.
//!
//! Needs `STATEGRAPH_TEST_OTLP_URL` (the receiver's base URL); skipped without it, unless
//! `STATEGRAPH_REQUIRE_OTLP=1`, which makes its absence a failure. Both tests share one
//! process-wide subscriber, so they run in one test function, one after the other.

#![cfg(feature = "otel")]
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value as Json;
use stategraph::prebuilt::{create_react_agent, FakeChatModel, MessagesState, Tool};
use stategraph::{map, Message, RunConfig, ToolCall};

#[derive(serde::Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

/// The receiver's base URL, or `None` to skip.
fn receiver() -> Option<String> {
    match std::env::var("STATEGRAPH_TEST_OTLP_URL") {
        Ok(url) if !url.is_empty() => Some(url.trim_end_matches('/').to_owned()),
        _ => {
            let required =
                std::env::var("STATEGRAPH_REQUIRE_OTLP").is_ok_and(|v| !v.is_empty() && v != "0");
            assert!(
                !required,
                "STATEGRAPH_REQUIRE_OTLP is set but STATEGRAPH_TEST_OTLP_URL is not"
            );
            eprintln!("STATEGRAPH_TEST_OTLP_URL not set: the OTLP tests are skipped");
            None
        }
    }
}

/// A model answer with what a provider's client stores beside the content.
fn answer(text: &str, finish: &str, input: i64, output: i64) -> Message {
    let mut m = Message::ai(text);
    m.usage_metadata = Some(map! {
        "input_tokens" => input,
        "output_tokens" => output,
        "total_tokens" => input + output,
    });
    m.response_metadata = match map! {
        "model_name" => "gpt-4o-mini-2024-07-18",
        "model_provider" => "openai",
        "finish_reason" => finish,
    } {
        stategraph::Value::Map(m) => m,
        _ => unreachable!(),
    };
    m
}

/// Runs one agent turn on a fresh thread and returns the thread id.
async fn run_agent(secret: &str) -> String {
    let add = Tool::new(
        "add",
        "Add two integers.",
        |x: Add| async move { Ok(x.a + x.b) },
    )
    .arg("a", "integer")
    .arg("b", "integer");
    let model = FakeChatModel::new([
        answer("let me add", "tool_calls", 12, 7).with_tool_calls(vec![ToolCall::new(
            "add",
            map! {"a" => 1, "b" => 2},
            "call-1",
        )]),
        answer("1 + 2 = 3", "stop", 30, 9),
    ]);
    let agent = create_react_agent(model, vec![add])
        .name("calculator")
        .checkpointer(std::sync::Arc::new(
            stategraph::checkpoint::MemorySaver::new(),
        ))
        .compile()
        .unwrap();
    let thread = uuid::Uuid::new_v4().to_string();
    let config = RunConfig::thread(thread.as_str()).with_metadata("run_id", "run-otel-1");
    let out = agent
        .invoke(MessagesState::input(Message::human(secret)), &config)
        .await
        .unwrap();
    assert_eq!(out.state.messages.last().unwrap().text(), "1 + 2 = 3");
    thread
}

/// The spans of the trace whose run span has `gen_ai.conversation.id == thread`, waiting
/// for the receiver to store them.
async fn spans_of(url: &str, thread: &str, want: usize) -> Vec<Json> {
    let client = reqwest::Client::new();
    for _ in 0..60 {
        let body: Json = client
            .get(format!("{url}/v1/projects/default/spans?limit=1000"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let all = body["data"].as_array().cloned().unwrap_or_default();
        let trace = all
            .iter()
            .find(|s| {
                s["attributes"]["gen_ai.conversation.id"] == thread && s["parent_id"].is_null()
            })
            .map(|s| s["context"]["trace_id"].clone());
        if let Some(trace) = trace {
            let spans: Vec<Json> = all
                .into_iter()
                .filter(|s| s["context"]["trace_id"] == trace)
                .collect();
            if spans.len() >= want {
                return spans;
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("the receiver did not get the spans of thread {thread}");
}

fn by_name<'a>(spans: &'a [Json], name: &str) -> Vec<&'a Json> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

fn one<'a>(spans: &'a [Json], name: &str) -> &'a Json {
    let found = by_name(spans, name);
    assert_eq!(found.len(), 1, "one span {name:?} in {spans:#?}");
    found[0]
}

fn id(span: &Json) -> &Json {
    &span["context"]["span_id"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_arrives_at_a_real_otlp_receiver() {
    let Some(url) = receiver() else { return };
    let guard = stategraph::otel::Otel::new()
        .endpoint(&url)
        .service_name("stategraph-otel-test")
        .install()
        .unwrap();

    content_off(&url, &guard).await;
    content_on(&url, &guard).await;
    failures(&url, &guard).await;
    drop(guard);
}

/// Content is off by default: names, attributes, parent links, no message text.
async fn content_off(url: &str, guard: &stategraph::otel::OtelGuard) {
    let thread = run_agent("what is 1 + 2? (secret-123)").await;
    guard.flush().unwrap();
    // run, the input task, agent task x2, tools task, chat x2, execute_tool.
    let spans = spans_of(url, &thread, 8).await;
    let names: HashMap<&str, usize> = spans.iter().fold(HashMap::new(), |mut m, s| {
        *m.entry(s["name"].as_str().unwrap()).or_default() += 1;
        m
    });
    assert_eq!(
        names,
        HashMap::from([
            ("invoke_agent calculator", 1),
            ("task __start__", 1),
            ("task agent", 2),
            ("task tools", 1),
            ("chat gpt-4o-mini-2024-07-18", 2),
            ("execute_tool add", 1),
        ]),
        "{spans:#?}"
    );

    let run = one(&spans, "invoke_agent calculator");
    assert!(run["parent_id"].is_null());
    // Every span of the trace hangs off the run (no stray span of the set-up).
    let ids: Vec<&Json> = spans.iter().map(id).collect();
    for s in &spans {
        assert!(
            s["parent_id"].is_null() || ids.contains(&&s["parent_id"]),
            "{s:#?}"
        );
    }
    let a = &run["attributes"];
    assert_eq!(a["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(a["gen_ai.agent.name"], "calculator");
    assert_eq!(a["gen_ai.conversation.id"], thread.as_str());
    assert_eq!(a["stategraph.run.id"], "run-otel-1");
    assert_eq!(run["status_code"], "UNSET");

    tasks_and_calls(&spans, &thread);
    no_stray_span(url).await;
    let dump = serde_json::to_string(&spans).unwrap();
    assert!(!dump.contains("secret-123"), "content leaked: {dump}");
}

/// Tasks under the run, model and tool calls under their tasks, with their attributes.
fn tasks_and_calls(spans: &[Json], thread: &str) {
    let spans = spans.to_vec();
    let run = one(&spans, "invoke_agent calculator");
    // Tasks: children of the run, with node, step, attempt, task and checkpoint ids.
    let tasks = [
        by_name(&spans, "task __start__"),
        by_name(&spans, "task agent"),
        by_name(&spans, "task tools"),
    ]
    .concat();
    let mut steps = Vec::new();
    for t in &tasks {
        assert_eq!(&t["parent_id"], id(run), "{t:#?}");
        let a = &t["attributes"];
        assert_eq!(a["stategraph.attempt"], 1);
        assert_eq!(a["gen_ai.conversation.id"], thread);
        assert_eq!(a["stategraph.task.id"].as_str().unwrap().len(), 36);
        assert_eq!(a["stategraph.checkpoint.id"].as_str().unwrap().len(), 36);
        steps.push((
            a["stategraph.node"].as_str().unwrap(),
            a["stategraph.step"].as_i64().unwrap(),
        ));
    }
    steps.sort_by_key(|s| s.1);
    assert_eq!(
        steps,
        [("__start__", 0), ("agent", 1), ("tools", 2), ("agent", 3)]
    );

    // Model calls: children of the agent tasks, usage and finish reason from the answers.
    let chats = by_name(&spans, "chat gpt-4o-mini-2024-07-18");
    let agent_tasks: Vec<&Json> = by_name(&spans, "task agent").into_iter().map(id).collect();
    let mut usage = Vec::new();
    for c in &chats {
        assert!(agent_tasks.contains(&&c["parent_id"]), "{c:#?}");
        let a = &c["attributes"];
        assert_eq!(a["gen_ai.operation.name"], "chat");
        assert_eq!(a["gen_ai.provider.name"], "openai");
        assert_eq!(a["gen_ai.request.model"], "gpt-4o-mini-2024-07-18");
        assert_eq!(a["gen_ai.response.model"], "gpt-4o-mini-2024-07-18");
        assert_eq!(a["gen_ai.conversation.id"], thread);
        assert!(
            a.get("gen_ai.input.messages").is_none(),
            "content off: {c:#?}"
        );
        assert!(
            a.get("gen_ai.output.messages").is_none(),
            "content off: {c:#?}"
        );
        usage.push((
            a["gen_ai.usage.input_tokens"].as_i64().unwrap(),
            a["gen_ai.usage.output_tokens"].as_i64().unwrap(),
            a["gen_ai.response.finish_reasons"].clone(),
        ));
    }
    usage.sort_by_key(|u| u.0);
    assert_eq!(
        usage,
        [
            (12, 7, serde_json::json!(["tool_calls"])),
            (30, 9, serde_json::json!(["stop"]))
        ]
    );

    // The tool call: a child of the tools task.
    let tool = one(&spans, "execute_tool add");
    assert_eq!(&tool["parent_id"], id(by_name(&spans, "task tools")[0]));
    let a = &tool["attributes"];
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert_eq!(a["gen_ai.tool.name"], "add");
    assert_eq!(a["gen_ai.tool.call.id"], "call-1");
    assert!(a.get("gen_ai.tool.call.arguments").is_none());
    assert!(a.get("gen_ai.tool.call.result").is_none());
}

/// No stray span: every span of this crate names its operation or its node.
async fn no_stray_span(url: &str) {
    let all: Json = reqwest::get(format!("{url}/v1/projects/default/spans?limit=1000"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for s in all["data"].as_array().unwrap() {
        let a = &s["attributes"];
        if a["code.module.name"] == "stategraph::spans" {
            assert!(
                a.get("gen_ai.operation.name").is_some() || a.get("stategraph.node").is_some(),
                "a span without its attributes: {s:#?}"
            );
        }
    }
}

/// Opted in: the conversation and the tool's arguments and result are recorded.
async fn content_on(url: &str, guard: &stategraph::otel::OtelGuard) {
    stategraph::otel::set_capture_content(true);
    let thread = run_agent("what is 1 + 2? (secret-456)").await;
    stategraph::otel::set_capture_content(false);
    guard.flush().unwrap();
    let spans = spans_of(url, &thread, 8).await;
    let chats = by_name(&spans, "chat gpt-4o-mini-2024-07-18");
    let first = chats
        .iter()
        .find(|c| c["attributes"]["gen_ai.usage.input_tokens"] == 12)
        .unwrap();
    let input: Json = serde_json::from_str(
        first["attributes"]["gen_ai.input.messages"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        input,
        serde_json::json!([{"role": "user", "parts": [
            {"type": "text", "content": "what is 1 + 2? (secret-456)"}
        ]}])
    );
    let output: Json = serde_json::from_str(
        first["attributes"]["gen_ai.output.messages"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        output[0]["parts"][1],
        serde_json::json!({"type": "tool_call", "id": "call-1", "name": "add",
            "arguments": {"a": 1, "b": 2}})
    );
    let tool = one(&spans, "execute_tool add");
    assert_eq!(
        tool["attributes"]["gen_ai.tool.call.arguments"],
        r#"{"a": 1, "b": 2}"#
    );
    assert_eq!(tool["attributes"]["gen_ai.tool.call.result"], "3");
}

/// A failing tool fails its span, its task and the run, each with the error's type.
async fn failures(url: &str, guard: &stategraph::otel::OtelGuard) {
    let boom = Tool::new("boom", "Fails.", |_: stategraph::Value| async move {
        Err::<String, _>(stategraph::prebuilt::ToolError::named(
            "ValueError",
            "it broke",
        ))
    })
    .arg("x", "string");
    let model = FakeChatModel::new([answer("", "tool_calls", 1, 1)
        .with_tool_calls(vec![ToolCall::new("boom", map! {"x" => "y"}, "call-9")])]);
    let agent = create_react_agent(model, vec![boom]).compile().unwrap();
    let thread = uuid::Uuid::new_v4().to_string();
    let failed = agent
        .invoke(
            MessagesState::input(Message::human("go")),
            &RunConfig::thread(thread.as_str()),
        )
        .await;
    assert!(failed.is_err());
    guard.flush().unwrap();
    let spans = spans_of(url, &thread, 5).await;
    for name in ["execute_tool boom", "task tools", "invoke_agent agent"] {
        let span = one(&spans, name);
        assert_eq!(span["status_code"], "ERROR", "{span:#?}");
        assert!(span["status_message"]
            .as_str()
            .unwrap()
            .contains("it broke"));
    }
    assert_eq!(
        one(&spans, "execute_tool boom")["attributes"]["error.type"],
        "ValueError"
    );
    assert_eq!(
        one(&spans, "task tools")["attributes"]["error.type"],
        "ValueError"
    );
    assert_eq!(one(&spans, "task agent")["status_code"], "UNSET");
}
