//! `ChatOpenAI` against the real local OpenAI-compatible server (llama.cpp's, over a tiny
//! model; see tests/models_common for the variables): a plain call, streaming into the
//! `messages` mode, tool calls end to end through `create_react_agent` with a real tool,
//! structured output, the `model_call` example, a process killed mid-answer whose
//! thread then resumes with no half message stored, parallel tool calls (plain, streamed
//! and through the agent) and a named `tool_choice`.

#![cfg(all(feature = "models", feature = "sqlite"))]
#![allow(clippy::unwrap_used)]

#[path = "models_common/mod.rs"]
mod common;
#[path = "../examples/openai_agent.rs"]
#[allow(dead_code, unreachable_pub)]
mod openai_agent_example;

use std::sync::Arc;

use futures::StreamExt;
use serde_json::json;
use stategraph::models::{parse_structured, ChatOpenAI, ToolChoice, ToolSpec};
use stategraph::prebuilt::{create_react_agent, MessagesState, Tool, ToolError};
use stategraph::sqlite::SqliteSaver;
use stategraph::{Message, NoInput, Role, RunConfig, State, StreamMode, StreamPart};

fn model(server: &common::Server) -> ChatOpenAI {
    ChatOpenAI::new(&server.model)
        .base_url(&server.base_url)
        .temperature(0.0)
        .max_tokens(24)
        .seed(7)
}

/// The fields LangChain's `ChatOpenAI` stores on every answer.
fn assert_langchain_answer(m: &Message, streamed: bool) {
    assert_eq!(m.role, Role::Ai);
    let id = m.id.as_deref().unwrap();
    assert!(id.starts_with("lc_run--"), "{id}");
    assert_eq!(id.ends_with("-0"), !streamed, "{id}");
    let meta = stategraph::Value::Map(m.response_metadata.clone()).to_json();
    assert_eq!(meta["model_provider"], "openai");
    assert!(meta["model_name"].is_string(), "{meta}");
    let reason = meta["finish_reason"].as_str().unwrap();
    assert!(
        ["stop", "length", "tool_calls"].contains(&reason),
        "{reason}"
    );
    let usage = m.usage_metadata.as_ref().unwrap().to_json();
    let (i, o, t) = (
        usage["input_tokens"].as_i64().unwrap(),
        usage["output_tokens"].as_i64().unwrap(),
        usage["total_tokens"].as_i64().unwrap(),
    );
    assert!(i > 0 && o > 0, "{usage}");
    assert_eq!(i + o, t);
    if !streamed {
        assert_eq!(meta["token_usage"]["prompt_tokens"].as_i64(), Some(i));
        assert!(meta["id"].is_string(), "{meta}");
    }
}

