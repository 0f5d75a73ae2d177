//! Run tags (`RunConfig::with_tags`, Python's `config["tags"]`) where Python shows them:
//! the metadata of a chat model's chunks in the `messages` stream and of a task's start in
//! the `tasks` stream, in subgraphs too. The expectation is what the pinned Python streams
//! for the same graph (`tags.py` beside this file, its output kept in `tags.json` and
//! compared again when Python is there).

use std::path::{Path, PathBuf};

use futures::StreamExt;
use serde_json::{json, Value as J};
use stategraph::channels::{BinaryOperatorAggregate, Channel};
use stategraph::checkpoint::MemorySaver;
use stategraph::{
    list, reducers, CompileOptions, CompiledGraph, DynState, Message, NodeContext, RunConfig,
    StateGraph, StreamMode, StreamOptions, Value, END, START,
};

use crate::support::python::python;

fn messages_channel() -> Box<dyn Channel> {
    Box::new(BinaryOperatorAggregate::new(
        reducers::add_messages(),
        Some(list![]),
    ))
}

fn chat_graph() -> StateGraph<DynState> {
    StateGraph::with_channels(vec![("messages".into(), messages_channel())])
}

fn said(messages: Vec<Message>) -> Vec<(String, Value)> {
    let list: Vec<Value> = messages.iter().map(Message::to_value).collect();
    stategraph::update([("messages", Value::List(list.into()))])
}

/// A fake model: streams `chunks` with `id`, then answers with their concatenation.
fn model(ctx: &NodeContext, chunks: &[&str], id: &str) -> Message {
    for c in chunks {
        ctx.send_message_chunk(&Message::ai(*c).with_id(id));
    }
    Message::ai(chunks.concat()).with_id(id)
}

/// The graph of `tags.py`.
fn graph() -> CompiledGraph<DynState> {
    let mut sub = chat_graph();
    sub.add_node("inner", |_s: DynState, ctx: NodeContext| async move {
        said(vec![model(&ctx, &["x"], "c-1")])
    });
    sub.add_edge(START, "inner").add_edge("inner", END);
    let sub = sub.compile().unwrap();
    let mut g = chat_graph();
    g.add_node("call", |_s: DynState, ctx: NodeContext| async move {
        said(vec![model(&ctx, &["hello", " ", "world"], "m-1")])
    });
    g.add_subgraph("sub", &sub);
    g.add_node("plain", |_s: DynState| async move {
        said(vec![Message::ai("done").with_id("p-1")])
    });
    g.add_edge(START, "call")
        .add_edge("call", "sub")
        .add_edge("sub", "plain")
        .add_edge("plain", END);
    g.compile_with(CompileOptions::new().checkpointer(std::sync::Arc::new(MemorySaver::new())))
        .unwrap()
}

fn config() -> RunConfig {
    RunConfig::thread("t")
        .with_metadata("who", "me")
        .with_tags(["mytag", "other"])
}

/// `node:task_id` parts with the task id as `*`.
fn norm_ns(s: &str) -> String {
    s.split('|')
        .map(|p| format!("{}:*", p.split(':').next().unwrap()))
        .collect::<Vec<_>>()
        .join("|")
}

/// The script's form of an event; `None` for a task's result.
fn described(ns: &[String], mode: StreamMode, data: &Value) -> Option<J> {
    let ns: Vec<String> = ns.iter().map(|p| norm_ns(p)).collect();
    let map = |v: &Value| v.as_map().unwrap().clone();
    if mode == StreamMode::Tasks {
        let task = map(data);
        task.get("triggers")?;
        let metadata = task.get("metadata").map_or(J::Null, Value::to_json);
        let name = task.get("name").unwrap().to_json();
        return Some(json!({"ns": ns, "task": name, "metadata": metadata}));
    }
    let [msg, meta] = data.as_list().unwrap() else {
        panic!("a messages payload is (message, metadata): {}", data.repr())
    };
    let (_, fields) = msg.as_message().unwrap();
    let metadata: Vec<J> = map(meta)
        .iter()
        .map(|(k, v)| {
            let k = k.as_str().unwrap();
            let v = match k {
                "langgraph_checkpoint_ns" | "checkpoint_ns" => json!(norm_ns(v.as_str().unwrap())),
                _ => v.to_json(),
            };
            json!([k, v])
        })
        .collect();
    Some(json!({
        "ns": ns,
        "content": fields.get("content").unwrap().to_json(),
        "id": fields.get("id").unwrap().to_json(),
        "metadata": metadata,
    }))
}

fn expected_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime_context/tags.json")
}

fn expected() -> J {
    serde_json::from_str(&std::fs::read_to_string(expected_path()).unwrap()).unwrap()
}

#[tokio::test]
async fn tags_reach_messages_and_tasks_metadata_as_in_python() {
    let modes = [StreamMode::Messages, StreamMode::Tasks];
    let input = said(vec![Message::human("q").with_id("h-1")]);
    let events: Vec<J> = graph()
        .stream_with(input, &config(), StreamOptions::new(&modes).subgraphs(true))
        .filter_map(|e| {
            let e = e.unwrap();
            futures::future::ready(described(&e.ns, e.mode, &e.data))
        })
        .collect()
        .await;
    assert_eq!(J::Array(events), expected());
}

#[test]
fn the_pinned_python_still_streams_the_expected_tags() {
    let Some(python) = python() else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime_context/tags.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let python: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(python, expected());
}

#[test]
fn tags_merge_as_langchain_merges_them() {
    let defaults = RunConfig::default().with_tags(["b", "a"]);
    let merged = RunConfig::default()
        .with_tags(["c", "a"])
        .merged_over(&defaults);
    assert_eq!(merged.tags(), ["a", "b", "c"]);
    let only_defaults = RunConfig::default().merged_over(&defaults);
    assert_eq!(only_defaults.tags(), ["b", "a"]);
}
