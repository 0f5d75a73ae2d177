//! DeltaChannel (docs/format.md#deltachannel): the golden chat thread of Python LangGraph
//! reproduced byte for
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
                Value::list(vec![Value::from(format!("echo:{last}"))]),
            ),
            ("turns", Value::Int(turns + 1)),
        ])
    });
    g.add_edge(START, "bot").add_edge("bot", END);
    g
}

fn said(text: &str) -> Vec<(String, Value)> {
    vec![("messages".to_owned(), Value::list(vec![Value::from(text)]))]
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

/// Where the raw rows of a SQL saver can be read.
enum Raw {
    None,
    Sqlite(std::path::PathBuf),
    /// The pool, and the schema guard that drops the test schema at the end.
    Postgres(
        stategraph_checkpoint_postgres::deadpool_postgres::Pool,
        #[allow(dead_code)] PostgresSchema,
    ),
}

type Backend = (
    std::sync::Arc<dyn CheckpointSaver>,
    Option<std::sync::Arc<stategraph::checkpoint::MemorySaver>>,
    Raw,
);

/// A database file that is removed when dropped.
struct TempFile(std::path::PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", self.0.display()));
        }
    }
}

async fn backend(on: On) -> Option<Backend> {
    let versions = || {
        stategraph::checkpoint::version_gen::VersionGenerator::python_seeded(
            support::golden::SEED + 1,
        )
    };
    match on {
        On::Memory => {
            let m = saver();
            Some((m.clone(), Some(m), Raw::None))
        }
        On::Sqlite => {
            let path = std::env::temp_dir().join(format!(
                "stategraph-delta-{}-{}.db",
                std::process::id(),
                uuid::Uuid::new_v4()
            ));
            let s = stategraph::sqlite::SqliteSaver::open(&path)
                .unwrap()
                .with_versions(versions());
            Some((std::sync::Arc::new(s), None, Raw::Sqlite(path)))
        }
        On::Postgres => {
            let (s, guard) = support::savers::postgres_fenced().await?;
            let pool = s.pool().clone();
            Some((
                std::sync::Arc::new(s.with_versions(versions())),
                None,
                Raw::Postgres(pool, guard),
            ))
        }
    }
}

