//! The Agent Server streams a real model's words: an agent on `ChatOpenAI` against the
//! local llama.cpp server (scripts/model-servers.sh, `STATEGRAPH_OPENAI_BASE_URL` /
//! `_MODEL`; skipped without them unless `STATEGRAPH_REQUIRE_MODELS=1`), driven by the
//! official Python SDK with stream mode `messages-tuple`: the chunks the SDK receives
//! rebuild the messages the thread stores.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use stategraph::checkpoint::CheckpointSaver;
use stategraph::models::ChatOpenAI;
use stategraph::prebuilt::{create_react_agent, MessagesState, Tool, ToolError};
use stategraph::CompiledGraph;
use stategraph_server::Server;

fn server_env() -> Option<(String, String)> {
    let get = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    match (
        get("STATEGRAPH_OPENAI_BASE_URL"),
        get("STATEGRAPH_OPENAI_MODEL"),
    ) {
        (Some(url), Some(model)) => Some((url, model)),
        _ => {
            let required = std::env::var("STATEGRAPH_REQUIRE_MODELS").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "STATEGRAPH_REQUIRE_MODELS=1 but no model server is set"
            );
            println!("note: skipping: STATEGRAPH_OPENAI_BASE_URL is not set");
            None
        }
    }
}

#[derive(serde::Deserialize)]
struct Shout {
    word: String,
}

fn real_agent(
    url: &str,
    model: &str,
    saver: Arc<dyn CheckpointSaver>,
) -> stategraph::Result<CompiledGraph<MessagesState>> {
    let shout = Tool::new("shout", "Shouts a word.", |a: Shout| async move {
        Ok::<_, ToolError>(a.word.to_uppercase())
    })
    .arg("word", "string");
    let m = ChatOpenAI::new(model)
        .base_url(url)
        .temperature(0.0)
        .max_tokens(256);
    create_react_agent(m, vec![shout])
        .checkpointer(saver)
        .compile()
}

/// The text of the `agent` node's chunks with message id `id`, joined.
fn streamed_text(events: &[Value], id: &str) -> String {
    events
        .iter()
        .filter(|e| e[1]["langgraph_node"] == "agent" && e[0]["id"] == id)
        .map(|e| e[0]["content"].as_str().unwrap_or(""))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_receives_a_real_models_chunks_as_messages_tuple_events() {
    let Some((url, model)) = server_env() else {
        return;
    };
    let Some(python) = support::python() else {
        return;
    };
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let server = Server::builder()
        .database_url(&db.url)
        .workers(1)
        .graph("real", move |saver| real_agent(&url, &model, saver))
        .build()
        .await
        .expect("build the server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let serving = tokio::spawn(server.serve(listener, shutdown));

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/real_model.py");
    let out = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(format!("http://{addr}"))
        .output()
        .await
        .expect("run the SDK script");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the SDK script failed: {stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let events = seen["events"].as_array().unwrap();
    let stored = seen["stored"].as_array().unwrap();

    // human, the model's tool call, the tool's answer, the model's text.
    let types: Vec<&str> = stored.iter().map(|m| m["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["human", "ai", "tool", "ai"], "{stored:?}");
    // Each of the model's answers came in chunks, under the id it is stored with.
    for answer in [&stored[1], &stored[3]] {
        let id = answer["id"].as_str().unwrap();
        let chunks = events.iter().filter(|e| e[0]["id"] == id).count();
        assert!(
            chunks > 1,
            "the answer {id} was streamed in pieces: {events:?}"
        );
        assert_eq!(
            streamed_text(events, id),
            answer["content"].as_str().unwrap()
        );
    }
    // The tool call's name and arguments arrived as chunks too.
    let call_chunks: Vec<&Value> = events
        .iter()
        .flat_map(|e| e[0]["tool_call_chunks"].as_array().into_iter().flatten())
        .collect();
    let name = call_chunks.iter().find_map(|c| c["name"].as_str());
    assert_eq!(name, Some("shout"), "{call_chunks:?}");
    let args: String = call_chunks
        .iter()
        .filter_map(|c| c["args"].as_str())
        .collect();
    let args: Value = serde_json::from_str(&args).unwrap();
    assert_eq!(args, stored[1]["tool_calls"][0]["args"]);
    // The tool node's answer is one message event, as Python's server sends it.
    assert!(events.iter().any(|e| e[1]["langgraph_node"] == "tools"));

    stop.send(true).unwrap();
    serving.await.unwrap().unwrap();
}
