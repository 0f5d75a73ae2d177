//! Interop with Python's `SqliteSaver` (langgraph-checkpoint-sqlite 3.1.2): Python reads a
//! thread we wrote, and we read a thread Python wrote; both sides print what they read in
//! the same tagged JSON (see `tests/interop/common.py`) and the two must be equal.
//!
//! These tests need the pinned Python: `STATEGRAPH_PYTHON`, else the venv
//! `target/langgraph-venv` that `scripts/setup-langgraph.sh` makes. Without it they print a note and pass, unless
//! `STATEGRAPH_INTEROP=1` is set, which makes a missing Python a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value as J};
use stategraph_checkpoint::version_gen::python_float_repr;
use stategraph_checkpoint::{
    list, map, ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, CheckpointTuple, ListOptions, Value,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

use super::support::{count, TempPath, TempSaver};

/// The venv's Python, or `None` (after printing why) when the test should be skipped.
fn python() -> Option<PathBuf> {
    let path = std::env::var_os("STATEGRAPH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/langgraph-venv/bin/python")
        });
    let required = std::env::var("STATEGRAPH_INTEROP").is_ok_and(|v| v == "1");
    if path.exists() {
        return Some(path);
    }
    assert!(
        !required,
        "STATEGRAPH_INTEROP=1 but there is no Python at {path:?}"
    );
    println!("note: skipping the Python interop test: no venv Python at {path:?}");
    None
}

/// Runs one of the scripts in `tests/interop` and parses the JSON it prints.
fn run_script(python: &Path, script: &str, args: &[&str]) -> J {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(script);
    let out = Command::new(python)
        .arg(&script)
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{script:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("script prints JSON")
}

/// A value in the tagged JSON of `common.py`.
fn enc(v: &Value) -> J {
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => json!(b),
        Value::Int(n) => json!({"int": n.to_string()}),
        Value::UInt(n) => json!({"int": n.to_string()}),
        Value::Float(f) => json!({"float": python_float_repr(*f)}),
        Value::Str(s) => json!(s),
        Value::Bytes(b) => json!({"bytes": hex::encode(b)}),
        Value::List(items) => J::Array(items.iter().map(enc).collect()),
        Value::Map(m) => {
            json!({"map": m.iter().map(|(k, v)| json!([enc(k), enc(v)])).collect::<Vec<_>>()})
        }
        Value::Ext(e) => match e.as_object() {
            Some(o) => json!({"object": format!("{}.{}", o.module, o.class)}),
            None => json!({"object": "?"}),
        },
    }
}

fn conf(c: Option<&CheckpointConfig>) -> J {
    c.map_or(J::Null, |c| json!([c.thread_id, c.ns(), c.checkpoint_id]))
}

fn tuple_json(t: Option<&CheckpointTuple>) -> J {
    let Some(t) = t else { return J::Null };
    json!({
        "config": conf(Some(&t.config)),
        "parent_config": conf(t.parent_config.as_ref()),
        "checkpoint": enc(&t.checkpoint.to_value(true)),
        "metadata": enc(&t.metadata.to_value()),
        "pending_writes": t.pending_writes.iter()
            .map(|w| json!([w.task_id, w.channel, enc(&w.value)]))
            .collect::<Vec<_>>(),
    })
}

/// What `common.dump` prints, from our saver.
async fn dump(saver: &dyn CheckpointSaver, thread: &str) -> J {
    let mut all = CheckpointConfig::thread(thread);
    all.checkpoint_ns = None;
    let listed = saver
        .list(Some(&all), &ListOptions::default())
        .await
        .expect("list");
    let latest = saver
        .get_tuple(&CheckpointConfig::thread(thread))
        .await
        .expect("get_tuple");
    json!({
        "list": listed.iter().map(|t| tuple_json(Some(t))).collect::<Vec<_>>(),
        "latest": tuple_json(latest.as_ref()),
    })
}

fn version(n: i64) -> ChannelVersion {
    ChannelVersion::Str(format!("{n:032}.0.5"))
}

