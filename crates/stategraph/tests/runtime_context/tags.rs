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

/// A span's name and its fields, as `(name, debug text)`.
type SpanRecord = (String, Vec<(String, String)>);

/// A `tracing` subscriber keeping the fields of every span, by span name.
#[derive(Default)]
struct SpanFields {
    spans: parking_lot::Mutex<Vec<SpanRecord>>,
}

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl tracing::Subscriber for &'static SpanFields {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut fields = Vec::new();
        attrs.record(&mut Fields(&mut fields));
        let mut spans = self.spans.lock();
        spans.push((attrs.metadata().name().to_owned(), fields));
        tracing::span::Id::from_u64(spans.len() as u64)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test]
async fn the_runs_span_carries_its_tags_and_run_id() {
    let sink: &'static SpanFields = Box::leak(Box::default());
    let _guard = tracing::subscriber::set_default(sink);
    let run_id = uuid::Uuid::parse_str("12345678-1234-5678-1234-567812345678").unwrap();
    let input = said(vec![Message::human("q").with_id("h-1")]);
    let _ = graph()
        .invoke(input, &config().run_id(run_id))
        .await
        .unwrap();
    let spans = sink.spans.lock();
    let (_, run) = spans
        .iter()
        .find(|(name, _)| name.starts_with("invoke_workflow"))
        .expect("a run span");
    let field = |k: &str| run.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(field("stategraph.run.tags"), Some("mytag,other"));
    assert_eq!(
        field("stategraph.run.id"),
        Some(run_id.to_string().as_str())
    );
}
