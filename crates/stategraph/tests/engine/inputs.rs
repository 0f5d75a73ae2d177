//! Per-node input types: a node may take another `#[derive(State)]` type than the graph's
//! state (LangGraph's node input schema); edges build it from its channels, a `Send`
//! carries it, and a payload that does not fit is a `TypeError`. Also: the compiler's
//! message for something that is not a node, and the `map_reduce` example against its
//! Python twin.

use std::path::{Path, PathBuf};

use futures::StreamExt;
use stategraph::{
    list, map, DynState, Error, RunConfig, Send, State, StateGraph, StreamMode, Value, END, START,
};

use crate::util::{add_list, history, saver, strings, with_saver};

#[path = "../../examples/map_reduce.rs"]
#[allow(dead_code, unreachable_pub)]
mod map_reduce;

/// The graph's state.
#[derive(State, Debug)]
pub(crate) struct Topics {
    topic: String,
    count: i64,
    #[state(reducer = add)]
    results: Vec<String>,
}

/// A worker's input: one field the state has, one it lacks.
#[derive(State, Debug)]
pub(crate) struct Item {
    topic: String,
    index: i64,
}

/// An input naming only a private channel.
#[derive(State, Debug)]
pub(crate) struct Secret {
    secret: String,
}

fn node_error(err: Error) -> (String, String) {
    match err {
        Error::Node { node, message } => (node, message),
        other => panic!("expected Error::Node, got {other:?}"),
    }
}

/// `START` sends `payloads` to `worker`, which takes an [`Item`] and records it.
fn sends_to_item_worker(payloads: Vec<Value>) -> StateGraph<Topics> {
    let mut g = StateGraph::<Topics>::new();
    g.add_node("worker", |i: Item| async move {
        TopicsUpdate::default().results(vec![format!("{}#{}", i.topic, i.index)])
    });
    g.add_conditional_edges(START, move |_s: &Topics| {
        payloads
            .iter()
            .map(|p| Send::new("worker", p.clone()))
            .collect::<Vec<_>>()
    });
    g.add_edge("worker", END);
    g
}

async fn run_topics(g: &StateGraph<Topics>) -> stategraph::Result<Topics> {
    let app = g.compile()?;
    let out = app
        .invoke(
            TopicsUpdate::default().topic("t").count(7),
            &RunConfig::default(),
        )
        .await?;
    Ok(Topics {
        topic: out.topic.clone(),
        count: out.count,
        results: out.results.clone(),
    })
}

#[tokio::test]
async fn a_send_carries_the_workers_own_input_type() {
    let payloads = vec![
        map! {"topic" => "cats", "index" => 0},
        map! {"topic" => "dogs", "index" => 1},
        map! {"index" => 2},
    ];
    let out = run_topics(&sends_to_item_worker(payloads)).await.unwrap();
    // A field the payload leaves out takes its default; results join in Send order.
    assert_eq!(out.results, ["cats#0", "dogs#1", "#2"]);
    assert_eq!(
        out.topic, "t",
        "the worker's `topic` is its own, not the state's"
    );
}

#[tokio::test]
async fn a_node_triggered_by_an_edge_reads_its_inputs_fields_from_the_channels() {
    let mut g = StateGraph::<Topics>::new();
    g.add_node("writer", |s: Topics| async move {
        stategraph::update([
            ("index", Value::from(s.count * 2)),
            ("results", list!["writer"]),
        ])
    });
    g.add_node("reader", |i: Item| async move {
        TopicsUpdate::default().results(vec![format!("{}#{}", i.topic, i.index)])
    });
    g.add_edge(START, "writer")
        .add_edge("writer", "reader")
        .add_edge("reader", END);
    let out = run_topics(&g).await.unwrap();
    // `topic` comes from the state, `index` from the private channel `writer` wrote.
    assert_eq!(out.results, ["writer", "t#14"]);
}

