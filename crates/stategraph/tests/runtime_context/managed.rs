//! LangGraph's managed values `RemainingSteps` / `IsLastStep`: `ctx.remaining_steps()`,
//! `ctx.is_last_step()` and `#[state(managed = ...)]` fields, against the pinned Python
//! (`managed.py` beside this file; `managed.json` is what it printed for the nodes).

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value as J};
use stategraph::checkpoint::CheckpointSaver;
use stategraph::{update, DynState, NodeContext, RunConfig, State, StateGraph, Value, END, START};

use crate::support::golden::to_json;
use crate::support::python::python;

#[derive(State, Clone, Debug, Default, PartialEq)]
struct Looping {
    #[state(reducer = add)]
    seen: Vec<(i64, bool)>,
    #[state(managed = remaining_steps)]
    remaining_steps: i64,
    #[state(managed = is_last_step)]
    is_last_step: bool,
}

/// A node appending what it sees, after checking that the state and the context agree.
async fn look(s: Looping, ctx: NodeContext) -> LoopingUpdate {
    assert_eq!(s.remaining_steps, ctx.remaining_steps());
    assert_eq!(s.is_last_step, ctx.is_last_step());
    LoopingUpdate::default().seen(vec![(s.remaining_steps, s.is_last_step)])
}

/// START -> loop, back to loop until the conditional edge sees `is_last_step`.
fn loop_graph() -> StateGraph<Looping> {
    let mut g = StateGraph::<Looping>::new();
    g.add_node("loop", look);
    g.add_edge(START, "loop");
    g.add_conditional_edges(
        "loop",
        |s: &Looping| {
            if s.is_last_step {
                END
            } else {
                "loop"
            }
        },
    );
    g
}

/// START -> outer -> sub -> END, `sub` being [`loop_graph`].
fn outer_graph() -> StateGraph<Looping> {
    let sub = loop_graph().compile().expect("compiles");
    let mut g = StateGraph::<Looping>::new();
    g.add_node("outer", look);
    g.add_subgraph("sub", &sub);
    g.add_edge(START, "outer");
    g.add_edge("outer", "sub");
    g.add_edge("sub", END);
    g
}

fn seen(values: &indexmap::IndexMap<String, Value>) -> J {
    json!({ "seen": to_json(values.get("seen").expect("seen")) })
}

/// What Python's nodes saw (`managed.json`).
fn expected() -> J {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime_context/managed.json");
    serde_json::from_slice(&std::fs::read(file).expect("fixture")).expect("json")
}

/// Runs the graphs of `managed.py` on threads `{prefix}` and `{prefix}-sub`; returns
/// what the nodes saw, as the script prints it.
async fn run_all(saver: Arc<dyn CheckpointSaver>, prefix: &str) -> J {
    let app = loop_graph()
        .compile_with(stategraph::CompileOptions::new().checkpointer(saver.clone()))
        .expect("compiles");
    let cfg = RunConfig::thread(prefix);
    let first = app
        .invoke(
            LoopingUpdate::default().seen(vec![]),
            &cfg.clone().recursion_limit(4),
        )
        .await
        .expect("first run");
    let second = app
        .invoke(
            LoopingUpdate::default().seen(vec![]),
            &cfg.clone().recursion_limit(6),
        )
        .await
        .expect("second run");
    let outer = outer_graph()
        .compile_with(stategraph::CompileOptions::new().checkpointer(saver))
        .expect("compiles");
    let sub_cfg = RunConfig::thread(format!("{prefix}-sub")).recursion_limit(5);
    let out = outer
        .invoke(LoopingUpdate::default().seen(vec![]), &sub_cfg)
        .await
        .expect("outer run");
    json!({
        "loop": [seen(&first.values), seen(&second.values)],
        "outer": seen(&out.values),
    })
}

#[tokio::test]
async fn nodes_and_edges_see_pythons_remaining_steps() {
    let saver: Arc<dyn CheckpointSaver> = Arc::new(stategraph::checkpoint::MemorySaver::new());
    let got = run_all(saver, "t").await;
    let want = expected();
    assert_eq!(got["loop"], want["loop"]);
    assert_eq!(got["outer"], want["outer"]);
}

#[test]
fn managed_fields_are_no_channels_and_no_writes() {
    let names: Vec<String> = Looping::channels().into_iter().map(|(k, _)| k).collect();
    assert_eq!(names, vec!["seen".to_owned()]);
    let managed: Vec<(String, stategraph::Managed)> = Looping::managed();
    assert_eq!(
        managed,
        vec![
            (
                "remaining_steps".to_owned(),
                stategraph::Managed::RemainingSteps
            ),
            ("is_last_step".to_owned(), stategraph::Managed::IsLastStep),
        ]
    );
    let s = Looping {
        seen: vec![],
        remaining_steps: 3,
        is_last_step: true,
    };
    let keys: Vec<String> = s
        .to_values()
        .expect("values")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, vec!["seen".to_owned()]);
}

#[tokio::test]
async fn the_recursion_limit_error_comes_after_the_last_step() {
    // A graph that ignores is_last_step: as in Python (`step > stop` fails), the step
    // after the last one still runs, with 0 steps left, then the limit.
    let mut g = StateGraph::<DynState>::with_channels(vec![(
        "seen".into(),
        Box::new(stategraph::channels::BinaryOperatorAggregate::new(
            stategraph::reducers::add(),
            None,
        )) as _,
    )]);
    g.add_node("loop", |_: DynState, ctx: NodeContext| async move {
        // A write to the managed value's key is no channel write: dropped, as Python's.
        update([
            (
                "seen",
                Value::list(vec![Value::list(vec![
                    ctx.remaining_steps().into(),
                    ctx.is_last_step().into(),
                ])]),
            ),
            ("remaining_steps", Value::from(99)),
        ])
    });
    g.add_edge(START, "loop");
    g.add_edge("loop", "loop");
    let app = g
        .compile_with(
            stategraph::CompileOptions::new()
                .checkpointer(Arc::new(stategraph::checkpoint::MemorySaver::new())),
        )
        .expect("compiles");
    let cfg = RunConfig::thread("limit").recursion_limit(3);
    let err = app
        .invoke(update([("seen", Value::list(vec![]))]), &cfg)
        .await
        .expect_err("hits the limit");
    assert!(matches!(err, stategraph::Error::RecursionLimit(3)), "{err}");
    let state = app.get_state(&cfg).await.expect("reads");
    assert_eq!(
        to_json(state.values.get("seen").expect("seen")),
        json!([[2, false], [1, true], [0, false]])
    );
    assert!(state.values.get("remaining_steps").is_none());
}

#[tokio::test]
async fn the_stored_checkpoints_are_pythons() {
    let Some(python) = python() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!(
        "stategraph-managed-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("threads.db");
    let saver: Arc<dyn CheckpointSaver> =
        Arc::new(stategraph::sqlite::SqliteSaver::open(&file).expect("opens"));
    let got = run_all(saver, "rust").await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime_context/managed.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(&file)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "managed.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let py: J = serde_json::from_slice(&out.stdout).expect("the script prints JSON");
    assert_eq!(got["loop"], py["loop"]);
    assert_eq!(got["outer"], py["outer"]);
    assert_eq!(py["loop"], expected()["loop"], "managed.json is stale");
    let threads = &py["threads"];
    assert!(!threads["rust"].as_array().expect("list").is_empty());
    assert_eq!(threads["rust"], threads["py"]);
    assert_eq!(threads["rust-sub"], threads["py-sub"]);
    let _ = std::fs::remove_dir_all(&dir);
}
