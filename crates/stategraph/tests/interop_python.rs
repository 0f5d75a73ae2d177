//! Engine-level interop with the pinned Python LangGraph, on one SQLite file or Postgres
//! schema shared by both: what one side writes (chains, conditional edges and a fork, static
//! and dynamic interrupts, subgraphs, `Send` fan-out, a join, a chat of LangChain messages
//! with every kind of stored value) the other reads as the same checkpoints, writes and
//! histories, and takes one call further.
//!
//! The Python side is `tests/interop/interop_graphs.py`, run with `STATEGRAPH_PYTHON` or the
//! workspace's `target/langgraph-venv`; without it the tests print a note and pass, unless
//! `STATEGRAPH_INTEROP=1`. Postgres is the server of `STATEGRAPH_TEST_POSTGRES_URL` (see
//! `support/savers.rs`).

mod support;

#[path = "interop_python/graphs.rs"]
mod graphs;
#[path = "interop_python/render.rs"]
mod render;
#[path = "interop_python/response_schema.rs"]
mod response_schema;
#[path = "interop_python/scenarios.rs"]
mod scenarios;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::sync::Arc;
use support::python::python;

use serde_json::Value as J;
use stategraph::checkpoint::CheckpointSaver;

use graphs::{compiled, THREADS};
use render::{assert_same, dump, normalize, Dump};
use support::savers::PostgresSchema;

/// Which database the two sides share.
#[derive(Clone, Copy, Debug)]
enum On {
    Sqlite,
    Postgres,
}

/// A database both sides open: its arguments for the script and stategraph's saver on it.
struct Db {
    python: PathBuf,
    args: [String; 2],
    sqlite: Option<PathBuf>,
    saver: Option<Arc<dyn CheckpointSaver>>,
    _schema: Option<PostgresSchema>,
}

impl Db {
    /// A fresh database, or `None` (after a note) without Python or an unrequired Postgres.
    /// A SQLite file is created by whichever side opens it first.
    async fn new(on: On) -> Option<Db> {
        let python = python()?;
        match on {
            On::Sqlite => {
                let dir = std::env::temp_dir().join(format!(
                    "stategraph-interop-{}",
                    uuid::Uuid::new_v4().simple()
                ));
                std::fs::create_dir_all(&dir).expect("temp dir");
                let file = dir.join("threads.db");
                Some(Db {
                    python,
                    args: ["sqlite".into(), file.to_str().expect("utf-8 path").into()],
                    sqlite: Some(file),
                    saver: None,
                    _schema: None,
                })
            }
            On::Postgres => {
                let (saver, schema) = support::savers::postgres_saver().await?;
                Some(Db {
                    python,
                    args: ["postgres".into(), schema.url()],
                    sqlite: None,
                    saver: Some(Arc::new(saver)),
                    _schema: Some(schema),
                })
            }
        }
    }

    /// stategraph's saver on the database (a SQLite file is opened on first use).
    fn saver(&mut self) -> Arc<dyn CheckpointSaver> {
        if self.saver.is_none() {
            let file = self.sqlite.as_ref().expect("a SQLite file");
            let saver = stategraph::sqlite::SqliteSaver::open(file).expect("open the file");
            self.saver = Some(Arc::new(saver));
        }
        self.saver.clone().expect("a saver")
    }

    /// Runs the script in `mode` on the database and returns its dump.
    async fn python(&self, mode: &str) -> J {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/interop_graphs.py");
        let mut cmd = std::process::Command::new(&self.python);
        cmd.arg(script).arg(mode).args(&self.args);
        // Set iteration order (a join's barrier) depends on the hash seed: pin it.
        cmd.env("PYTHONHASHSEED", "0");
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
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Some(dir) = self.sqlite.as_ref().and_then(|f| f.parent()) {
            std::fs::remove_dir_all(dir).ok();
        }
    }
}

/// What stategraph reads from the database.
async fn rust_dump(saver: &Arc<dyn CheckpointSaver>) -> Dump {
    dump(saver, |thread| compiled(thread, saver)).await
}

