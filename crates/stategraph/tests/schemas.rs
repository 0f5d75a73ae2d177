//! Input/output schemas, the JSON Schemas of a graph's types, and `add_node_fn`, compared
//! with what the pinned Python LangGraph (1.2.24) does for the twin graph:
//! `tests/schemas/schemas.json`, written by `tests/schemas/gen_schemas.py`.
#![cfg(feature = "schemars")]
#![allow(clippy::unwrap_used)]

mod support;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value as J;
use stategraph::schemars::JsonSchema;
use stategraph::{
    CompileOptions, CompiledGraph, DynState, Error, RunConfig, State, StateGraph, StreamMode,
    Value, END, START,
};
use support::golden::{assert_storage_matches, normalize, saver, sources, to_json};

// Python's `State`: schemars titles a schema by the type's name, or its `rename` (a doc
// comment would be its `description`).
#[derive(State, JsonSchema)]
#[schemars(rename = "State")]
struct St {
    a: String,
    #[state(reducer = add)]
    log: Vec<String>,
    n: i64,
}

#[derive(State, JsonSchema)]
struct In {
    a: String,
    x: String,
}

#[derive(State, JsonSchema, Debug, PartialEq)]
struct Out {
    log: Vec<String>,
    y: String,
}

/// An output field with another reducer than the state's `n`.
#[derive(State)]
struct BadOut {
    #[state(reducer = add)]
    n: i64,
}

fn three() -> i64 {
    3
}

#[derive(JsonSchema, Serialize, Deserialize)]
struct Ctx {
    user: String,
    #[serde(default = "three")]
    limit: i64,
}

fn fixture() -> J {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schemas/schemas.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

async fn first(s: In) -> StUpdate {
    StUpdate::default()
        .log(vec![format!("first:{}:{}", s.a, s.x)])
        .n(1)
}

/// Reads the state's channels (as a map, to see which it gets) and writes the
/// output-only `y`.
async fn second(s: DynState) -> Vec<(String, Value)> {
    let mut keys: Vec<&str> = s.0.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let n = match s.get("n") {
        Some(Value::Int(n)) => *n,
        other => panic!("n is {other:?}"),
    };
    let line = format!("second:{n}:{}", keys.join(","));
    vec![
        ("log".into(), Value::from(vec![Value::from(line)])),
        ("y".into(), Value::from("Y")),
    ]
}

fn build() -> stategraph::graph::IoGraph<St, In, Out> {
    let mut g = StateGraph::<St>::new()
        .input_schema::<In>()
        .output_schema::<Out>()
        .context_schema::<Ctx>();
    g.add_node_fn(first).add_node_fn(second);
    g.add_edge(START, "first")
        .add_edge("first", "second")
        .add_edge("second", END);
    g
}

/// A JSON input as channel writes.
fn input(j: &J) -> Vec<(String, Value)> {
    j.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let v = stategraph::checkpoint::serde::rust::to_value(v).unwrap();
            (k.clone(), v)
        })
        .collect()
}

fn map_json(values: &indexmap::IndexMap<String, Value>) -> J {
    J::Object(
        values
            .iter()
            .map(|(k, v)| (k.clone(), to_json(v)))
            .collect(),
    )
}

#[tokio::test]
async fn io_schemas_store_return_and_show_what_python_does() {
    let fx = fixture();
    let call = &fx["invoke"];
    let saver = saver();
    let app = build()
        .compile_with(CompileOptions::new().checkpointer(saver.clone()))
        .unwrap()
        .with_sources(sources());
    let config = RunConfig::thread("t");
    // `n` (a state key) and `zzz` are not keys of `In`: dropped, as Python drops them.
    let out = app.invoke(input(&call["input"]), &config).await.unwrap();
    assert_eq!(map_json(&out.values), normalize(&call["output"]));
    assert_eq!(
        out.state,
        Out {
            log: vec!["first:hi:X".into(), "second:1:a,log,n".into()],
            y: "Y".into(),
        }
    );
    // The snapshot is the whole state and the schemas' own channels.
    let snapshot = app.get_state(&config).await.unwrap();
    assert_eq!(map_json(&snapshot.values), normalize(&call["state"]));
    assert_storage_matches(call, &saver);
}

#[tokio::test]
async fn a_root_stream_shows_the_state_and_the_schemas_channels() {
    let fx = fixture();
    let app = build()
        .compile_with(CompileOptions::new().checkpointer(saver()))
        .unwrap()
        .with_sources(sources());
    let given: Vec<(String, Value)> = vec![("a".into(), "hi".into()), ("x".into(), "X".into())];
    let events: Vec<J> = app
        .stream(
            given,
            &RunConfig::thread("s"),
            &[StreamMode::Values, StreamMode::Updates],
        )
        .map(|e| {
            let e = e.unwrap();
            serde_json::json!([e.mode.as_str(), to_json(&e.data)])
        })
        .collect()
        .await;
    assert_eq!(J::Array(events), normalize(&fx["stream"]));
}

#[test]
fn the_schemas_channels_follow_the_states_in_pythons_order() {
    let fx = fixture();
    let app = build().compile().unwrap();
    let names: Vec<&str> = app
        .pregel()
        .channels
        .keys()
        .map(String::as_str)
        .filter(|k| !k.starts_with("__") && !k.starts_with("branch:"))
        .collect();
    assert_eq!(J::from(names), fx["channels"]);
    assert_eq!(app.pregel().output_channels, ["log", "y"]);
}