#[tokio::test]
async fn an_input_field_the_state_lacks_is_a_private_channel_kept_in_checkpoints_as_in_python() {
    let mut g = StateGraph::<DynState>::with_channels(vec![("log".into(), add_list())]);
    g.add_node("a", |_s: DynState| async move {
        stategraph::update([("secret", Value::from("hidden")), ("log", list!["a"])])
    });
    g.add_node("b", |p: Secret| async move {
        stategraph::update([("log", list![format!("b saw {}", p.secret)])])
    });
    g.add_edge(START, "a").add_edge("a", "b").add_edge("b", END);
    let saver = saver();
    let app = with_saver(&g, &saver);
    let input = stategraph::update([("log", list![])]);
    let out = app
        .invoke(input.clone(), &RunConfig::thread("t"))
        .await
        .unwrap();
    assert_eq!(strings(out.get("log")), ["a", "b saw hidden"]);
    assert_eq!(out.get("secret"), None, "a private channel is not output");
    assert!(!out.values.contains_key("secret"), "{:?}", out.values);
    let last = history(&saver, "t").await.pop().unwrap();
    assert_eq!(
        last.checkpoint.channel_values.get("secret"),
        Some(&Value::from("hidden")),
        "the checkpoint keeps it, as LangGraph's does"
    );
    let values: Vec<Value> = g
        .compile()
        .unwrap()
        .stream(input, &RunConfig::default(), &[StreamMode::Values])
        .map(|e| e.unwrap().data)
        .collect()
        .await;
    assert_eq!(
        values.last(),
        Some(&map! {"log" => list!["a", "b saw hidden"]})
    );
    // The same graph in the pinned Python: same output, same state in every checkpoint.
    let Some(python) = python() else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/private_channel.py");
    let py = std::process::Command::new(python)
        .arg(&script)
        .output()
        .expect("python runs");
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let py: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
    let output: serde_json::Map<String, serde_json::Value> = out
        .values
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect();
    let checkpoints: Vec<serde_json::Value> = history(&saver, "t")
        .await
        .iter()
        .map(|t| {
            let values: serde_json::Map<String, serde_json::Value> = t
                .checkpoint
                .channel_values
                .iter()
                .filter(|(k, _)| !k.starts_with("__") && !k.starts_with("branch:"))
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect();
            serde_json::json!([t.metadata.step, values])
        })
        .collect();
    assert_eq!(py["output"], serde_json::Value::Object(output));
    assert_eq!(py["checkpoints"], serde_json::Value::Array(checkpoints));
}

#[tokio::test]
async fn a_send_payload_that_is_not_a_map_is_a_type_error() {
    let err = run_topics(&sends_to_item_worker(vec![Value::from(3)]))
        .await
        .unwrap_err();
    let (node, message) = node_error(err);
    assert_eq!(node, "worker");
    assert_eq!(
        message,
        "TypeError('node `worker` takes `Item` (a map with keys \"topic\", \"index\"), got 3: not a map')"
    );
}

#[tokio::test]
async fn a_send_payload_with_a_key_the_input_lacks_is_a_type_error() {
    let payload = map! {"topic" => "cats", "subject" => "x"};
    let err = run_topics(&sends_to_item_worker(vec![payload]))
        .await
        .unwrap_err();
    let (node, message) = node_error(err);
    assert_eq!(node, "worker");
    assert!(
        message.ends_with(": unknown key \"subject\"')"),
        "{message}"
    );
    assert!(message.contains("`Item`"), "{message}");
}

#[tokio::test]
async fn a_send_payload_value_of_the_wrong_type_is_a_type_error() {
    let payload = map! {"topic" => "cats", "index" => "not a number"};
    let (node, message) = node_error(
        run_topics(&sends_to_item_worker(vec![payload]))
            .await
            .unwrap_err(),
    );
    assert_eq!(node, "worker");
    assert!(message.starts_with("TypeError("), "{message}");
    assert!(message.contains("index"), "{message}");
    assert!(message.contains("not a number"), "{message}");
}

#[tokio::test]
async fn a_send_to_a_node_taking_the_state_must_carry_state_keys() {
    let mut g = StateGraph::<Topics>::new();
    g.add_node("worker", |s: Topics| async move {
        TopicsUpdate::default().results(vec![format!("{}x{}", s.topic, s.count)])
    });
    let payload = map! {"topic" => "cats", "count" => 2};
    g.add_conditional_edges(START, move |_s: &Topics| {
        vec![
            Send::new("worker", payload.clone()),
            Send::new("worker", map! {"topik" => "typo"}),
        ]
    });
    g.add_edge("worker", END);
    let (node, message) = node_error(run_topics(&g).await.unwrap_err());
    assert_eq!(node, "worker");
    assert!(
        message.contains("topik") && message.contains("`Topics`"),
        "{message}"
    );
}

