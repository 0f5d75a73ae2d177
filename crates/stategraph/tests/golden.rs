//! The golden traces of Python LangGraph reproduced by the engine, byte for byte: the same
//! graph, the same injected ids, versions and timestamps, the same stored checkpoints,
//! writes and blobs, outputs and stream events.

mod support;

use futures::StreamExt;
use serde_json::Value as J;
use stategraph::channels::LastValue;
use stategraph::checkpoint::CheckpointSaver;
use stategraph::{
    update, Command, CompileOptions, DynState, RunConfig, StateGraph, StreamMode, END, START,
};
use support::golden::{assert_storage_matches, load, normalize, saver, sources, to_json};

fn single_node_graph(saver: std::sync::Arc<dyn CheckpointSaver>) -> stategraph::CompiledGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("name".into(), Box::new(LastValue::new()) as _),
        ("address".into(), Box::new(LastValue::new()) as _),
    ]);
    g.add_node("get_address", |_s: DynState| async move {
        Command::update(update([("name", "pavaneeshwar"), ("address", "Hyderabad residency")]))
    });
    g.add_edge(START, "get_address").add_edge("get_address", END);
    g.compile_with(CompileOptions::new().checkpointer(saver))
        .expect("compiles")
        .with_sources(sources())
}

#[tokio::test]
async fn single_node_is_reproduced_byte_for_byte() {
    let trace = load("single_node");
    let saver = saver();
    let graph = single_node_graph(saver.clone());
    let out = graph
        .invoke_outcome(update::<_, &str, &str>([]), &RunConfig::thread("12345"))
        .await
        .expect("runs");
    let expected = normalize(&trace["calls"][0]["output"]);
    let got = to_json(&stategraph::Value::Map(
        out.values.iter().map(|(k, v)| (stategraph::Value::from(k.as_str()), v.clone())).collect(),
    ));
    assert_eq!(got, expected);
    assert_storage_matches(&trace, &saver);
}

#[tokio::test]
async fn single_node_streams_the_events_python_streams() {
    let trace = load("single_node");
    let graph = single_node_graph(saver());
    let modes = [
        StreamMode::Values,
        StreamMode::Updates,
        StreamMode::Checkpoints,
        StreamMode::Tasks,
        StreamMode::Debug,
    ];
    let events: Vec<J> = graph
        .stream(update::<_, &str, &str>([]), &RunConfig::thread("12345"), &modes)
        .map(|e| {
            let e = e.expect("event");
            serde_json::json!([e.mode.as_str(), to_json(&e.data)])
        })
        .collect()
        .await;
    let expected: Vec<J> = trace["stream"]["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(normalize)
        .collect();
    assert_eq!(events.len(), expected.len(), "events: {events:#?}");
    for (i, (g, e)) in events.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "event {i} differs");
    }
}