/// The outputs printed by the script, by thread.
fn python_outputs(j: &J) -> BTreeMap<&'static str, J> {
    THREADS
        .iter()
        .map(|&t| (t, normalize(&j["outputs"][t])))
        .collect()
}

/// Checks that a dump read after `continue` shows the step `continue` took on every
/// thread: the expected number of new checkpoints, and head values equal to its outputs.
fn assert_shows_continuation(before: &Dump, after: &Dump, outputs: &BTreeMap<&str, J>) {
    for thread in THREADS {
        let (old, new) = (before.root(thread), after.root(thread));
        assert_eq!(
            new.len(),
            old.len() + scenarios::growth(thread),
            "new checkpoints of {thread}"
        );
        let mut values = outputs[thread].clone();
        if let Some(m) = values.as_object_mut() {
            m.remove("__interrupt__");
        }
        assert_eq!(new[0]["values"], values, "head values of {thread}");
    }
    // int-2 took no new checkpoint: its head now holds the interrupt of `ask`.
    let head = &after.root("int-2")[0];
    assert_eq!(head["next"], serde_json::json!(["ask"]));
    assert_eq!(
        head["interrupts"][0]["value"],
        serde_json::json!({"question": "colour?"})
    );
    assert!(before.root("int-2")[0]["interrupts"]
        .as_array()
        .is_some_and(Vec::is_empty));
}

/// Checks the state `write` leaves, as read from a dump.
fn assert_written(d: &Dump) {
    assert_eq!(d.root("int-1")[0]["next"], serde_json::json!(["ask"]));
    assert_eq!(d.root("sub-2")[0]["next"], serde_json::json!(["sub"]));
    assert_eq!(d.root("chain")[0]["values"]["value"], "patchedc");
    let chat = &d.root("chat")[0]["values"];
    let mut profile = normalize(&render::value(&scenarios::profile()));
    profile["turns"] = J::from(2);
    assert_eq!(chat["profile"], profile, "the profile of every value kind");
    assert_eq!(chat["messages"][0]["id"], "h-0", "sys-1 was removed");
    assert_eq!(
        chat["score"],
        serde_json::json!(2.0),
        "a float with an integral value stays a float"
    );
    let subgraph_histories = d
        .history
        .keys()
        .filter(|k| k.starts_with("sub-") && !k.ends_with('|'))
        .count();
    assert_eq!(
        subgraph_histories, 2,
        "one subgraph namespace per sub thread"
    );
}

/// (a) Python writes; stategraph reads the same checkpoints and histories, takes every
/// thread one call further, and Python reads those calls' checkpoints back.
async fn python_writes_rust_reads_and_continues(on: On) {
    let Some(mut db) = Db::new(on).await else {
        return;
    };
    let written = db.python("write").await;
    let saver = db.saver();
    let python = Dump::from_python(&written);
    assert_written(&python);
    let rust = rust_dump(&saver).await;
    assert_same(&python, &rust);

    let outputs = scenarios::take_further(&saver).await;
    scenarios::assert_continued(&outputs);

    let read = Dump::from_python(&db.python("read").await);
    assert_same(&read, &rust_dump(&saver).await);
    assert_shows_continuation(&python, &read, &outputs);
}

/// (b) stategraph writes; Python reads the same checkpoints, writes and histories, takes
/// every thread one call further, and stategraph reads those calls' checkpoints back.
async fn rust_writes_python_reads_and_continues(on: On) {
    let Some(mut db) = Db::new(on).await else {
        return;
    };
    let saver = db.saver();
    scenarios::write(&saver).await;
    let rust = rust_dump(&saver).await;
    assert_written(&rust);
    let python = Dump::from_python(&db.python("read").await);
    assert_same(&python, &rust);

    let continued = db.python("continue").await;
    let outputs = python_outputs(&continued);
    scenarios::assert_continued(&outputs);
    let after = rust_dump(&saver).await;
    assert_same(&Dump::from_python(&continued), &after);
    assert_shows_continuation(&rust, &after, &outputs);
}

macro_rules! on_both_databases {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$scenario(super::On::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$scenario(super::On::Postgres).await;
            }
        }
    )*};
}

on_both_databases!(
    python_writes_rust_reads_and_continues,
    rust_writes_python_reads_and_continues,
);