#[tokio::test]
async fn a_dynamic_worker_takes_any_map_but_not_a_scalar() {
    let graph = |payload: Value| {
        let mut g = StateGraph::<DynState>::with_channels(vec![("log".into(), add_list())]);
        g.add_node("worker", |s: DynState| async move {
            let keys: Vec<String> = s.0.keys().cloned().collect();
            stategraph::update([(
                "log",
                Value::list(keys.into_iter().map(Value::from).collect::<Vec<_>>()),
            )])
        });
        g.add_conditional_edges(START, move |_s: &DynState| {
            Send::new("worker", payload.clone())
        });
        g.add_edge("worker", END);
        g
    };
    let input = || stategraph::update([("log", list![])]);
    let out = graph(map! {"anything" => 1})
        .compile()
        .unwrap()
        .invoke(input(), &RunConfig::default())
        .await
        .unwrap();
    assert_eq!(strings(out.get("log")), ["anything"]);
    let err = graph(Value::from("3"))
        .compile()
        .unwrap()
        .invoke(input(), &RunConfig::default())
        .await
        .unwrap_err();
    let (node, message) = node_error(err);
    assert_eq!(node, "worker");
    assert!(
        message.contains("`DynState`") && message.contains("not a map"),
        "{message}"
    );
}

/// The pinned Python, when there is one (required with `STATEGRAPH_INTEROP=1`).
fn python() -> Option<PathBuf> {
    let path = std::env::var_os("STATEGRAPH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/langgraph-venv/bin/python")
        });
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("STATEGRAPH_INTEROP").map_or(true, |v| v != "1"),
        "STATEGRAPH_INTEROP=1 but there is no Python at {path:?}"
    );
    println!("note: skipping the Python twin: no venv Python at {path:?}");
    None
}

#[tokio::test]
async fn the_map_reduce_example_prints_what_its_python_twin_prints() {
    let rust = map_reduce::run().await.unwrap();
    let lines: Vec<&str> = rust.lines().collect();
    assert_eq!(lines.len(), 4, "{rust}");
    assert!(lines[..3].iter().all(|l| l.starts_with("joke: ")), "{rust}");
    let Some(python) = python() else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/python/map_reduce.py");
    let out = std::process::Command::new(python)
        .arg(&script)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rust, String::from_utf8_lossy(&out.stdout));
}

/// The map-reduce example stays within 1.5x the lines of its Python twin (non-blank,
/// non-comment lines), the budget the README states.
#[test]
fn the_map_reduce_example_is_within_its_line_budget() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let count = |path: PathBuf, comment: &str| {
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(str::trim)
            // As scripts/count_lines.sh counts: no blank lines, comments or one-line docstrings.
            .filter(|l| !l.is_empty() && !l.starts_with(comment) && !l.starts_with("\"\"\""))
            .count()
    };
    let rust = count(root.join("examples/map_reduce.rs"), "//");
    let python = count(root.join("../../examples/python/map_reduce.py"), "#");
    assert!(rust * 2 <= python * 3, "Rust {rust} lines, Python {python}");
}

