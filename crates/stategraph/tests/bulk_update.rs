//! `bulk_update_state` against the pinned Python LangGraph: the same supersteps on the
//! same graph give the same checkpoints (metadata, channel versions, versions seen,
//! values and pending writes), one checkpoint per superstep; bad input is a typed error
//! that stores nothing.
//!
//! The Python side is `tests/interop/bulk_update.py`, run with `STATEGRAPH_PYTHON` or the
//! workspace's `target/langgraph-venv`; without it the comparison prints a note and
//! passes, unless `STATEGRAPH_INTEROP=1`.

mod support;

use std::path::Path;

use std::sync::Arc;
use support::python::python;

use serde_json::{json, Value as J};
use stategraph::channels::LastValue;
use stategraph::checkpoint::{
    ChannelVersions, CheckpointConfig, CheckpointSaver, ListOptions, MemorySaver,
};
use stategraph::{
    list, update, CompileOptions, CompiledGraph, DynState, Error, RunConfig, StateGraph,
    StateUpdate, Value, COPY, END, START,
};
use support::golden::to_json;

/// The chain a -> b -> c: each node appends its name to `value` and to `trail`.
fn chain(saver: Arc<dyn CheckpointSaver>, interrupt_before: &[&str]) -> CompiledGraph<DynState> {
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
            update([("value", Value::from(value)), ("trail", list![n])])
        });
    }
    g.add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", END);
    let options = CompileOptions::new()
        .checkpointer(saver)
        .interrupt_before(interrupt_before.iter().copied());
    g.compile_with(options).expect("compiles")
}

type Update = StateUpdate<Vec<(String, Value)>>;

fn at<const N: usize>(values: [(&str, Value); N], node: &str) -> Update {
    StateUpdate::new(update(values), node)
}

fn major(versions: &ChannelVersions) -> J {
    J::Object(
        versions
            .iter()
            .map(|(k, v)| {
                let text = v.to_string();
                let n: i64 = text
                    .split('.')
                    .next()
                    .unwrap_or("")
                    .parse()
                    .expect("a number");
                (k.clone(), J::from(n))
            })
            .collect(),
    )
}

/// A thread's checkpoints, oldest first, as `bulk_update.py` prints them.
async fn dump(saver: &dyn CheckpointSaver, thread: &str) -> J {
    let cfg = CheckpointConfig::thread(thread);
    let mut tuples = saver
        .list(Some(&cfg), &ListOptions::default())
        .await
        .expect("lists");
    tuples.reverse();
    J::Array(
        tuples
            .iter()
            .map(|t| {
                let c = &t.checkpoint;
                let m = &t.metadata;
                let mut writes: Vec<J> = t
                    .pending_writes
                    .iter()
                    .map(|w| json!([w.channel, to_json(&w.value)]))
                    .collect();
                writes.sort_by_key(|w| w.to_string());
                json!({
                    "metadata": {
                        "source": m.source.as_ref().map(|s| s.as_str()),
                        "step": m.step,
                        "parents": J::Object(
                            m.parents.iter().flatten().map(|(k, v)| (k.clone(), J::from(v.as_str()))).collect()
                        ),
                    },
                    "channel_versions": major(&c.channel_versions),
                    "versions_seen": J::Object(
                        c.versions_seen.iter().map(|(k, v)| (k.clone(), major(v))).collect()
                    ),
                    "channel_values": J::Object(
                        c.channel_values.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()
                    ),
                    "pending_writes": writes,
                })
            })
            .collect(),
    )
}

/// The supersteps `bulk_update.py` applies, on a memory saver: its dump, in its shape.
async fn rust_side() -> J {
    let saver = Arc::new(MemorySaver::new());
    let fresh = chain(saver.clone(), &[]);
    let last = fresh
        .bulk_update_state(
            &RunConfig::thread("fresh"),
            vec![
                vec![at(
                    [("value", Value::from("v1")), ("trail", list!["s1"])],
                    "a",
                )],
                vec![
                    at([("trail", list!["p"])], "a"),
                    at([("trail", list!["q"])], "b"),
                ],
                vec![at([("value", Value::from("v3"))], "b").with_task_id("my-task")],
            ],
        )
        .await
        .expect("bulk update of a new thread");
    let latest = saver
        .get_tuple(&CheckpointConfig::thread("fresh"))
        .await
        .expect("reads")
        .expect("a checkpoint");
    let paused = chain(saver.clone(), &["c"]);
    let pcfg = RunConfig::thread("paused");
    let out = paused
        .invoke(update([("value", "x")]), &pcfg)
        .await
        .expect("runs to c");
    assert!(out.is_interrupted());
    let plast = paused
        .bulk_update_state(
            &pcfg,
            vec![
                vec![
                    at([("trail", list!["m"])], "b"),
                    at([("value", Value::from("z"))], "c"),
                ],
                vec![at([("trail", list!["n"])], "c")],
            ],
        )
        .await
        .expect("bulk update of a paused thread");
    let platest = saver
        .get_tuple(&CheckpointConfig::thread("paused"))
        .await
        .expect("reads")
        .expect("a checkpoint");
    json!({
        "fresh": dump(saver.as_ref(), "fresh").await,
        "fresh_last_is_latest": last.checkpoint_id.as_deref() == Some(latest.checkpoint.id.as_str()),
        "paused": dump(saver.as_ref(), "paused").await,
        "paused_last_is_latest": plast.checkpoint_id.as_deref() == Some(platest.checkpoint.id.as_str()),
    })
}