#[tokio::test]
async fn a_call_answers_as_chatopenai_stores_it() {
    let Some(server) = common::openai() else {
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
    assert!(m.content.as_str().is_some(), "a string content");
    let streamed = model(&server)
        .call(&[Message::human("Say hello.")], true)
        .await
        .unwrap();
    assert_langchain_answer(&streamed, true);
}

#[tokio::test]
async fn the_messages_mode_receives_the_answer_as_it_streams() {
    let Some(server) = common::openai() else {
        return;
    };
    let dir = common::temp_dir("stream");
    let saver = Arc::new(SqliteSaver::open(dir.join("t.sqlite")).unwrap());
    let agent = create_react_agent(model(&server), vec![])
        .checkpointer(saver)
        .compile()
        .unwrap();
    let config = RunConfig::thread("stream");
    let mut parts = agent.stream_typed(
        MessagesState::input(Message::human("Count to five.")),
        &config,
        StreamMode::Messages,
    );
    let mut chunks = Vec::new();
    while let Some(part) = parts.next().await {
        if let StreamPart::Messages {
            chunk, metadata, ..
        } = part.unwrap()
        {
            assert_eq!(metadata.langgraph_node, "agent");
            chunks.push(chunk);
        }
    }
    let state = agent.get_state(&config).await.unwrap();
    let stored = MessagesState::from_values(&state.values).unwrap().messages;
    let answer = &stored[1];
    assert_langchain_answer(answer, true);
    assert!(chunks.len() > 2, "several chunks: {chunks:?}");
    assert!(
        chunks.iter().all(|c| c.id == answer.id),
        "the chunks carry the stored id"
    );
    let joined: String = chunks.iter().map(Message::text).collect();
    assert_eq!(joined, answer.text(), "the chunks make the stored answer");
    let _ = std::fs::remove_dir_all(dir);
}

#[derive(serde::Deserialize)]
struct Shout {
    word: String,
}

fn shout_tool() -> Tool {
    Tool::new("shout", "Shouts a word.", |a: Shout| async move { Ok::<_, ToolError>(a.word.to_uppercase()) })
        .with_schema(json!({"type": "object", "properties": {"word": {"type": "string", "maxLength": 12}}, "required": ["word"]}))
}

#[tokio::test]
async fn a_tool_call_runs_end_to_end_through_the_agent() {
    let Some(server) = common::openai() else {
        return;
    };
    let dir = common::temp_dir("tools");
    let saver = Arc::new(SqliteSaver::open(dir.join("t.sqlite")).unwrap());
    for streamed in [false, true] {
        let agent = create_react_agent(
            model(&server).max_tokens(256).streaming(streamed),
            vec![shout_tool()],
        )
        .checkpointer(saver.clone())
        .compile()
        .unwrap();
        let config = RunConfig::thread(format!("tools-{streamed}"));
        let done = agent
            .invoke(
                MessagesState::input(Message::human("Shout hello.")),
                &config,
            )
            .await
            .unwrap()
            .done()
            .unwrap();
        let roles: Vec<Role> = done.messages.iter().map(|m| m.role.clone()).collect();
        assert_eq!(
            roles,
            [Role::Human, Role::Ai, Role::Tool, Role::Ai],
            "{:?}",
            done.messages
        );
        let call = &done.messages[1].tool_calls[0];
        assert_eq!(call.name, "shout");
        assert!(call.id.as_deref().is_some_and(|id| !id.is_empty()));
        let word = call
            .args
            .get("word")
            .and_then(stategraph::Value::as_str)
            .unwrap();
        assert_eq!(
            done.messages[2].text(),
            word.to_uppercase(),
            "the real tool ran on the model's arguments"
        );
        assert_eq!(done.messages[2].tool_call_id, call.id);
        assert_langchain_answer(&done.messages[1], streamed);
        assert_eq!(
            done.messages[1]
                .response_metadata
                .get("finish_reason")
                .and_then(stategraph::Value::as_str),
            Some("tool_calls")
        );
        assert_langchain_answer(&done.messages[3], streamed);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn structured_output_follows_the_json_schema() {
    let Some(server) = common::openai() else {
        return;
    };
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}, "ok": {"type": "boolean"}}, "required": ["n", "ok"]});
    let m = model(&server)
        .max_tokens(300)
        .with_structured_output("answer", schema);
    let answer = m
        .call(&[Message::human("Give a number.")], false)
        .await
        .unwrap();
    let doc = parse_structured(&answer).unwrap();
    assert!(doc["n"].is_i64(), "{doc}");
    assert!(doc["ok"].is_boolean(), "{doc}");
    assert_eq!(
        stategraph::Value::Map(answer.additional_kwargs.clone()).to_json()["parsed"],
        doc
    );
}

