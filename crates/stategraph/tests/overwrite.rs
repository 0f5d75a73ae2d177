//! The typed `Overwrite`: it replaces a reducer channel's value in a run and in
//! `update_state`, is stored as Python stores `langgraph.types.Overwrite`, and the pinned
//! Python reads our write as its `Overwrite` while we read Python's (one SQLite file).
//!
//! The Python side is `tests/interop/overwrite.py`, run with `STATEGRAPH_PYTHON` or the
//! workspace's `target/langgraph-venv`; without it the interop test prints a note and
//! passes, unless `STATEGRAPH_INTEROP=1`.

mod support;

use std::path::Path;

use std::sync::Arc;
use support::python::python;

use serde_json::{json, Value as J};
use stategraph::channels::LastValue;
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, MemorySaver};
use stategraph::{
    list, map, update, CompileOptions, CompiledGraph, DynState, NoInput, Overwrite, RunConfig,
    StateGraph, Value, END, START,
};
use support::golden::to_json;

/// The chain a -> b -> c, paused before `pause`; `a` overwrites `trail` when `a_overwrites`.
fn chain(
    saver: Arc<dyn CheckpointSaver>,
    pause: &[&str],
    a_overwrites: bool,
) -> CompiledGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("value".into(), Box::new(LastValue::new()) as _),
        (
            "trail".into(),
            Box::new(stategraph::channels::BinaryOperatorAggregate::new(
                stategraph::reducers::add(),
                Some(list![]),
            )) as _,
        ),
    ]);
    for n in ["a", "b", "c"] {
        g.add_node(n, move |s: DynState| async move {
            let value = s
                .get("value")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_owned()
                + n;
            let trail = if a_overwrites && n == "a" {
                Value::from(Overwrite::new(list!["only"]))
            } else {
                list![n]
            };
            update([("value", Value::from(value)), ("trail", trail)])
        });
    }
    g.add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", END);
    let options = CompileOptions::new()
        .checkpointer(saver)
        .interrupt_before(pause.iter().copied());
    g.compile_with(options).expect("compiles")
}

fn to_j(v: Option<&Value>) -> J {
    to_json(v.expect("a value"))
}

#[test]
fn overwrite_is_stored_as_python_stores_it_and_read_in_every_form() {
    let ow = Overwrite::new(list!["b"]);
    let stored = stategraph::checkpoint::serde::msgpack::encode(&ow.to_value()).expect("encodes");
    // `JsonPlusSerializer().dumps_typed(Overwrite(["b"]))` of langgraph 1.2.24.
    assert_eq!(
        hex::encode(stored),
        "c7380293af6c616e6767726170682e7479706573a94f766572777269746582a576616c756591a162a4\
         74797065ad5f5f6f76657277726974655f5f"
    );
    for form in [
        ow.to_value(),
        map! {"__overwrite__" => list!["b"]},
        map! {"type" => "__overwrite__", "value" => list!["b"]},
    ] {
        assert_eq!(Overwrite::from_value(&form), Some(ow.clone()), "{form:?}");
    }
    assert_eq!(Overwrite::from_value(&list!["b"]), None);
    assert_eq!(Overwrite::from_value(&map! {"value" => list!["b"]}), None);
}

#[tokio::test]
async fn a_node_and_update_state_overwrite_a_reducer_channel() {
    let saver = Arc::new(MemorySaver::new());
    let app = chain(saver.clone(), &[], true);
    let cfg = RunConfig::thread("t");
    let out = app
        .invoke(update([("value", "x")]), &cfg)
        .await
        .expect("runs");
    assert_eq!(to_j(out.values.get("trail")), json!(["only", "b", "c"]));
    app.update_state(
        &cfg,
        update([("trail", Overwrite::new(list!["u"]))]),
        Some("c"),
    )
    .await
    .expect("updates");
    let state = app.get_state(&cfg).await.expect("reads");
    assert_eq!(to_j(state.values.get("trail")), json!(["u"]));
}

#[tokio::test]
async fn python_reads_our_overwrite_and_we_read_pythons() {
    let Some(python) = python() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!(
        "stategraph-overwrite-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("threads.db");
    let saver: Arc<dyn CheckpointSaver> =
        Arc::new(stategraph::sqlite::SqliteSaver::open(&file).expect("opens"));
    let app = chain(saver.clone(), &["b"], false);
    let rust = RunConfig::thread("rust");
    app.invoke(update([("value", "x")]), &rust)
        .await
        .expect("runs to b")
        .is_interrupted()
        .then_some(())
        .expect("paused before b");
    app.update_state(
        &rust,
        update([("trail", Overwrite::new(list!["z"]))]),
        Some("a"),
    )
    .await
    .expect("updates");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/overwrite.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(&file)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "overwrite.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let py: J = serde_json::from_slice(&out.stdout).expect("the script prints JSON");
    assert_eq!(
        py["written"],
        json!([{"class": "Overwrite", "value": ["z"]}])
    );
    assert_eq!(py["before"], json!(["z"]));
    assert_eq!(py["after"], json!(["z", "b", "c"]));

    // Python's update_state on thread "py": its write, on the checkpoint it was made from.
    let latest = saver
        .get_tuple(&CheckpointConfig::thread("py"))
        .await
        .expect("reads")
        .expect("a checkpoint");
    let parent = latest.parent_config.expect("a parent");
    let paused = saver
        .get_tuple(&parent)
        .await
        .expect("reads")
        .expect("the parent");
    let written: Vec<&Value> = paused
        .pending_writes
        .iter()
        .filter(|w| w.channel == "trail")
        .map(|w| &w.value)
        .collect();
    assert_eq!(written, vec![&Overwrite::new(list!["y"]).to_value()]);
    assert_eq!(
        Overwrite::from_value(written[0]),
        Some(Overwrite::new(list!["y"]))
    );
    let py_cfg = RunConfig::thread("py");
    let state = app.get_state(&py_cfg).await.expect("reads");
    assert_eq!(to_j(state.values.get("trail")), json!(["y"]));
    let out = app.invoke(NoInput, &py_cfg).await.expect("runs on");
    assert_eq!(to_j(out.values.get("trail")), json!(["y", "b", "c"]));
    std::fs::remove_dir_all(dir).ok();
}