#[tokio::test]
async fn bulk_update_state_saves_the_checkpoints_python_saves() {
    let Some(python) = python() else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/bulk_update.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "bulk_update.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: J = serde_json::from_slice(&out.stdout).expect("the script prints JSON");
    let got = rust_side().await;
    for key in ["fresh", "paused"] {
        assert_eq!(
            got[key], expected[key],
            "{key}: ours\n{:#}\nPython's\n{:#}",
            got[key], expected[key]
        );
    }
    assert_eq!(expected["fresh_last_is_latest"], J::Bool(true));
    assert_eq!(got["fresh_last_is_latest"], J::Bool(true));
    assert_eq!(expected["paused_last_is_latest"], J::Bool(true));
    assert_eq!(got["paused_last_is_latest"], J::Bool(true));
}

#[tokio::test]
async fn bad_supersteps_are_typed_errors_that_store_nothing() {
    let saver = Arc::new(MemorySaver::new());
    let graph = chain(saver.clone(), &[]);
    let cfg = RunConfig::thread("t");
    let invalid = |r: stategraph::Result<CheckpointConfig>, says: &str| match r {
        Err(Error::InvalidUpdate(m)) => assert!(m.contains(says), "{m}"),
        other => panic!("expected InvalidUpdate({says}), got {other:?}"),
    };
    invalid(
        graph
            .bulk_update_state(&cfg, Vec::<Vec<Update>>::new())
            .await,
        "No supersteps provided",
    );
    invalid(
        graph
            .bulk_update_state(
                &cfg,
                vec![vec![at([("value", Value::from("v"))], "a")], vec![]],
            )
            .await,
        "No updates provided",
    );
    invalid(
        graph
            .bulk_update_state(
                &cfg,
                vec![vec![
                    at([("value", Value::from("v"))], "a"),
                    StateUpdate::inferred(update([("value", "w")])),
                ]],
            )
            .await,
        "as_node is required",
    );
    // The unknown node is in the second superstep: the first is not stored either.
    let unknown = graph
        .bulk_update_state(
            &cfg,
            vec![
                vec![at([("value", Value::from("v"))], "a")],
                vec![at([("value", Value::from("w"))], "nope")],
            ],
        )
        .await;
    assert!(
        matches!(&unknown, Err(Error::UnknownNode { node, .. }) if node == "nope"),
        "{unknown:?}"
    );
    assert_eq!(dump(saver.as_ref(), "t").await, json!([]));
}

/// A run of the chain paused before `c` on thread `thread`.
async fn paused_thread(saver: Arc<dyn CheckpointSaver>, thread: &str) -> CompiledGraph<DynState> {
    let graph = chain(saver, &["c"]);
    let out = graph
        .invoke(update([("value", "x")]), &RunConfig::thread(thread))
        .await
        .expect("runs to c");
    assert!(out.is_interrupted());
    graph
}

/// The task id of the input writes (`uuid5(checkpoint_id, "__input__")`) and whether the
/// copy is stored under its source's parent, as `bulk_update_special.py` prints them.
async fn links(saver: &dyn CheckpointSaver) -> J {
    let list = |t: &str| {
        let cfg = CheckpointConfig::thread(t);
        async move {
            saver
                .list(Some(&cfg), &ListOptions::default())
                .await
                .expect("lists")
        }
    };
    let tuples = list("input").await;
    let paused_at = tuples
        .iter()
        .find(|t| t.metadata.step == Some(2))
        .expect("the paused checkpoint");
    let ns = uuid::Uuid::parse_str(&paused_at.checkpoint.id).expect("a uuid");
    let expected = uuid::Uuid::new_v5(&ns, b"__input__").to_string();
    let ids: Vec<&str> = paused_at
        .pending_writes
        .iter()
        .filter(|w| w.channel == "__start__")
        .map(|w| w.task_id.as_str())
        .collect();
    let copies = list("copy").await;
    let parent = |i: usize| {
        copies[i]
            .parent_config
            .as_ref()
            .and_then(|c| c.checkpoint_id.clone())
    };
    json!({
        "input_task_id_is_uuid5": ids == [expected.as_str()],
        "copy_parent_is_source_parent": parent(0).is_some() && parent(0) == parent(1),
    })
}