#[tokio::test]
async fn the_openai_agent_example_runs_its_tools_on_the_real_model() {
    let Some(server) = common::openai() else {
        return;
    };
    let dir = common::temp_dir("example");
    let m = ChatOpenAI::new(&server.model)
        .base_url(&server.base_url)
        .max_tokens(256);
    let mut out = Vec::new();
    let conversation = openai_agent_example::run(
        m,
        &dir.join("t.sqlite"),
        "calc",
        "What is 6 times 7?",
        &mut out,
    )
    .await
    .unwrap();
    let roles: Vec<Role> = conversation.iter().map(|m| m.role.clone()).collect();
    assert_eq!(
        roles,
        [Role::Human, Role::Ai, Role::Tool, Role::Ai],
        "{conversation:?}"
    );
    let call = &conversation[1].tool_calls[0];
    assert!(["add", "multiply"].contains(&call.name.as_str()));
    let num = |k: &str| {
        let v = call.args.get(k).unwrap();
        v.as_f64().or_else(|| v.as_i64().map(|i| i as f64))
    };
    let (a, b) = (num("a"), num("b"));
    let want = if call.name == "add" {
        a.unwrap() + b.unwrap()
    } else {
        a.unwrap() * b.unwrap()
    };
    assert_eq!(
        conversation[2].text().parse::<f64>().unwrap(),
        want,
        "the tool's answer"
    );
    let printed = String::from_utf8(out).unwrap();
    assert!(
        printed.contains(&format!("called {}", call.name)),
        "{printed}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The example `name` as `cargo test` builds it, beside the test binaries; `None` (a
/// skip) when it was not built, which fails under `STATEGRAPH_REQUIRE_MODELS=1`.
fn built_example(name: &str) -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().unwrap();
    let example = exe.parent()?.parent()?.join("examples").join(name);
    if example.exists() {
        return Some(example);
    }
    assert!(
        std::env::var("STATEGRAPH_REQUIRE_MODELS").map_or(true, |v| v != "1"),
        "{example:?} was not built"
    );
    println!("note: skipping: {example:?} is not built");
    None
}

#[test]
fn the_model_call_example_prints_the_answer_as_json() {
    let Some(server) = common::openai() else {
        return;
    };
    let Some(example) = built_example("model_call") else {
        return;
    };
    let tools = common::temp_dir("model-call").join("tools.json");
    let spec = json!([{"type": "function", "function": {"name": "shout", "description": "Shouts.", "parameters": shout_tool().schema()}}]);
    std::fs::write(&tools, spec.to_string()).unwrap();
    for extra in [
        &[][..],
        &["--stream"][..],
        &["--tools", tools.to_str().unwrap()][..],
    ] {
        let out = std::process::Command::new(&example)
            .args([
                "--provider",
                "openai",
                "--base-url",
                &server.base_url,
                "--model",
                &server.model,
                "--max-tokens",
                "16",
            ])
            .args(extra)
            .arg("Say hi.")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        let last: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        let keys: Vec<&str> = last
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "content",
                "tool_calls",
                "usage_metadata",
                "response_metadata"
            ]
        );
        assert_eq!(last["response_metadata"]["model_provider"], "openai");
        assert!(last["usage_metadata"]["total_tokens"].as_i64().unwrap() > 0);
    }
    let bad = std::process::Command::new(&example)
        .args([
            "--provider",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "hi",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("Connection"));
}

/// The child of [`a_run_killed_mid_answer_resumes_with_no_half_message`]: runs the agent
/// on the SQLite file through a relay that stalls the answer after its first events,
/// prints `CHUNK` once a chunk arrived, and waits to be killed.
#[tokio::test]
async fn child_streams_until_killed() {
    let (Ok(db), Some(server)) = (
        std::env::var("STATEGRAPH_MODELS_CHILD_DB"),
        common::openai(),
    ) else {
        return;
    };
    let faults = common::Faults::start(
        vec![common::Fault::StallAfterEvents(3)],
        Some(common::host_port(&server.base_url)),
    )
    .await;
    let saver = Arc::new(SqliteSaver::open(&db).unwrap());
    let m = model(&server).base_url(faults.openai_url());
    let agent = create_react_agent(m, vec![])
        .checkpointer(saver)
        .compile()
        .unwrap();
    let mut parts = agent.stream_typed(
        MessagesState::input(Message::human("Tell a story.")),
        &RunConfig::thread("killed"),
        StreamMode::Messages,
    );
    while let Some(part) = parts.next().await {
        if let StreamPart::Messages { .. } = part.unwrap() {
            println!("CHUNK");
            use std::io::Write;
            std::io::stdout().flush().unwrap();
        }
    }
    panic!("the stalled stream ended");
}

#[tokio::test]
async fn a_run_killed_mid_answer_resumes_with_no_half_message() {
    let Some(server) = common::openai() else {
        return;
    };
    if std::env::var("STATEGRAPH_MODELS_CHILD_DB").is_ok() {
        return;
    }
    let dir = common::temp_dir("killed");
    let db = dir.join("t.sqlite");
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "child_streams_until_killed",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("STATEGRAPH_MODELS_CHILD_DB", &db)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines =
        tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(child.stdout.take().unwrap()));
    loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the child streamed a chunk before it ended");
        if line.contains("CHUNK") {
            break;
        }
    }
    child.kill().await.unwrap(); // SIGKILL, mid-answer: the relay holds the rest back
    let saver = Arc::new(SqliteSaver::open(&db).unwrap());
    let agent = create_react_agent(model(&server), vec![])
        .checkpointer(saver)
        .compile()
        .unwrap();
    let config = RunConfig::thread("killed");
    let state = agent.get_state(&config).await.unwrap();
    let stored = MessagesState::from_values(&state.values).unwrap().messages;
    assert_eq!(
        stored.len(),
        1,
        "only the human message survived the kill: {stored:?}"
    );
    assert_eq!(state.next, ["agent"]);
    let done = agent
        .invoke(NoInput, &config)
        .await
        .unwrap()
        .done()
        .unwrap();
    assert_eq!(done.messages.len(), 2);
    assert_langchain_answer(&done.messages[1], false);
    let _ = std::fs::remove_dir_all(dir);
}