#[test]
fn an_output_field_of_another_kind_than_the_states_is_a_typed_error() {
    let fx = fixture();
    let mut g = StateGraph::<St>::new().output_schema::<BadOut>();
    g.add_node_fn(first).add_edge(START, "first");
    match g.compile() {
        Err(Error::InvalidGraph(msg)) => assert_eq!(J::from(msg), fx["conflict"]),
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("compiled"),
    }
}

#[test]
fn json_schemas_are_pydantics() {
    let fx = fixture();
    let expected = &fx["jsonschema"];
    let app = build().compile().unwrap();
    assert_eq!(app.input_json_schema().unwrap(), expected["input"]);
    assert_eq!(app.output_json_schema().unwrap(), expected["output"]);
    assert_eq!(app.context_json_schema().unwrap(), expected["context"]);
    assert_eq!(app.state_json_schema().unwrap(), expected["state"]);
}

#[test]
fn a_graph_without_schemas_has_its_states_for_input_and_output() {
    let fx = fixture();
    let mut g = StateGraph::<St>::new();
    g.add_node_fn(first).add_edge(START, "first");
    let app: CompiledGraph<St> = g.compile().unwrap();
    let state = &fx["jsonschema"]["state"];
    assert_eq!(app.state_json_schema().as_ref(), Some(state));
    assert_eq!(app.input_json_schema().as_ref(), Some(state));
    assert_eq!(app.output_json_schema().as_ref(), Some(state));
    assert_eq!(app.context_json_schema(), None);
}

#[test]
fn a_state_without_json_schema_has_none() {
    let mut g = StateGraph::<BadOut>::new();
    g.add_node("a", |_s: BadOut| async move { BadOutUpdate::default() })
        .add_edge(START, "a");
    let app = g.compile().unwrap();
    assert_eq!(app.state_json_schema(), None);
    assert_eq!(app.input_json_schema(), None);
}

#[derive(State, JsonSchema)]
#[allow(dead_code)]
struct Renamed {
    #[state(rename = "max_tokens")]
    limit: u32,
    #[state(skip)]
    scratch: String,
}

#[test]
fn json_schema_keys_are_channels() {
    let schema = <Renamed as State>::state_json_schema().unwrap();
    assert_eq!(
        schema,
        serde_json::json!({
            "title": "Renamed",
            "type": "object",
            "properties": {
                "max_tokens": {"type": "integer", "minimum": 0, "title": "Max Tokens"}
            },
            "required": ["max_tokens"]
        })
    );
}

#[test]
fn add_node_fn_names_nodes_as_python_does() {
    let fx = fixture();
    let app = build().compile().unwrap();
    let nodes: Vec<&str> = app
        .pregel()
        .nodes
        .keys()
        .map(String::as_str)
        .filter(|n| *n != START)
        .collect();
    assert_eq!(J::from(nodes), fx["add_node_fn"]);
}

#[test]
fn add_node_fn_of_a_closure_is_an_error_saying_to_name_it() {
    let mut g = StateGraph::<St>::new();
    g.add_node_fn(|_s: St| async move { StUpdate::default() });
    g.add_edge(START, END);
    match g.compile() {
        Err(Error::InvalidGraph(msg)) => {
            assert!(msg.contains("{{closure}}"), "{msg}");
            assert!(msg.contains("add_node(\"name\""), "{msg}");
        }
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("compiled"),
    }
}

/// An input field whose type cannot hold the state field's values.
#[derive(State, JsonSchema)]
#[allow(dead_code)]
struct WrongIn {
    n: String,
}

#[test]
fn an_input_field_of_a_type_the_states_cannot_hold_is_a_typed_error() {
    // Stricter than Python, which compares channel kinds only: both types have JSON
    // Schemas, and `n` is an integer in the state.
    let mut g = StateGraph::<St>::new().input_schema::<WrongIn>();
    g.add_node_fn(first).add_edge(START, "first");
    match g.compile() {
        Err(Error::InvalidGraph(msg)) => assert_eq!(
            msg,
            "Channel 'n' is integer in the state but string in the input schema `WrongIn`"
        ),
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("compiled"),
    }
}

#[derive(State)]
struct Parent {
    a: String,
    #[state(reducer = add)]
    log: Vec<String>,
}

#[derive(State)]
struct SubState {
    a: String,
    #[state(reducer = add)]
    log: Vec<String>,
    secret: String,
}

#[derive(State)]
struct SubOut {
    log: Vec<String>,
}

async fn inner(s: SubState) -> SubStateUpdate {
    SubStateUpdate::default()
        .log(vec![format!("inner:{}", s.a)])
        .secret("kept inside".to_owned())
}

#[tokio::test]
async fn a_subgraph_with_an_output_schema_gives_its_parent_only_that() {
    let fx = fixture();
    let call = &fx["subgraph"];
    let mut sub = StateGraph::<SubState>::new().output_schema::<SubOut>();
    sub.add_node_fn(inner).add_edge(START, "inner");
    let sub = sub.compile().unwrap();
    let mut g = StateGraph::<Parent>::new();
    g.add_subgraph("sub", &sub).add_edge(START, "sub");
    let saver = saver();
    let app = g
        .compile_with(CompileOptions::new().checkpointer(saver.clone()))
        .unwrap()
        .with_sources(sources());
    let out = app
        .invoke(input(&call["input"]), &RunConfig::thread("p"))
        .await
        .unwrap();
    assert_eq!(map_json(&out.values), normalize(&call["output"]));
    assert_storage_matches(call, &saver);
}
