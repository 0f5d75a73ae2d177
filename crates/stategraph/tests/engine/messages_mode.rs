//! `messages` stream mode: chat-model chunks and the messages nodes return, with Python's
//! metadata, deduplicated by id, under subgraph namespaces. The expectation is what the
//! pinned Python streams for the same graph (`tests/interop/stream_messages.py`, its output
//! kept in `tests/interop/stream_messages.json` and compared again when Python is there).

use std::path::{Path, PathBuf};

use futures::StreamExt;
use serde_json::{json, Value as J};
use stategraph::channels::{BinaryOperatorAggregate, Channel};
use stategraph::{
    list, reducers, CompiledGraph, DynState, Message, NodeContext, RunConfig, StateGraph,
    StreamMode, StreamOptions, StreamPart, Value, END, START,
};

use crate::util::{saver, with_saver};

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

/// The graph of `tests/interop/stream_messages.py`.
fn graph() -> CompiledGraph<DynState> {
    let mut sub = chat_graph();
    sub.add_node("inner", |_s: DynState, ctx: NodeContext| async move {
        let answer = model(&ctx, &["x"], "c-1");
        said(vec![answer, Message::ai("inner").with_id("i-1")])
    });
    sub.add_edge(START, "inner").add_edge("inner", END);
    let sub = sub.compile().unwrap();

    let mut g = chat_graph();
    g.add_node("outer", |_s: DynState, ctx: NodeContext| async move {
        said(vec![model(&ctx, &["a", " ", "b"], "m-1")])
    });
    g.add_subgraph("sub", &sub);
    g.add_node("plain", |s: DynState| async move {
        let first = s.get("messages").unwrap().as_list().unwrap()[0].clone();
        let mut out = said(vec![
            Message::ai("hi").with_id("p-1"),
            Message::human("again"),
        ]);
        out[0].1.as_list_mut().unwrap().push(first);
        out
    });
    g.add_edge(START, "outer")
        .add_edge("outer", "sub")
        .add_edge("sub", "plain")
        .add_edge("plain", END);
    with_saver(&g, &saver())
}

fn input() -> Vec<(String, Value)> {
    said(vec![Message::human("q").with_id("h-1")])
}

fn config() -> RunConfig {
    RunConfig::thread("t").with_metadata("who", "me")
}

/// `node:task_id` parts with the task id as `*`.
fn norm_ns(s: &str) -> String {
    s.split('|')
        .map(|p| format!("{}:*", p.split(':').next().unwrap()))
        .collect::<Vec<_>>()
        .join("|")
}

/// The script's form of a messages event.
fn described(ns: &[String], data: &Value) -> J {
    let [msg, meta] = data.as_list().unwrap() else {
        panic!("a messages payload is (message, metadata): {}", data.repr())
    };
    let (_, fields) = msg.as_message().unwrap();
    let id = fields.get("id").and_then(Value::as_str).unwrap();
    let id = if id.len() == 36 && id.matches('-').count() == 4 {
        "<uuid>"
    } else {
        id
    };
    let metadata: Vec<J> = meta
        .as_map()
        .unwrap()
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
    json!({
        "ns": ns.iter().map(|p| norm_ns(p)).collect::<Vec<_>>(),
        "type": fields.get("type").unwrap().as_str().unwrap(),
        "fields": fields.iter().map(|(k, _)| k.as_str().unwrap()).collect::<Vec<_>>(),
        "content": fields.get("content").unwrap().to_json(),
        "id": id,
        "metadata": metadata,
    })
}

async fn streamed(subgraphs: bool) -> J {
    let events: Vec<J> = graph()
        .stream_with(
            input(),
            &config(),
            StreamOptions::new(&[StreamMode::Messages]).subgraphs(subgraphs),
        )
        .map(|e| {
            let e = e.unwrap();
            described(&e.ns, &e.data)
        })
        .collect()
        .await;
    J::Array(events)
}

fn expected_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/stream_messages.json")
}

fn expected() -> J {
    serde_json::from_str(&std::fs::read_to_string(expected_path()).unwrap()).unwrap()
}

#[tokio::test]
async fn messages_match_python_with_subgraphs() {
    assert_eq!(streamed(true).await, expected()["subgraphs"]);
}