/// Runs the trace's conversation; checks every output, then the stored bytes (memory) and
/// the history of values, metadata and `next` (every saver).
async fn delta_chat_is_reproduced(on: On) {
    let Some((saver, memory, raw)) = backend(on).await else {
        return;
    };
    let _file = match &raw {
        Raw::Sqlite(path) => Some(TempFile(path.clone())),
        _ => None,
    };
    let trace = load("delta_chat");
    let graph = chat_graph(2)
        .compile_with(CompileOptions::new().checkpointer(saver.clone()))
        .unwrap()
        .with_sources(sources());
    for (i, call) in trace["calls"].as_array().unwrap().iter().enumerate() {
        let cfg = RunConfig::thread(call["thread"].as_str().unwrap());
        match call["kind"].as_str().unwrap() {
            "replay" => {
                let at = cfg
                    .clone()
                    .at_checkpoint(call["checkpoint_id"].as_str().unwrap());
                let out = graph.invoke(stategraph::NoInput, &at).await.unwrap();
                assert_eq!(values_json(&out.values), call["output"], "call {i}");
            }
            "overwrite" => {
                let out = graph
                    .invoke(
                        vec![(
                            "messages".to_owned(),
                            overwrite(call["input"]["messages"][0].as_str().unwrap()),
                        )],
                        &cfg,
                    )
                    .await
                    .unwrap();
                assert_eq!(values_json(&out.values), call["output"], "call {i}");
            }
            "invoke" => {
                let text = call["input"]["messages"][0].as_str().unwrap();
                let out = graph.invoke(said(text), &cfg).await.unwrap();
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
    match &raw {
        Raw::Sqlite(path) => assert_sqlite_rows(&trace["sqlite"], path),
        Raw::Postgres(pool, _) if trace.get("postgres").is_some() => {
            assert_postgres_rows(&trace["postgres"], pool).await;
        }
        _ => {}
    }
    for (thread, expected) in trace["history"].as_object().unwrap() {
        let history = graph
            .get_state_history(&RunConfig::thread(thread.as_str()), &Default::default())
            .await
            .unwrap();
        assert_history(thread, &history, expected.as_array().unwrap());
    }
}

/// `langgraph.types.Overwrite([text])`, as Python stores it.
fn overwrite(text: &str) -> Value {
    let mut data = stategraph::checkpoint::Map::new();
    data.insert("value", Value::list(vec![Value::from(text)]));
    data.insert("type", "__overwrite__");
    Value::ext(stategraph::checkpoint::Ext::Object(
        stategraph::checkpoint::Object {
            code: stategraph::checkpoint::ObjectCode::ConstructorKwArgs,
            module: "langgraph.types".into(),
            class: "Overwrite".into(),
            data: Value::Map(data),
            method: None,
        },
    ))
}

/// A history (newest first) equal to the trace's: ids, values, metadata, next.
fn assert_history(
    thread: &str,
    history: &[stategraph::pregel::snapshot::StateSnapshot],
    expected: &[J],
) {
    assert_eq!(history.len(), expected.len(), "{thread}: history length");
    for (i, (s, e)) in history.iter().zip(expected).enumerate() {
        let id = s.config.as_ref().and_then(|c| c.checkpoint_id.clone());
        assert_eq!(
            id.as_deref(),
            e["checkpoint_id"].as_str(),
            "{thread} {i}: id"
        );
        assert_eq!(values_json(&s.values), e["values"], "{thread} {i}: values");
        assert_eq!(
            s.metadata.as_ref().map(|m| to_json(&m.to_value())),
            Some(e["metadata"].clone()),
            "{thread} {i}: metadata"
        );
        assert_eq!(J::from(s.next.clone()), e["next"], "{thread} {i}: next");
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

/// Rows rendered as `key -> columns`, for comparison.
type Rows = std::collections::BTreeMap<String, String>;

fn text(j: &J) -> String {
    match j {
        J::Null => "NULL".to_owned(),
        J::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn assert_rows(what: &str, want: &Rows, got: &Rows) {
    let mut diffs = Vec::new();
    for (k, v) in want {
        match got.get(k) {
            None => diffs.push(format!("missing {k}: {v}")),
            Some(g) if g != v => diffs.push(format!("differs {k}:\n  want {v}\n  got  {g}")),
            _ => {}
        }
    }
    for k in got.keys().filter(|k| !want.contains_key(*k)) {
        diffs.push(format!("extra {k}"));
    }
    assert!(want.len() > 1, "{what}: the trace has rows");
    assert!(diffs.is_empty(), "{what}:\n{}", diffs.join("\n"));
}

/// The engine's SQLite rows equal the rows Python's SqliteSaver wrote, byte for byte.
fn assert_sqlite_rows(trace: &J, path: &std::path::Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut want = Rows::new();
    for c in trace["checkpoints"].as_array().unwrap() {
        want.insert(
            format!(
                "{}|{}|{}",
                text(&c["thread_id"]),
                text(&c["checkpoint_ns"]),
                text(&c["checkpoint_id"])
            ),
            format!(
                "{} {} {} {}",
                text(&c["parent_checkpoint_id"]),
                text(&c["type"]),
                text(&c["checkpoint_hex"]),
                hex::encode(text(&c["metadata_text"]))
            ),
        );
    }
    let mut got = Rows::new();
    let mut stmt = conn
        .prepare(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
             checkpoint, metadata FROM checkpoints",
        )
        .unwrap();
    let mut rows = stmt.query([]).unwrap();
    while let Some(r) = rows.next().unwrap() {
        let parent: Option<String> = r.get(3).unwrap();
        let tag: Option<String> = r.get(4).unwrap();
        let cp: Vec<u8> = r.get(5).unwrap();
        let md: Vec<u8> = r.get(6).unwrap();
        got.insert(
            format!(
                "{}|{}|{}",
                r.get::<_, String>(0).unwrap(),
                r.get::<_, String>(1).unwrap(),
                r.get::<_, String>(2).unwrap()
            ),
            format!(
                "{} {} {} {}",
                parent.unwrap_or_else(|| "NULL".into()),
                tag.unwrap_or_else(|| "NULL".into()),
                hex::encode(cp),
                hex::encode(md)
            ),
        );
    }
    assert_rows("sqlite checkpoints", &want, &got);
    let mut want = Rows::new();
    for w in trace["writes"].as_array().unwrap() {
        want.insert(
            format!(
                "{}|{}|{}|{}|{}",
                text(&w["thread_id"]),
                text(&w["checkpoint_ns"]),
                text(&w["checkpoint_id"]),
                text(&w["task_id"]),
                w["idx"]
            ),
            format!(
                "{} {} {} {}",
                text(&w["task_path"]),
                text(&w["channel"]),
                text(&w["type"]),
                text(&w["value_hex"])
            ),
        );
    }
    let mut got = Rows::new();
    let mut stmt = conn
        .prepare(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, \
             type, value FROM writes",
        )
        .unwrap();
    let mut rows = stmt.query([]).unwrap();
    while let Some(r) = rows.next().unwrap() {
        let value: Option<Vec<u8>> = r.get(8).unwrap();
        got.insert(
            format!(
                "{}|{}|{}|{}|{}",
                r.get::<_, String>(0).unwrap(),
                r.get::<_, String>(1).unwrap(),
                r.get::<_, String>(2).unwrap(),
                r.get::<_, String>(3).unwrap(),
                r.get::<_, i64>(4).unwrap()
            ),
            format!(
                "{} {} {} {}",
                r.get::<_, String>(5).unwrap(),
                r.get::<_, String>(6).unwrap(),
                r.get::<_, Option<String>>(7)
                    .unwrap()
                    .unwrap_or_else(|| "NULL".into()),
                hex::encode(value.unwrap_or_default())
            ),
        );
    }
    assert_rows("sqlite writes", &want, &got);
}

/// The engine's Postgres rows equal the rows Python's PostgresSaver wrote: JSONB as the
/// server prints it, blobs and writes byte for byte.
async fn assert_postgres_rows(
    trace: &J,
    pool: &stategraph_checkpoint_postgres::deadpool_postgres::Pool,
) {
    let client = pool.get().await.unwrap();
    let mut want = Rows::new();
    for c in trace["checkpoints"].as_array().unwrap() {
        want.insert(
            format!("{}|{}", text(&c["thread_id"]), text(&c["checkpoint_id"])),
            format!(
                "{} {} {} {}",
                text(&c["parent_checkpoint_id"]),
                text(&c["type"]),
                text(&c["checkpoint_jsonb_text"]),
                text(&c["metadata_jsonb_text"])
            ),
        );
    }
    let mut got = Rows::new();
    for r in client
        .query(
            "SELECT thread_id, checkpoint_id, parent_checkpoint_id, type, checkpoint::text, \
             metadata::text FROM checkpoints",
            &[],
        )
        .await
        .unwrap()
    {
        let opt = |i: usize| {
            r.get::<_, Option<String>>(i)
                .unwrap_or_else(|| "NULL".into())
        };
        got.insert(
            format!("{}|{}", r.get::<_, String>(0), r.get::<_, String>(1)),
            format!("{} {} {} {}", opt(2), opt(3), opt(4), opt(5)),
        );
    }
    assert_rows("postgres checkpoints", &want, &got);
    let mut want = Rows::new();
    for b in trace["checkpoint_blobs"].as_array().unwrap() {
        want.insert(
            format!(
                "{}|{}|{}",
                text(&b["thread_id"]),
                text(&b["channel"]),
                text(&b["version"])
            ),
            format!("{} {}", text(&b["type"]), text(&b["blob_hex"])),
        );
    }
    let mut got = Rows::new();
    for r in client
        .query(
            "SELECT thread_id, channel, version, type, blob FROM checkpoint_blobs",
            &[],
        )
        .await
        .unwrap()
    {
        let blob: Option<Vec<u8>> = r.get(4);
        got.insert(
            format!(
                "{}|{}|{}",
                r.get::<_, String>(0),
                r.get::<_, String>(1),
                r.get::<_, String>(2)
            ),
            format!(
                "{} {}",
                r.get::<_, String>(3),
                blob.map(hex::encode).unwrap_or_else(|| "NULL".into())
            ),
        );
    }
    assert_rows("postgres blobs", &want, &got);
    let mut want = Rows::new();
    for w in trace["checkpoint_writes"].as_array().unwrap() {
        want.insert(
            format!(
                "{}|{}|{}|{}",
                text(&w["thread_id"]),
                text(&w["checkpoint_id"]),
                text(&w["task_id"]),
                w["idx"]
            ),
            format!(
                "{} {} {} {}",
                text(&w["task_path"]),
                text(&w["channel"]),
                text(&w["type"]),
                text(&w["blob_hex"])
            ),
        );
    }
    let mut got = Rows::new();
    for r in client
        .query(
            "SELECT thread_id, checkpoint_id, task_id, idx, task_path, channel, type, blob \
             FROM checkpoint_writes",
            &[],
        )
        .await
        .unwrap()
    {
        got.insert(
            format!(
                "{}|{}|{}|{}",
                r.get::<_, String>(0),
                r.get::<_, String>(1),
                r.get::<_, String>(2),
                r.get::<_, i32>(3)
            ),
            format!(
                "{} {} {} {}",
                r.get::<_, String>(4),
                r.get::<_, String>(5),
                r.get::<_, Option<String>>(6)
                    .unwrap_or_else(|| "NULL".into()),
                hex::encode(r.get::<_, Vec<u8>>(7))
            ),
        );
    }
    assert_rows("postgres writes", &want, &got);
}

/// Interop with the pinned Python on one SQLite file or Postgres schema: each side writes
/// a delta chat thread (snapshots every 3 updates, so some states sit between snapshots),
/// the other reads every state of its history equal and continues it.
mod interop {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use serde_json::Value as J;
    use stategraph::checkpoint::CheckpointSaver;
    use stategraph::{CompileOptions, DynState, RunConfig};

    use super::{chat_graph, said, values_json};
    use crate::support;

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
        println!("note: skipping: no venv Python at {path:?}");
        None
    }

    struct Db {
        python: PathBuf,
        args: [String; 2],
        dir: Option<PathBuf>,
        saver: Arc<dyn CheckpointSaver>,
        _schema: Option<support::savers::PostgresSchema>,
    }

    impl Drop for Db {
        fn drop(&mut self) {
            if let Some(dir) = &self.dir {
                std::fs::remove_dir_all(dir).ok();
            }
        }
    }

    async fn db(postgres: bool) -> Option<Db> {
        let python = python()?;
        if postgres {
            let (saver, schema) = support::savers::postgres_saver().await?;
            return Some(Db {
                python,
                args: ["postgres".into(), schema.url()],
                dir: None,
                saver: Arc::new(saver),
                _schema: Some(schema),
            });
        }
        let dir = std::env::temp_dir().join(format!("stategraph-delta-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("threads.db");
        let saver = stategraph::sqlite::SqliteSaver::open(&file).unwrap();
        Some(Db {
            python,
            args: ["sqlite".into(), file.to_str().unwrap().into()],
            dir: Some(dir),
            saver: Arc::new(saver),
            _schema: None,
        })
    }

    impl Db {
        async fn python(&self, mode: &str, thread: &str, turns: usize) -> J {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/delta_chat.py");
            let mut cmd = std::process::Command::new(&self.python);
            cmd.arg(script)
                .arg(mode)
                .args(&self.args)
                .arg(thread)
                .arg(turns.to_string());
            let out = tokio::task::spawn_blocking(move || cmd.output())
                .await
                .unwrap()
                .unwrap();
            assert!(
                out.status.success(),
                "python {mode}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_slice(&out.stdout).unwrap()
        }

        fn graph(&self) -> stategraph::CompiledGraph<DynState> {
            chat_graph(3)
                .compile_with(CompileOptions::new().checkpointer(self.saver.clone()))
                .unwrap()
        }

        /// `get_state_history` as the script renders it.
        async fn history(&self, thread: &str) -> Vec<J> {
            let history = self
                .graph()
                .get_state_history(&RunConfig::thread(thread), &Default::default())
                .await
                .unwrap();
            history
                .iter()
                .map(|s| {
                    serde_json::json!({
                        "checkpoint_id": s.config.as_ref().and_then(|c| c.checkpoint_id.clone()),
                        "values": values_json(&s.values),
                        "next": s.next,
                        "metadata": s.metadata.as_ref().map(|m| support::golden::to_json(&m.to_value())),
                    })
                })
                .collect()
        }
    }

    fn assert_histories(python: &J, rust: &[J], what: &str) {
        let python = python["history"].as_array().unwrap();
        assert_eq!(python.len(), rust.len(), "{what}: history length");
        for (i, (p, r)) in python.iter().zip(rust).enumerate() {
            assert_eq!(p, r, "{what}: entry {i}");
        }
    }

    async fn python_writes_rust_reads_and_continues(postgres: bool) {
        let Some(db) = db(postgres).await else {
            return;
        };
        let written = db.python("write", "py", 5).await;
        assert_histories(&written, &db.history("py").await, "Python's thread");
        let out = db
            .graph()
            .invoke(said("from rust"), &RunConfig::thread("py"))
            .await
            .unwrap();
        let msgs = values_json(&out.values)["messages"].clone();
        assert_eq!(msgs.as_array().unwrap().len(), 12, "{msgs}");
        assert_eq!(msgs[11], "echo:from rust");
        let read = db.python("read", "py", 0).await;
        assert_histories(&read, &db.history("py").await, "after stategraph's turn");
        assert_eq!(read["history"][0]["values"], values_json(&out.values));
    }

    async fn rust_writes_python_reads_and_continues(postgres: bool) {
        let Some(db) = db(postgres).await else {
            return;
        };
        let graph = db.graph();
        let cfg = RunConfig::thread("rs");
        for i in 0..5 {
            let _ = graph.invoke(said(&format!("rs-{i}")), &cfg).await.unwrap();
        }
        let read = db.python("read", "rs", 0).await;
        assert_histories(&read, &db.history("rs").await, "stategraph's thread");
        let continued = db.python("continue", "rs", 0).await;
        let msgs = continued["output"]["messages"].as_array().unwrap().clone();
        assert_eq!(msgs.len(), 12);
        assert_eq!(msgs[11], "echo:from python");
        assert_histories(&continued, &db.history("rs").await, "after Python's turn");
        let out = graph.invoke(said("again"), &cfg).await.unwrap();
        assert_eq!(
            values_json(&out.values)["messages"]
                .as_array()
                .unwrap()
                .len(),
            14
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn python_writes_rust_reads_and_continues_sqlite() {
        python_writes_rust_reads_and_continues(false).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn python_writes_rust_reads_and_continues_postgres() {
        python_writes_rust_reads_and_continues(true).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rust_writes_python_reads_and_continues_sqlite() {
        rust_writes_python_reads_and_continues(false).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rust_writes_python_reads_and_continues_postgres() {
        rust_writes_python_reads_and_continues(true).await;
    }
}

/// The chat of the trace on a typed state: `#[state(delta(...))]` makes the same channel,
/// so the thread's history is Python's.
mod typed {
    use stategraph::{CompileOptions, RunConfig, State, StateGraph, END, START};

    use super::{assert_history, load, saver, sources};

    #[derive(State, Debug, Clone)]
    struct Chat {
        #[state(delta(reducer = add, snapshot_frequency = 2))]
        messages: Vec<String>,
        turns: i64,
    }

    #[tokio::test]
    async fn a_typed_delta_field_reproduces_the_chat_thread() {
        let described: Vec<(String, &str)> = Chat::channels()
            .iter()
            .map(|(n, c)| (n.clone(), c.kind()))
            .collect();
        assert_eq!(described[0], ("messages".to_owned(), "DeltaChannel"));
        assert_eq!(Chat::channels()[0].1.delta_snapshot_frequency(), Some(2));

        let mut g = StateGraph::<Chat>::new();
        g.add_node("bot", |s: Chat| async move {
            let last = s.messages.last().cloned().unwrap_or_default();
            ChatUpdate::default()
                .messages(vec![format!("echo:{last}")])
                .turns(s.turns + 1)
        });
        g.add_edge(START, "bot").add_edge("bot", END);
        let saver = saver();
        let graph = g
            .compile_with(CompileOptions::new().checkpointer(saver.clone()))
            .unwrap()
            .with_sources(sources());
        let trace = load("delta_chat");
        let cfg = RunConfig::thread("chat");
        for call in trace["calls"].as_array().unwrap() {
            if call["thread"] != "chat" {
                continue;
            }
            match call["kind"].as_str().unwrap() {
                "invoke" => {
                    let text = call["input"]["messages"][0].as_str().unwrap();
                    let out = graph
                        .invoke(ChatUpdate::default().messages(vec![text.to_owned()]), &cfg)
                        .await
                        .unwrap();
                    let want: Vec<String> =
                        serde_json::from_value(call["output"]["messages"].clone()).unwrap();
                    assert_eq!(out.messages, want);
                    assert_eq!(Some(out.turns), call["output"]["turns"].as_i64());
                }
                "update_state" => {
                    graph
                        .update_state(
                            &cfg,
                            ChatUpdate::default().messages(vec!["(edited)".to_owned()]),
                            Some("bot"),
                        )
                        .await
                        .unwrap();
                }
                other => panic!("unexpected call {other}"),
            }
        }
        let history = graph
            .get_state_history(&cfg, &Default::default())
            .await
            .unwrap();
        assert_history(
            "chat",
            &history,
            trace["history"]["chat"].as_array().unwrap(),
        );
    }
}

/// Durability `exit` saves one checkpoint per run: the delta channels the run wrote are
/// snapshotted there, so the thread reads back whole on every saver (Python stores the
/// run's writes under synthetic task ids instead; both read the other's, see design.md).
mod exit_durability {
    use stategraph::checkpoint::CheckpointSaver;
    use stategraph::{CompileOptions, Durability, RunConfig};

    use super::{chat_graph, said, values_json};

    async fn three_turns_read_back(saver: std::sync::Arc<dyn CheckpointSaver>) {
        let graph = chat_graph(5)
            .compile_with(CompileOptions::new().checkpointer(saver))
            .unwrap();
        let cfg = RunConfig::thread("exit").durability(Durability::Exit);
        for text in ["a", "b", "c"] {
            let _ = graph.invoke(said(text), &cfg).await.unwrap();
        }
        let want = serde_json::json!({
            "messages": ["a", "echo:a", "b", "echo:b", "c", "echo:c"],
            "turns": 3,
        });
        let state = graph.get_state(&RunConfig::thread("exit")).await.unwrap();
        assert_eq!(values_json(&state.values), want);
        let history = graph
            .get_state_history(&RunConfig::thread("exit"), &Default::default())
            .await
            .unwrap();
        assert_eq!(history.len(), 3, "one checkpoint per run");
        assert_eq!(
            values_json(&history[1].values)["messages"],
            serde_json::json!(["a", "echo:a", "b", "echo:b"])
        );
        // A later turn in the default mode continues from the exit checkpoints.
        let out = graph
            .invoke(said("d"), &RunConfig::thread("exit"))
            .await
            .unwrap();
        assert_eq!(
            values_json(&out.values)["messages"]
                .as_array()
                .map(Vec::len),
            Some(8)
        );
    }

    #[tokio::test]
    async fn memory() {
        three_turns_read_back(super::saver()).await;
    }

    #[tokio::test]
    async fn sqlite() {
        three_turns_read_back(std::sync::Arc::new(
            stategraph::sqlite::SqliteSaver::in_memory().unwrap(),
        ))
        .await;
    }
}
