//! Threads shared with Python on the real local model server (see tests/models_common):
//! a thread written by a Rust agent on `ChatOpenAI` is read by Python LangGraph with
//! LangChain's classes, its messages the same shape, field by field, as those Python's
//! `ChatOpenAI` stores in a twin thread (tests/models_interop/agent.py); and the Python
//! thread is continued by the Rust agent. The same for `ChatAnthropic` against Python's
//! `ChatAnthropic`, both on the local Anthropic-speaking proxy. The streamed chunks of two
//! parallel calls carry the calls Python's `AIMessageChunk` reads from them. Needs `STATEGRAPH_INTEROP=1`
//! and a `STATEGRAPH_PYTHON` with the pinned LangGraph, langchain-openai and
//! langchain-anthropic.

#![cfg(all(feature = "models", feature = "sqlite"))]
#![allow(clippy::unwrap_used)]

#[path = "models_common/mod.rs"]
mod common;

use std::path::Path;
use std::sync::Arc;

use serde_json::Value as Json;
use stategraph::models::{ChatAnthropic, ChatOpenAI, ToolSpec};
use stategraph::prebuilt::{create_react_agent, ChatModel, MessagesState, Tool, ToolError};
use stategraph::sqlite::SqliteSaver;
use stategraph::{Message, RunConfig, State};

fn python() -> Option<std::ffi::OsString> {
    if std::env::var("STATEGRAPH_INTEROP").map_or(true, |v| v.is_empty() || v == "0") {
        println!("note: skipping: STATEGRAPH_INTEROP is not set");
        return None;
    }
    Some(std::env::var_os("STATEGRAPH_PYTHON").expect("STATEGRAPH_INTEROP needs STATEGRAPH_PYTHON"))
}