/// The README's agent on a real model (`examples/real_agent.rs`) and its Python twin
/// (`examples/python/real_agent.py`, LangChain's `init_chat_model` and `ChatOpenAI`) print
/// the same conversation on the same server.
#[test]
fn the_real_agent_example_prints_what_its_python_twin_prints() {
    let Some(server) = common::openai() else {
        return;
    };
    let Some(example) = built_example("real_agent") else {
        return;
    };
    let run = |program: &std::ffi::OsStr, args: &[std::path::PathBuf]| {
        let out = std::process::Command::new(program)
            .args(args)
            .env("OPENAI_BASE_URL", &server.base_url)
            .env("OPENAI_API_KEY", "local")
            .env("MODEL", format!("openai:{}", server.model))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{program:?}: {stderr}");
        String::from_utf8(out.stdout).unwrap()
    };
    let rust = run(example.as_os_str(), &[]);
    assert!(
        rust.starts_with("human: What is the weather in Paris?\nai: "),
        "{rust}"
    );
    assert!(rust.contains("\ntool: It is sunny in "), "{rust}");
    if std::env::var("STATEGRAPH_INTEROP").is_ok_and(|v| v == "1") {
        let python = std::env::var_os("STATEGRAPH_PYTHON").expect("STATEGRAPH_PYTHON");
        let twin = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/python/real_agent.py");
        assert_eq!(run(&python, &[twin]), rust);
    }
}

#[derive(serde::Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

fn add_tool() -> Tool {
    Tool::new("add", "Adds two integers.", |x: Add| async move {
        Ok::<_, ToolError>(x.a.wrapping_add(x.b).to_string())
    })
    .with_schema(json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}))
}

/// The tiny model makes two calls in one answer when the prompt says "in parallel" (see
/// scripts/model-servers/make_tiny_model.py): of the tool whose name sorts first, then of
/// the one that sorts last; llama-server's grammar lets it (`parallel_tool_calls`).
const PARALLEL_PROMPT: &str = "Add 2 and 3 and shout hi: call both tools in parallel.";

fn tool_specs() -> Vec<ToolSpec> {
    [add_tool(), shout_tool()]
        .iter()
        .map(ToolSpec::from)
        .collect()
}

/// The `tool_call_chunks` of streamed chunks, joined by index: (index, id, name, args).
fn joined_fragments(chunks: &[Message]) -> Vec<(i64, String, String, String)> {
    let mut calls: Vec<(i64, String, String, String)> = Vec::new();
    for chunk in chunks {
        let Some(frags) = chunk.extra.get("tool_call_chunks") else {
            continue;
        };
        for f in frags.to_json().as_array().unwrap() {
            let index = f["index"].as_i64().unwrap();
            let pos = match calls.iter().position(|c| c.0 == index) {
                Some(p) => p,
                None => {
                    calls.push((index, String::new(), String::new(), String::new()));
                    calls.len() - 1
                }
            };
            let call = &mut calls[pos];
            call.1.push_str(f["id"].as_str().unwrap_or(""));
            call.2.push_str(f["name"].as_str().unwrap_or(""));
            call.3.push_str(f["args"].as_str().unwrap_or(""));
        }
    }
    calls
}

