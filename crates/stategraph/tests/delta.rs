//! DeltaChannel (spec §13): the golden chat thread of Python LangGraph reproduced byte for
//! byte (tests/golden/delta_chat.json, made by tests/golden/gen_delta.py), on every saver
//! the same outputs and history, and the engine's bookkeeping (snapshots, counters,
//! reconstruction, overwrites, branches) checked on its own.
#![allow(clippy::unwrap_used)]

mod support;

use serde_json::Value as J;
use stategraph::channels::{Channel, DeltaChannel, LastValue};
use stategraph::checkpoint::{CheckpointSaver, Value};
use stategraph::{update, CompileOptions, DynState, RunConfig, StateGraph, END, START};
use support::golden::{assert_storage_matches, load, saver, sources, to_json};
use support::savers::PostgresSchema;

/// The trace's graph: `messages` a DeltaChannel (concatenation, snapshot every 2
/// updates), `turns` a plain value; one node echoing the last message.
fn chat_graph(frequency: u64) -> StateGraph<DynState> {
    let messages: Box<dyn Channel> = Box::new(DeltaChannel::from_pairwise(
        stategraph::reducers::add(),
        frequency,
    ));
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("messages".into(), messages),
        ("turns".into(), Box::new(LastValue::new()) as _),
    ]);
    g.add_node("bot", |s: DynState| async move {
        let last = match s.get("messages") {
            Some(Value::List(items)) => items
                .last()
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned(),
            _ => String::new(),
        };
        let turns = s.get("turns").and_then(|v| v.as_i64()).unwrap_or(0);
        update([
            (
                "messages",
                Value::List(vec![Value::from(format!("echo:{last}"))]),
            ),
            ("turns", Value::Int(turns + 1)),
        ])
    });
    g.add_edge(START, "bot").add_edge("bot", END);
    g
}

fn said(text: &str) -> Vec<(String, Value)> {
    vec![("messages".to_owned(), Value::List(vec![Value::from(text)]))]
}

fn values_json(values: &indexmap::IndexMap<String, Value>) -> J {
    to_json(&Value::Map(
        values
            .iter()
            .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
            .collect(),
    ))
}

#[derive(Clone, Copy, Debug)]
enum On {
    Memory,
    Sqlite,
    Postgres,
}

type Backend = (
    std::sync::Arc<dyn CheckpointSaver>,
    Option<std::sync::Arc<stategraph::checkpoint::MemorySaver>>,
    Option<PostgresSchema>,
);

async fn backend(on: On) -> Option<Backend> {
    let versions = || {
        stategraph::checkpoint::version_gen::VersionGenerator::python_seeded(
            support::golden::SEED + 1,
        )
    };
    match on {
        On::Memory => {
            let m = saver();
            Some((m.clone(), Some(m), None))
        }
        On::Sqlite => {
            let s = stategraph::sqlite::SqliteSaver::in_memory()
                .unwrap()
                .with_versions(versions());
            Some((std::sync::Arc::new(s), None, None))
        }
        On::Postgres => {
            let (s, guard) = support::savers::postgres_fenced().await?;
            Some((
                std::sync::Arc::new(s.with_versions(versions())),
                None,
                Some(guard),
            ))
        }
    }
}

/// Runs the trace's conversation; checks every output, then the stored bytes (memory) and
/// the history of values, metadata and `next` (every saver).
async fn delta_chat_is_reproduced(on: On) {
    let Some((saver, memory, _guard)) = backend(on).await else {
        return;
    };
    let trace = load("delta_chat");
    let graph = chat_graph(2)
        .compile_with(CompileOptions::new().checkpointer(saver.clone()))
        .unwrap()
        .with_sources(sources());
    let cfg = RunConfig::thread("chat");
    for (i, call) in trace["calls"].as_array().unwrap().iter().enumerate() {
        match call["kind"].as_str().unwrap() {
            "invoke" => {
                let text = call["input"]["messages"][0].as_str().unwrap();
                let out = graph.invoke_outcome(said(text), &cfg).await.unwrap();
                assert_eq!(values_json(&out.values), call["output"], "call {i}");
            }
            "update_state" => {
                let text = call["values"]["messages"][0].as_str().unwrap();
                let got = graph
                    .update_state(&cfg, said(text), call["as_node"].as_str())
                    .await
                    .unwrap();
                assert_eq!(
                    got.checkpoint_id.as_deref(),
                    call["output"].as_str(),
                    "call {i}"
                );
            }
            other => panic!("unknown call {other}"),
        }
    }
    if let Some(m) = &memory {
        assert_storage_matches(&trace, m);
    }
    let history = graph
        .get_state_history(&cfg, &Default::default())
        .await
        .unwrap();
    let expected = trace["history"].as_array().unwrap();
    assert_eq!(history.len(), expected.len(), "history length");
    for (i, (s, e)) in history.iter().zip(expected).enumerate() {
        let id = s.config.as_ref().and_then(|c| c.checkpoint_id.clone());
        assert_eq!(id.as_deref(), e["checkpoint_id"].as_str(), "entry {i}: id");
        assert_eq!(values_json(&s.values), e["values"], "entry {i}: values");
        assert_eq!(
            s.metadata.as_ref().map(|m| to_json(&m.to_value())),
            Some(e["metadata"].clone()),
            "entry {i}: metadata"
        );
        assert_eq!(J::from(s.next.clone()), e["next"], "entry {i}: next");
    }
}

mod delta_chat {
    #[tokio::test]
    async fn memory() {
        super::delta_chat_is_reproduced(super::On::Memory).await;
    }
    #[tokio::test]
    async fn sqlite() {
        super::delta_chat_is_reproduced(super::On::Sqlite).await;
    }
    #[tokio::test]
    async fn postgres() {
        super::delta_chat_is_reproduced(super::On::Postgres).await;
    }
}