/// Runs agent.py; its stdout's last line as JSON.
fn agent_py(
    python: &std::ffi::OsStr,
    db: &Path,
    server: &common::Server,
    action: &str,
    thread: &str,
) -> Json {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models_interop/agent.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(db)
        .args([&server.base_url, &server.model, action, thread])
        .env("PROVIDER", &server.provider)
        .env("LANGSMITH_TRACING", "false")
        .env("LANGCHAIN_TRACING_V2", "false")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

#[derive(serde::Deserialize)]
struct Shout {
    word: String,
}

/// The server's provider's client, as agent.py makes its twin.
fn model(server: &common::Server, max_tokens: u32) -> Arc<dyn ChatModel> {
    if server.provider == "anthropic" {
        let m = ChatAnthropic::new(&server.model)
            .base_url(&server.base_url)
            .api_key("none");
        return Arc::new(m.temperature(0.0).max_tokens(max_tokens));
    }
    let m = ChatOpenAI::new(&server.model).base_url(&server.base_url);
    Arc::new(m.temperature(0.0).max_tokens(max_tokens).seed(7))
}

fn agent(
    server: &common::Server,
    saver: Arc<SqliteSaver>,
) -> stategraph::CompiledGraph<MessagesState> {
    let m = model(server, 256);
    let shout = Tool::new("shout", "Shouts a word.", |a: Shout| async move {
        Ok::<_, ToolError>(a.word.to_uppercase())
    })
    .arg("word", "string");
    create_react_agent(m, vec![shout])
        .checkpointer(saver)
        .compile()
        .unwrap()
}

#[tokio::test]
async fn a_plain_answer_is_stored_as_chatopenai_stores_it() {
    if let (Some(python), Some(server)) = (python(), common::openai()) {
        plain_answer(python, server).await;
    }
}

#[tokio::test]
async fn a_plain_answer_is_stored_as_chatanthropic_stores_it() {
    if let (Some(python), Some(server)) = (python(), common::anthropic()) {
        plain_answer(python, server).await;
    }
}

#[tokio::test]
async fn threads_on_the_real_model_are_shared_with_python_both_ways() {
    if let (Some(python), Some(server)) = (python(), common::openai()) {
        shared_both_ways(python, server).await;
    }
}

#[tokio::test]
async fn anthropic_threads_are_shared_with_python_both_ways() {
    if let (Some(python), Some(server)) = (python(), common::anthropic()) {
        shared_both_ways(python, server).await;
    }
}

/// One answer without tools, in Rust and in Python: the same shape; Rust continues
/// Python's thread.
async fn plain_answer(python: std::ffi::OsString, server: common::Server) {
    let dir = common::temp_dir(&format!("interop-plain-{}", server.provider));
    let db = dir.join("shared.sqlite");
    let saver = Arc::new(SqliteSaver::open(&db).unwrap());
    let m = model(&server, 24);
    let rust = create_react_agent(m, vec![])
        .checkpointer(saver)
        .compile()
        .unwrap();
    let first = rust
        .invoke(
            MessagesState::input(Message::human("Say hello.")),
            &RunConfig::thread("rust"),
        )
        .await
        .unwrap();
    assert_eq!(first.done().unwrap().messages.len(), 2);
    let from_rust = agent_py(&python, &db, &server, "read", "rust");
    let from_python = tokio::task::spawn_blocking({
        let (python, db, server) = (python.clone(), db.clone(), server.clone());
        move || agent_py(&python, &db, &server, "plain", "python")
    })
    .await
    .unwrap();
    assert_eq!(from_rust[1]["class"], "AIMessage");
    assert_eq!(
        from_rust, from_python,
        "the Rust answer has the shape of the Python client's ({})",
        server.provider
    );
    // Rust continues the Python thread.
    let more = rust
        .invoke(
            MessagesState::input(Message::human("Again.")),
            &RunConfig::thread("python"),
        )
        .await
        .unwrap();
    assert_eq!(more.messages.len(), 4);
    assert!(
        more.messages[1].usage_metadata.is_some(),
        "Python's answer read back whole"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// An agent with a tool, in Rust and in Python: Python reads the Rust thread as its own
/// client writes one; Rust continues Python's thread, and Python reads the result.
async fn shared_both_ways(python: std::ffi::OsString, server: common::Server) {
    let dir = common::temp_dir(&format!("interop-{}", server.provider));
    let db = dir.join("shared.sqlite");
    let saver = Arc::new(SqliteSaver::open(&db).unwrap());
    let rust = agent(&server, saver.clone());
    let done = rust
        .invoke(
            MessagesState::input(Message::human("Shout hello.")),
            &RunConfig::thread("rust"),
        )
        .await
        .unwrap();
    assert_eq!(done.messages.len(), 4, "{:?}", done.messages);

    // Python reads the Rust thread with LangChain's classes, and writes its own.
    let from_rust = agent_py(&python, &db, &server, "read", "rust");
    let from_python = tokio::task::spawn_blocking({
        let (python, db, server) = (python.clone(), db.clone(), server.clone());
        move || agent_py(&python, &db, &server, "write", "python")
    })
    .await
    .unwrap();
    let classes: Vec<&str> = from_rust
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["class"].as_str().unwrap())
        .collect();
    assert_eq!(
        classes,
        ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    );
    // Field by field (keys in order, value types), each message as the Python client
    // (ChatOpenAI, ChatAnthropic) stores it.
    assert_eq!(
        from_rust, from_python,
        "the Rust thread's messages have the shape of the Python client's ({})",
        server.provider
    );

    // Rust continues the Python thread.
    let config = RunConfig::thread("python");
    let state = rust.get_state(&config).await.unwrap();
    let before = MessagesState::from_values(&state.values).unwrap().messages;
    assert_eq!(before.len(), 4);
    assert_eq!(before[1].tool_calls[0].name, "shout");
    assert!(before[1].usage_metadata.is_some());
    let more = rust
        .invoke(
            MessagesState::input(Message::human("Again, louder.")),
            &config,
        )
        .await
        .unwrap();
    // The tiny model answers a conversation holding a tool result in text ("Done.").
    assert_eq!(more.messages.len(), 6, "{:?}", more.messages);
    assert_eq!(more.messages[5].role, stategraph::Role::Ai);
    assert_eq!(&more.messages[..4], &before[..]);
    // And Python reads the continued thread.
    let continued = agent_py(&python, &db, &server, "read", "python");
    assert_eq!(continued.as_array().unwrap().len(), 6);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn streamed_chunks_carry_the_calls_langchain_reads_from_them() {
    let (Some(python), Some(server)) = (python(), common::openai()) else {
        return;
    };
    let dir = common::temp_dir("interop-chunks");
    let py = agent_py(&python, &dir.join("unused.sqlite"), &server, "chunks", "-");
    let tools: Vec<ToolSpec> = py["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| ToolSpec::from_openai_json(t).unwrap())
        .collect();
    let m = ChatOpenAI::new(&server.model)
        .base_url(&server.base_url)
        .temperature(0.0)
        .max_tokens(256)
        .seed(7)
        .bind_tool_specs(tools);
    let prompt = [Message::human(py["prompt"].as_str().unwrap())];
    let mut ours = Vec::new();
    m.stream_to(&prompt, |chunk| {
        let frags = chunk.extra.get("tool_call_chunks").map(stategraph::Value::to_json);
        let Some(frags) = frags.filter(|f| f != &serde_json::json!([])) else {
            return;
        };
        let frags: Vec<Json> = frags
            .as_array()
            .unwrap()
            .iter()
            .map(|f| serde_json::json!([f["name"], f["args"], f["index"]]))
            .collect();
        let calls: Vec<Json> = chunk
            .tool_calls
            .iter()
            .map(|c| serde_json::json!([c.name, c.args.to_json()]))
            .collect();
        let invalid: Vec<Json> = chunk
            .invalid_tool_calls
            .iter()
            .map(|c| {
                let c = c.to_json();
                serde_json::json!([c["name"], c["args"], c["error"]])
            })
            .collect();
        ours.push(serde_json::json!({"tool_call_chunks": frags, "tool_calls": calls, "invalid_tool_calls": invalid}));
    })
    .await
    .unwrap();
    let theirs = py["chunks"].as_array().unwrap();
    assert!(theirs.len() > 4, "{theirs:?}");
    assert_eq!(ours.len(), theirs.len());
    for (n, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert_eq!(a, b, "chunk {n}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
