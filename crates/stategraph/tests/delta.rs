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
    match &raw {
        Raw::Sqlite(path) => assert_sqlite_rows(&trace["sqlite"], path),
        Raw::Postgres(pool, _) if trace.get("postgres").is_some() => {
            assert_postgres_rows(&trace["postgres"], pool).await;
        }
        _ => {}
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