/// Writes a thread with values of every plain type, metadata Python must read as JSON,
/// writes with reserved channels and task paths, and a child namespace.
async fn write_rich_thread(saver: &dyn CheckpointSaver, thread: &str) {
    let values = [
        ("int", Value::Int(-7)),
        ("big", Value::UInt(u64::MAX)),
        ("float", Value::Float(1.0)),
        ("tiny", Value::Float(1e-7)),
        ("text", Value::from("é\n\"\u{0}😀")),
        ("bytes", Value::bytes(vec![0, 255, 10])),
        ("none", Value::Nil),
        ("flag", Value::Bool(true)),
        (
            "nested",
            map! {"a" => list![1, 2.5, Value::Nil], "b" => map! {"c" => "d"}},
        ),
    ];
    let mut parent: Option<String> = None;
    for (step, ns) in [(0, ""), (1, ""), (2, ""), (0, "child:1")] {
        let id = format!("1ef00000-0000-6000-8000-00000000000{step}");
        let mut cp = Checkpoint::empty(id.as_str(), format!("2025-01-01T00:00:0{step}+00:00"));
        for (k, v) in values.iter().take(3 + 2 * step as usize) {
            cp.channel_values.insert((*k).into(), v.clone());
            cp.channel_versions.insert((*k).into(), version(step + 1));
        }
        cp.versions_seen
            .insert("node".into(), cp.channel_versions.clone());
        cp.updated_channels = Some(vec!["int".into()]);
        let md = CheckpointMetadata::new(CheckpointSource::Loop, step)
            .with("user", "ü\n\"\u{0}")
            .with("score", 1.5)
            .with("nested", map! {"a" => list![1, Value::Nil], "t" => "\u{1}"})
            .with("none", Value::Nil);
        let mut config = CheckpointConfig::thread(thread)
            .with_ns(ns)
            .with_configurable("run_id", "run-1");
        config.checkpoint_id = if ns.is_empty() { parent.clone() } else { None };
        let stored = saver
            .put(&config, &cp, &md, &Default::default())
            .await
            .expect("put");
        let writes = vec![
            ("a".to_owned(), Value::from(step)),
            ("__interrupt__".to_owned(), map! {"value" => "why?"}),
            ("b".to_owned(), Value::bytes(vec![1, 2])),
        ];
        saver
            .put_writes(&stored, &writes, "task-b", "~__pregel_pull, b")
            .await
            .expect("put_writes");
        saver
            .put_writes(
                &stored,
                &[("__error__".to_owned(), Value::from("boom"))],
                "task-a",
                "~__pregel_pull, a",
            )
            .await
            .expect("put_writes");
        if ns.is_empty() {
            parent = Some(id);
        }
    }
}

#[tokio::test]
async fn python_reads_what_we_write() {
    let Some(python) = python() else { return };
    let saver = TempSaver::new("to-python");
    write_rich_thread(&*saver, "rust-thread").await;
    let ours = dump(&*saver, "rust-thread").await;
    let path = saver.file.path().to_str().expect("utf-8 path").to_owned();
    let theirs = run_script(&python, "read_thread.py", &[&path, "rust-thread"]);
    assert_eq!(theirs["list"].as_array().map(Vec::len), Some(4));
    assert_eq!(theirs, ours);
}

#[tokio::test]
async fn we_read_what_python_writes() {
    let Some(python) = python() else { return };
    let file = TempPath::new("from-python");
    let path = file.path().to_str().expect("utf-8 path").to_owned();
    let theirs = run_script(&python, "write_thread.py", &[&path, "py-thread"]);
    let saver = SqliteSaver::open(file.path()).expect("open Python's file");
    let ours = dump(&saver, "py-thread").await;
    let listed = ours["list"].as_array().expect("list");
    assert!(
        listed.len() > 10,
        "the graph wrote {} checkpoints",
        listed.len()
    );
    assert_eq!(ours, theirs);
    // Every write row belongs to a listed checkpoint, and we read each of them.
    let read: usize = listed
        .iter()
        .map(|t| t["pending_writes"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(read as i64, count(&file.raw(), "writes"));
}
