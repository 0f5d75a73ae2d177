//! `response_schema` on interrupts (LangGraph 1.2): a schema Python stores with an
//! interrupt reaches stategraph's `get_state` and survives a read and re-encode unchanged;
//! a schema stategraph stores reaches Python's `get_state`; each side resumes the other's
//! thread.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value as J};
use stategraph::channels::LastValue;
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver};
use stategraph::{
    map, Command, CompileOptions, CompiledGraph, DynState, Interrupt, NodeContext, NodeError,
    RunConfig, StateGraph, Value, END, START,
};

/// The schema both sides give (`SCHEMA` in `response_schema.py`).
fn schema() -> Value {
    map! {"type" => "string", "minLength" => 1, "title" => "Name"}
}

fn schema_json() -> J {
    json!({"type": "string", "minLength": 1, "title": "Name"})
}

/// `START -> ask -> END`; `ask` interrupts with a question and the schema, and stores the
/// answer (the graph of `response_schema.py`).
fn graph(saver: Arc<dyn CheckpointSaver>) -> CompiledGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![(
        "answer".into(),
        Box::new(LastValue::new()) as _,
    )]);
    g.add_node("ask", |_s: DynState, ctx: NodeContext| async move {
        let answer = ctx.interrupt_with(map! {"question" => "name?"}, schema())?;
        Ok::<_, NodeError>(stategraph::update([("answer", answer)]))
    });
    g.add_edge(START, "ask").add_edge("ask", END);
    g.compile_with(CompileOptions::new().checkpointer(saver))
        .expect("compiles")
}

/// Runs `response_schema.py` in `mode` on `file`; its JSON output.
async fn python(python: &Path, mode: &str, file: &Path) -> J {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/response_schema.py");
    let mut cmd = std::process::Command::new(python);
    cmd.arg(script).arg(mode).arg(file);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("joined")
        .expect("python runs");
    assert!(
        out.status.success(),
        "python {mode} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the script prints JSON")
}

/// The `__interrupt__` write stored on the head checkpoint of `thread`.
async fn interrupt_write(saver: &Arc<dyn CheckpointSaver>, thread: &str) -> Value {
    let head = saver
        .get_tuple(&CheckpointConfig::thread(thread))
        .await
        .expect("read")
        .expect("a checkpoint");
    head.pending_writes
        .into_iter()
        .find(|w| w.channel == "__interrupt__")
        .expect("an interrupt write")
        .value
}

#[tokio::test]
async fn response_schema_round_trips_between_python_and_stategraph() {
    let Some(py) = crate::python() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!(
        "stategraph-schema-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("threads.db");

    // Python asks; stategraph reads the interrupt with its schema.
    let written = python(&py, "write", &file).await;
    let py_interrupt = &written["interrupts"][0];
    assert_eq!(py_interrupt["response_schema"], schema_json());
    let saver: Arc<dyn CheckpointSaver> =
        Arc::new(stategraph::sqlite::SqliteSaver::open(&file).expect("open"));
    let app = graph(saver.clone());
    let state = app
        .get_state(&RunConfig::thread("py"))
        .await
        .expect("state");
    assert_eq!(state.next, ["ask"]);
    let read = &state.interrupts[0];
    assert_eq!(read.id, py_interrupt["id"].as_str().expect("an id"));
    assert_eq!(read.value, map! {"question" => "name?"});
    assert_eq!(read.response_schema, Some(schema()));
    // Python's stored write decodes and re-encodes to the same value (so the same bytes).
    let stored = interrupt_write(&saver, "py").await;
    let items = stored.as_list().expect("a list of interrupts");
    let again: Vec<Value> = items
        .iter()
        .map(|v| Interrupt::from_value(v).expect("an Interrupt").to_value())
        .collect();
    assert_eq!(Value::list(again), stored);
    // stategraph answers Python's question.
    let done = app
        .invoke(Command::resume("Ada"), &RunConfig::thread("py"))
        .await
        .expect("resume")
        .done()
        .expect("finished");
    assert_eq!(done.get("answer"), Some(&Value::from("Ada")));

    // stategraph asks; the outcome and the stored write carry the schema as Python's did.
    let out = app
        .invoke(
            stategraph::update::<_, &str, &str>([]),
            &RunConfig::thread("rs"),
        )
        .await
        .expect("run");
    assert!(out.is_interrupted());
    assert_eq!(out.interrupts[0].response_schema, Some(schema()));
    let ours = interrupt_write(&saver, "rs").await;
    let mut python_form = Interrupt::from_value(&items[0]).expect("an Interrupt");
    python_form.id = out.interrupts[0].id.clone();
    assert_eq!(ours, Value::list(vec![python_form.to_value()]));
    drop(app);
    drop(saver);

    // Python reads stategraph's interrupt with its schema and answers it.
    let read = python(&py, "read", &file).await;
    assert_eq!(
        read["interrupts"],
        json!([{
            "value": {"question": "name?"},
            "id": out.interrupts[0].id,
            "response_schema": schema_json(),
        }])
    );
    assert_eq!(read["resumed"], json!({"answer": "Bo"}));
    std::fs::remove_dir_all(&dir).ok();
}