/// The special forms `bulk_update_special.py` applies, on a memory saver: its dump.
async fn special_side() -> J {
    let saver = Arc::new(MemorySaver::new());
    let g = chain(saver.clone(), &[]);
    g.bulk_update_state(
        &RunConfig::thread("clear_fresh"),
        vec![vec![Update::clear()]],
    )
    .await
    .expect("clears a new thread");
    let p = paused_thread(saver.clone(), "clear").await;
    p.update_state(
        &RunConfig::thread("clear"),
        Vec::<(String, Value)>::new(),
        Some(END),
    )
    .await
    .expect("clears a paused thread");
    let p = paused_thread(saver.clone(), "clear_fork").await;
    let past = saver
        .get_tuple(&CheckpointConfig::thread("clear_fork"))
        .await
        .expect("reads")
        .expect("a checkpoint")
        .config;
    p.update_state(
        &RunConfig::thread("clear_fork"),
        update([("value", "z")]),
        Some("c"),
    )
    .await
    .expect("updates as c");
    p.bulk_update_state(&past, vec![vec![Update::clear()]])
        .await
        .expect("clears a past checkpoint");
    g.bulk_update_state(
        &RunConfig::thread("input_fresh"),
        vec![vec![Update::input(update([("value", "i")]))]],
    )
    .await
    .expect("input on a new thread");
    let p = paused_thread(saver.clone(), "input").await;
    p.bulk_update_state(
        &RunConfig::thread("input"),
        vec![
            vec![Update::input(update([("trail", list!["t"])]))],
            vec![at([("value", Value::from("w"))], "a")],
        ],
    )
    .await
    .expect("input on a paused thread");
    let p = paused_thread(saver.clone(), "copy").await;
    p.update_state(
        &RunConfig::thread("copy"),
        Vec::<(String, Value)>::new(),
        Some(COPY),
    )
    .await
    .expect("copies");
    let p = paused_thread(saver.clone(), "copy_update").await;
    p.bulk_update_state(
        &RunConfig::thread("copy_update"),
        vec![
            vec![Update::copy()],
            vec![at([("value", Value::from("q"))], "c")],
        ],
    )
    .await
    .expect("copies then updates");
    let mut out = serde_json::Map::new();
    for t in [
        "clear_fresh",
        "clear",
        "clear_fork",
        "input_fresh",
        "input",
        "copy",
        "copy_update",
    ] {
        out.insert(t.into(), dump(saver.as_ref(), t).await);
    }
    out.insert("links".into(), links(saver.as_ref()).await);
    J::Object(out)
}

#[tokio::test]
async fn special_as_node_forms_save_what_python_saves() {
    let Some(python) = python() else {
        return;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop");
    let out = std::process::Command::new(python)
        .arg(dir.join("bulk_update_special.py"))
        .current_dir(&dir)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "bulk_update_special.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected: J = serde_json::from_slice(&out.stdout).expect("the script prints JSON");
    let got = special_side().await;
    for (key, ours) in got.as_object().expect("an object") {
        assert_eq!(
            ours, &expected[key],
            "{key}: ours\n{ours:#}\nPython's\n{:#}",
            expected[key]
        );
    }
    assert_eq!(expected["links"]["input_task_id_is_uuid5"], J::Bool(true));
    assert_eq!(
        expected["links"]["copy_parent_is_source_parent"],
        J::Bool(true)
    );
    let errors = &expected["errors"];
    assert_eq!(
        errors["clear"][1],
        "Cannot apply multiple updates when clearing state"
    );
    assert_eq!(
        errors["input"][1],
        "Cannot apply multiple updates when updating as input"
    );
    assert_eq!(
        errors["copy"][1],
        "Cannot copy checkpoint with multiple updates"
    );
    assert_eq!(
        errors["copy_fresh"][1],
        "Cannot copy a non-existent checkpoint"
    );
}

#[tokio::test]
async fn special_forms_not_alone_are_typed_errors_that_store_nothing() {
    let saver = Arc::new(MemorySaver::new());
    let graph = chain(saver.clone(), &[]);
    let cfg = RunConfig::thread("t");
    let cases = [
        (
            Update::clear(),
            "Cannot apply multiple updates when clearing state",
        ),
        (
            Update::input(update([("value", "v")])),
            "Cannot apply multiple updates when updating as input",
        ),
        (
            Update::copy(),
            "Cannot copy checkpoint with multiple updates",
        ),
    ];
    for (special, says) in cases {
        let r = graph
            .bulk_update_state(
                &cfg,
                vec![
                    vec![at([("value", Value::from("v"))], "a")],
                    vec![special, at([("value", Value::from("w"))], "a")],
                ],
            )
            .await;
        match r {
            Err(Error::InvalidUpdate(m)) => assert_eq!(m, says),
            other => panic!("expected InvalidUpdate({says}), got {other:?}"),
        }
    }
    let copy = graph
        .bulk_update_state(&cfg, vec![vec![Update::copy()]])
        .await;
    match copy {
        Err(Error::InvalidUpdate(m)) => assert_eq!(m, "Cannot copy a non-existent checkpoint"),
        other => panic!("expected InvalidUpdate, got {other:?}"),
    }
    assert_eq!(dump(saver.as_ref(), "t").await, json!([]));
}