/// Compiles `source` against the `stategraph` this test was built with; returns rustc's
/// messages (`None` when it compiled).
fn compile_error(name: &str, source: &str) -> Option<String> {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let mut rlibs: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(deps)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let file = e.file_name().into_string().ok()?;
            let ours = file.starts_with("libstategraph-") && file.ends_with(".rlib");
            if !ours {
                return None;
            }
            Some((e.metadata().ok()?.modified().ok()?, e.path()))
        })
        .collect();
    rlibs.sort();
    let (_, rlib) = rlibs
        .pop()
        .expect("libstategraph rlib next to the test binary");
    let dir = std::env::temp_dir().join(format!("stategraph-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.rs"));
    std::fs::write(&file, source).unwrap();
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = std::process::Command::new(rustc)
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "lib",
            "--emit",
            "metadata",
        ])
        .arg("--crate-name")
        .arg(name)
        .arg("-L")
        .arg(format!("dependency={}", deps.display()))
        .arg("--extern")
        .arg(format!("stategraph={}", rlib.display()))
        .arg("--out-dir")
        .arg(&dir)
        .arg(&file)
        .output()
        .expect("rustc runs");
    std::fs::remove_dir_all(&dir).ok();
    (!out.status.success()).then(|| String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_compiler_says_what_a_node_may_take_and_return() {
    let header = "#![allow(unused)]\nuse stategraph::{DynState, StateGraph};\n";
    let good = format!(
        "{header}#[derive(stategraph::State)] pub struct Item {{ pub x: i64 }}\n\
         pub fn f() {{ let mut g = StateGraph::<DynState>::new();\n\
         g.add_node(\"ok\", |i: Item| async move {{ let _ = i.x; }}); }}"
    );
    assert_eq!(compile_error("inputs_good", &good), None);
    let bad_return = format!(
        "{header}pub fn f() {{ let mut g = StateGraph::<DynState>::new();\n\
         g.add_node(\"bad\", |_s: DynState| async move {{ 42 }}); }}"
    );
    let msg = compile_error("inputs_bad_return", &bad_return).expect("an error");
    assert!(
        msg.contains("cannot be a node of a `StateGraph<DynState>`"),
        "{msg}"
    );
    assert!(
        msg.contains("it returns an update, a `Command`, a `Send`"),
        "{msg}"
    );
    let bad_input = format!(
        "{header}pub struct Plain {{ pub x: i64 }}\n\
         pub fn f() {{ let mut g = StateGraph::<DynState>::new();\n\
         g.add_node(\"bad\", |p: Plain| async move {{ let _ = p.x; }}); }}"
    );
    let msg = compile_error("inputs_bad_input", &bad_input).expect("an error");
    assert!(
        msg.contains("its input `I` is `DynState` or another `#[derive(State)]` type"),
        "{msg}"
    );
    let bad_output = format!(
        "{header}fn out<T: stategraph::IntoNodeOutput>(_: T) {{}}\n\
         pub fn f() {{ out(1.5f64); }}"
    );
    let msg = compile_error("inputs_bad_output", &bad_output).expect("an error");
    assert!(
        msg.contains("`f64` is not something a node may return"),
        "{msg}"
    );
    let bad_state = format!(
        "{header}pub struct Plain;\n\
         fn input<T: stategraph::NodeInput>() {{}}\n\
         fn state<T: stategraph::State>() {{}}\n\
         pub fn f() {{ input::<Plain>(); state::<Plain>(); }}"
    );
    let msg = compile_error("inputs_bad_state", &bad_state).expect("an error");
    assert!(
        msg.contains("`Plain` cannot be the input of a node"),
        "{msg}"
    );
    assert!(msg.contains("derive `State` for `Plain`"), "{msg}");
    assert!(msg.contains("`Plain` is not a state type"), "{msg}");
}

/// An input whose `topic` is a reducer channel, where [`Topics`] has a `LastValue`.
#[derive(State, Debug)]
pub(crate) struct AddingTopic {
    #[state(reducer = add)]
    topic: Vec<String>,
}

/// An input reading the state's reducer channel `results` as a plain field.
#[derive(State, Debug)]
pub(crate) struct ResultsView {
    results: Vec<String>,
}

#[tokio::test]
async fn an_input_field_must_not_redeclare_a_channel_with_another_reducer() {
    let mut g = StateGraph::<Topics>::new();
    g.add_node("bad", |_i: AddingTopic| async move {});
    g.add_edge(START, "bad").add_edge("bad", END);
    match g.compile() {
        Err(Error::InvalidGraph(msg)) => {
            assert_eq!(msg, "Channel 'topic' already exists with a different type")
        }
        other => panic!("expected InvalidGraph, got {:?}", other.err()),
    }
    // A plain field reads a reducer channel of that name as it is.
    let mut g = StateGraph::<Topics>::new();
    g.add_node("first", |_s: Topics| async move {
        TopicsUpdate::default().results(vec!["x".to_owned()])
    });
    g.add_node("view", |v: ResultsView| async move {
        TopicsUpdate::default().results(vec![v.results.len().to_string()])
    });
    g.add_edge(START, "first")
        .add_edge("first", "view")
        .add_edge("view", END);
    assert_eq!(run_topics(&g).await.unwrap().results, ["x", "1"]);
}