#[tokio::test]
async fn messages_match_python_without_subgraphs() {
    // The subgraph's messages come out once, when the subgraph node returns them.
    assert_eq!(streamed(false).await, expected()["root"]);
}

#[test]
fn the_pinned_python_still_streams_the_expected_messages() {
    let path = std::env::var_os("STATEGRAPH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/langgraph-venv/bin/python")
        });
    if !path.exists() {
        assert!(
            std::env::var("STATEGRAPH_INTEROP").map_or(true, |v| v != "1"),
            "STATEGRAPH_INTEROP=1 but there is no Python at {path:?}"
        );
        println!("note: skipping: no pinned Python (STATEGRAPH_PYTHON)");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/stream_messages.py");
    let out = std::process::Command::new(path)
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

#[tokio::test]
async fn typed_messages_carry_the_message_and_its_metadata() {
    let parts: Vec<StreamPart<DynState>> = graph()
        .stream_typed(
            input(),
            &config(),
            StreamOptions::new(&[StreamMode::Messages]).subgraphs(true),
        )
        .map(|p| p.unwrap())
        .collect()
        .await;
    let seen: Vec<(String, String, i64, Option<String>)> = parts
        .iter()
        .map(|p| match p {
            StreamPart::Messages {
                chunk, metadata, ..
            } => (
                chunk.text(),
                metadata.langgraph_node.clone(),
                metadata.langgraph_step,
                metadata.thread_id.clone(),
            ),
            other => panic!("{other:?}"),
        })
        .collect();
    let t = || Some("t".to_owned());
    assert_eq!(
        seen,
        [
            ("a".into(), "outer".into(), 1, t()),
            (" ".into(), "outer".into(), 1, t()),
            ("b".into(), "outer".into(), 1, t()),
            ("x".into(), "inner".into(), 1, t()),
            ("inner".into(), "inner".into(), 1, t()),
            ("hi".into(), "plain".into(), 3, t()),
            ("again".into(), "plain".into(), 3, t()),
        ]
    );
    match &parts[3] {
        StreamPart::Messages { ns, metadata, .. } => {
            assert_eq!(ns.len(), 1);
            assert!(ns[0].starts_with("sub:"));
            assert_eq!(metadata.checkpoint_ns.as_deref(), Some(ns[0].as_str()));
            assert!(metadata
                .langgraph_checkpoint_ns
                .starts_with(&format!("{}|inner:", ns[0])));
            assert_eq!(metadata.extra.get("who"), Some(&Value::from("me")));
        }
        other => panic!("{other:?}"),
    }
    // The message returned without an id streams with a fresh one.
    match &parts[6] {
        StreamPart::Messages { chunk, .. } => {
            assert_eq!(chunk.id.as_ref().map(String::len), Some(36))
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_whole_answer_sent_after_its_chunks_is_not_repeated() {
    let mut g = chat_graph();
    g.add_node("bot", |_s: DynState, ctx: NodeContext| async move {
        let answer = model(&ctx, &["o", "k"], "r-1");
        ctx.send_message(&answer);
        ctx.send_message(&Message::ai("unstreamed").with_id("r-2"));
        said(vec![answer])
    });
    g.add_edge(START, "bot").add_edge("bot", END);
    let texts: Vec<String> = g
        .compile()
        .unwrap()
        .stream_typed(input(), &RunConfig::default(), StreamMode::Messages)
        .map(|p| match p.unwrap() {
            StreamPart::Messages { chunk, .. } => chunk.text(),
            other => panic!("{other:?}"),
        })
        .collect()
        .await;
    assert_eq!(texts, ["o", "k", "unstreamed"]);
}

#[tokio::test]
async fn messages_mode_streams_nothing_else_and_other_modes_no_messages() {
    let modes = [StreamMode::Updates, StreamMode::Messages];
    let got: Vec<&'static str> = graph()
        .stream(input(), &config(), &modes)
        .map(|e| e.unwrap().mode.as_str())
        .collect()
        .await;
    assert_eq!(
        got,
        [
            "messages", "messages", "messages", "updates", "messages", "messages", "updates",
            "messages", "messages", "updates"
        ]
    );
    let updates_only = graph()
        .stream(input(), &config(), &[StreamMode::Updates])
        .count()
        .await;
    assert_eq!(updates_only, 3);
}