#[tokio::test]
async fn parallel_tool_calls_come_in_one_answer_plain_and_streamed() {
    let Some(server) = common::openai() else {
        return;
    };
    let m = model(&server)
        .max_tokens(256)
        .bind_tool_specs(tool_specs())
        .parallel_tool_calls(true);
    let prompt = [Message::human(PARALLEL_PROMPT)];
    let plain = m.call(&prompt, false).await.unwrap();
    assert_langchain_answer(&plain, false);
    let names: Vec<&str> = plain.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["add", "shout"], "{:?}", plain.tool_calls);
    let ids: Vec<&str> = plain
        .tool_calls
        .iter()
        .filter_map(|c| c.id.as_deref())
        .collect();
    assert!(
        ids.len() == 2 && ids[0] != ids[1] && !ids[0].is_empty(),
        "{ids:?}"
    );
    assert!(plain.tool_calls[0]
        .args
        .get("a")
        .and_then(stategraph::Value::as_i64)
        .is_some());
    assert_eq!(plain.tool_calls[1].args.to_json(), json!({"word": "hi"}));

    let mut chunks = Vec::new();
    let streamed = m
        .stream_to(&prompt, |c| chunks.push(c.clone()))
        .await
        .unwrap();
    assert_langchain_answer(&streamed, true);
    let calls = |m: &Message| -> Vec<(String, serde_json::Value)> {
        m.tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.args.to_json()))
            .collect()
    };
    assert_eq!(
        calls(&streamed),
        calls(&plain),
        "streamed and plain answers agree"
    );
    // The two calls' fragments arrive interleaved by index; joined, each is its call.
    let joined = joined_fragments(&chunks);
    assert_eq!(joined.len(), 2, "{joined:?}");
    let frag_count = chunks
        .iter()
        .filter(|c| {
            c.extra
                .get("tool_call_chunks")
                .is_some_and(|f| f.to_json() != json!([]))
        })
        .count();
    assert!(
        frag_count > 4,
        "the arguments came in pieces: {frag_count} chunks"
    );
    for ((index, id, name, args), call) in joined.iter().zip(&streamed.tool_calls) {
        assert_eq!(Some(id.as_str()), call.id.as_deref(), "call {index}");
        assert_eq!(name, &call.name, "call {index}");
        let args: serde_json::Value = serde_json::from_str(args).unwrap();
        assert_eq!(args, call.args.to_json(), "call {index}");
    }
}

#[tokio::test]
async fn parallel_calls_run_end_to_end_through_the_agent() {
    let Some(server) = common::openai() else {
        return;
    };
    let dir = common::temp_dir("parallel");
    let saver = Arc::new(SqliteSaver::open(dir.join("t.sqlite")).unwrap());
    for streamed in [false, true] {
        let agent = create_react_agent(
            model(&server).max_tokens(256).streaming(streamed),
            vec![add_tool(), shout_tool()],
        )
        .checkpointer(saver.clone())
        .compile()
        .unwrap();
        let config = RunConfig::thread(format!("parallel-{streamed}"));
        let done = agent
            .invoke(
                MessagesState::input(Message::human(PARALLEL_PROMPT)),
                &config,
            )
            .await
            .unwrap()
            .done()
            .unwrap();
        let roles: Vec<Role> = done.messages.iter().map(|m| m.role.clone()).collect();
        assert_eq!(
            roles,
            [Role::Human, Role::Ai, Role::Tool, Role::Tool, Role::Ai],
            "{:?}",
            done.messages
        );
        let calls = &done.messages[1].tool_calls;
        let add = &calls[0].args;
        let sum = add
            .get("a")
            .and_then(stategraph::Value::as_i64)
            .unwrap()
            .wrapping_add(add.get("b").and_then(stategraph::Value::as_i64).unwrap());
        assert_eq!(done.messages[2].text(), sum.to_string());
        assert_eq!(done.messages[3].text(), "HI");
        assert_eq!(done.messages[2].tool_call_id, calls[0].id);
        assert_eq!(done.messages[3].tool_call_id, calls[1].id);
        assert_eq!(done.messages[4].text(), "Done.");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_named_tool_choice_is_honoured_when_narrowed() {
    let Some(server) = common::openai() else {
        return;
    };
    let named = model(&server)
        .max_tokens(256)
        .bind_tool_specs(tool_specs())
        .tool_choice(ToolChoice::Tool("shout".into()));
    let prompt = [Message::human("Use a tool.")];
    // LangChain's wire (the named form beside both tools): llama-server reads the object
    // as `auto` (it reads `tool_choice` as a string), so the model calls the tool it
    // prefers, `add`.
    let ignored = named.call(&prompt, false).await.unwrap();
    assert_eq!(
        ignored.tool_calls[0].name, "add",
        "{:?}",
        ignored.tool_calls
    );
    // Narrowed: `shout` alone with `required`, which the server's grammar enforces.
    let narrowed = named.narrow_named_tool_choice(true);
    for stream in [false, true] {
        let m = narrowed.call(&prompt, stream).await.unwrap();
        let names: Vec<&str> = m.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["shout"], "stream {stream}");
        assert_eq!(m.tool_calls[0].args.to_json(), json!({"word": "hi"}));
    }
}
