//! Crash recovery across processes: a child process runs a long graph on a SQLite file and
//! is killed with SIGKILL in the middle of a step; this process then resumes the thread.
//! The final state must equal an uninterrupted run's, and no task whose writes were saved
//! before the kill may run again.
//!
//! The child is this test binary itself, started with `STATEGRAPH_CRASH_CHILD` set (the
//! usual trick to get a second process without a separate binary).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use stategraph::channels::BinaryOperatorAggregate;
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, Value};
use stategraph::sqlite::SqliteSaver;
use stategraph::{
    list, update, CompileOptions, CompiledGraph, Durability, DynState, NoInput, RunConfig,
    StateGraph, END, START,
};

const STEPS: usize = 8;
const LANES: [(&str, u64); 3] = [("x", 5), ("y", 25), ("z", 60)];
const THREAD: &str = "crash";

/// Appends a line to the ledger of executions (every node start, in any process).
fn record(ledger: &Path, name: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(ledger)
        .expect("ledger");
    writeln!(f, "{name}").expect("ledger line");
    f.sync_all().expect("ledger sync");
}

/// Steps of three parallel nodes of different speeds, each step joined before the next.
fn graph(
    ledger: Option<PathBuf>,
    saver: Option<Arc<dyn CheckpointSaver>>,
) -> CompiledGraph<DynState> {
    let add = BinaryOperatorAggregate::new(stategraph::reducers::add(), Some(list![]));
    let mut g = StateGraph::<DynState>::with_channels(vec![("log".into(), Box::new(add) as _)]);
    for step in 0..STEPS {
        for (lane, ms) in LANES {
            let name = format!("{lane}{step}");
            let ledger = ledger.clone();
            let node_name = name.clone();
            g.add_node(name.clone(), move |_s: DynState| {
                let ledger = ledger.clone();
                let name = node_name.clone();
                async move {
                    if let Some(l) = &ledger {
                        record(l, &name);
                    }
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    update([("log", list![name])])
                }
            });
        }
    }
    for (lane, _) in LANES {
        g.add_edge(START, format!("{lane}0"));
        g.add_edge(format!("{lane}{}", STEPS - 1), END);
    }
    for step in 1..STEPS {
        let previous: Vec<String> = LANES
            .iter()
            .map(|(l, _)| format!("{l}{}", step - 1))
            .collect();
        for (lane, _) in LANES {
            g.add_join(previous.clone(), format!("{lane}{step}"));
        }
    }
    let options = match saver {
        Some(s) => CompileOptions::new().checkpointer(s),
        None => CompileOptions::new(),
    };
    g.compile_with(options).expect("compiles")
}

fn input() -> Vec<(String, Value)> {
    update([("log", list!["in"])])
}

fn log_of(state: &DynState) -> Vec<String> {
    state
        .get("log")
        .and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// The child: run the whole graph on the SQLite file (it is killed before it ends).
#[tokio::test]
async fn crash_child() {
    let Ok(dir) = std::env::var("STATEGRAPH_CRASH_CHILD") else {
        return; // only meaningful as the child of `a_killed_run_resumes_in_another_process`
    };
    let dir = PathBuf::from(dir);
    let saver = Arc::new(SqliteSaver::open(dir.join("threads.db")).expect("db"));
    let app = graph(Some(dir.join("ledger.txt")), Some(saver));
    let cfg = RunConfig::thread(THREAD).durability(Durability::Sync);
    let _ = app.invoke(input(), &cfg).await.expect("the child's run");
}

/// What the database recorded as done at the moment of the kill: the nodes in the head
/// checkpoint's `log`, plus those whose writes are pending on it.
async fn recorded(saver: &SqliteSaver) -> BTreeSet<String> {
    let head = saver
        .get_tuple(&CheckpointConfig::thread(THREAD))
        .await
        .expect("read")
        .expect("the child saved a checkpoint");
    let mut done: BTreeSet<String> = head
        .checkpoint
        .channel_values
        .get("log")
        .and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    for w in &head.pending_writes {
        if w.channel == "log" {
            done.extend(
                w.value
                    .as_list()
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned)),
            );
        }
    }
    done.remove("in");
    done
}

#[tokio::test]
async fn a_killed_run_resumes_in_another_process() {
    if std::env::var("STATEGRAPH_CRASH_CHILD").is_ok() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("stategraph-crash-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ledger = dir.join("ledger.txt");

    let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env("STATEGRAPH_CRASH_CHILD", &dir)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("child starts");
    // Kill it in the middle of a step: shortly after the fast lane of step 4 started, so
    // that (usually) x4 has finished and saved its writes while y4 and z4 still run. The
    // assertions below hold wherever the kill lands.
    let kill_after = "x4";
    let mut killed = false;
    for _ in 0..3000 {
        let text = std::fs::read_to_string(&ledger).unwrap_or_default();
        if text.lines().any(|l| l == kill_after) {
            tokio::time::sleep(Duration::from_millis(15)).await;
            child.kill().expect("SIGKILL");
            killed = true;
            break;
        }
        if child.try_wait().expect("child status").is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    child.wait().expect("child reaped");
    assert!(killed, "the child was killed in the middle of its run");

    let saver = Arc::new(SqliteSaver::open(dir.join("threads.db")).expect("db"));
    let done_at_kill = recorded(&saver).await;
    assert!(
        !done_at_kill.is_empty(),
        "the child saved work before it was killed"
    );

    let app = graph(Some(ledger.clone()), Some(saver));
    let cfg = RunConfig::thread(THREAD).durability(Durability::Sync);
    let resumed = app.invoke(NoInput, &cfg).await.expect("the resumed run");

    let uninterrupted = graph(None, None)
        .invoke(input(), &RunConfig::default())
        .await
        .expect("run");
    assert_eq!(log_of(&resumed), log_of(&uninterrupted), "same final state");

    let mut runs: BTreeMap<String, usize> = BTreeMap::new();
    for line in std::fs::read_to_string(&ledger).expect("ledger").lines() {
        *runs.entry(line.to_owned()).or_default() += 1;
    }
    for name in &done_at_kill {
        assert_eq!(
            runs.get(name),
            Some(&1),
            "{name} finished before the kill and must not run again"
        );
    }
    let all: usize = STEPS * LANES.len();
    assert_eq!(runs.len(), all, "every node ran");
    std::fs::remove_dir_all(&dir).ok();
}
