//! Two processes resuming one thread at once on a SQLite file (issue 9, hole 2): exactly
//! one run goes through, the other fails with a `Conflict`, and the thread never forks.
//!
//! A round: this process runs a fresh thread up to a static interrupt before `work`
//! (the head `H` has `work` as its next task), then tells both racer processes to resume
//! it at the same moment. Each racer's `work` node sleeps, then writes its own name (a
//! node whose result differs between runs), and `after` copies it to `seen`. Without the fence both
//! runs succeed and the history forks; with it one fails with `Error::Conflict`
//! and the thread holds one line of checkpoints, ending in the winner's state, with the
//! winner's write of `work` on `H`.
//!
//! The racers are this test binary run again (`racer_process_entry`, switched on by an
//! environment variable), each driven over stdin/stdout for every round. `race/input.rs`
//! races two processes giving one thread new input, with the same racers.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use stategraph::channels::LastValue;
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, CheckpointTuple, Value};
use stategraph::sqlite::SqliteSaver;
use stategraph::{
    update, CompileOptions, CompiledGraph, Durability, DynState, Error, NoInput, RunConfig,
    StateGraph, END, START,
};

#[path = "race/input.rs"]
mod input;
mod support;

const ROUNDS: usize = 100;
const RACER_DB: &str = "STATEGRAPH_RACE_DB";
const RACER_NAME: &str = "STATEGRAPH_RACE_NAME";

/// `START -> work -> after -> END`; `work` sleeps, then writes `who = name`.
fn graph(name: &str, saver: Arc<dyn CheckpointSaver>) -> CompiledGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("who".into(), Box::new(LastValue::new()) as _),
        ("seen".into(), Box::new(LastValue::new()) as _),
    ]);
    let me = name.to_owned();
    g.add_node("work", move |_s: DynState| {
        let me = me.clone();
        async move {
            // Long enough for both racers to load the head before either saves.
            tokio::time::sleep(Duration::from_millis(150)).await;
            update([("who", Value::from(me))])
        }
    });
    g.add_node("after", |s: DynState| async move {
        let who = s.get("who").cloned().unwrap_or(Value::Nil);
        update([("seen", who)])
    });
    g.add_edge(START, "work");
    g.add_edge("work", "after");
    g.add_edge("after", END);
    g.compile_with(CompileOptions::new().checkpointer(saver))
        .expect("compiles")
}

/// Not a test of its own: the racer processes' entry point. `GO <thread>` resumes the
/// thread and answers `WON`, `CONFLICT` or `ERROR <text>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racer_process_entry() {
    let (Ok(db), Ok(name)) = (std::env::var(RACER_DB), std::env::var(RACER_NAME)) else {
        return;
    };
    let saver = Arc::new(SqliteSaver::open(&db).expect("racer open"));
    let app = graph(&name, saver);
    say("READY");
    for line in std::io::stdin().lines() {
        let line = line.expect("racer stdin");
        let thread = line.strip_prefix("GO ").expect("GO <thread>");
        let config = RunConfig::thread(thread).durability(Durability::Sync);
        match app.invoke(NoInput, &config).await {
            Ok(_) => say("WON"),
            Err(Error::Conflict { .. }) => say("CONFLICT"),
            Err(e) => say(&format!("ERROR {e}")),
        }
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "RACER {line}").expect("racer stdout");
    out.flush().expect("racer flush");
}

struct Racer {
    child: Child,
    lines: std::io::Lines<BufReader<ChildStdout>>,
}

impl Racer {
    fn spawn(db: &std::path::Path, name: &str) -> Racer {
        Racer::spawn_entry("racer_process_entry", (RACER_DB, db.as_os_str()), name)
    }

    /// This test binary run again as test `entry`, with `name` and the saver in `env`.
    fn spawn_entry(entry: &str, env: (&str, &std::ffi::OsStr), name: &str) -> Racer {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args([entry, "--exact", "--nocapture", "--test-threads=1"])
            .env(env.0, env.1)
            .env(RACER_NAME, name)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn a racer");
        let stdout = child.stdout.take().expect("racer stdout");
        let mut racer = Racer {
            child,
            lines: BufReader::new(stdout).lines(),
        };
        assert_eq!(racer.next(), "READY");
        racer
    }

    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().expect("racer stdin");
        writeln!(stdin, "{line}").expect("send");
        stdin.flush().expect("flush");
    }

    fn next(&mut self) -> String {
        for line in self.lines.by_ref() {
            let line = line.expect("racer output");
            if let Some(at) = line.find("RACER ") {
                return line[at + 6..].to_owned();
            }
        }
        panic!("the racer ended without a RACER line");
    }
}

impl Drop for Racer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        if !matches!(self.child.wait(), Ok(status) if status.success()) {
            let _ = self.child.kill();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_resuming_one_thread_exactly_one_wins() {
    let dir = std::env::temp_dir().join(format!("stategraph-race-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let db = dir.join("threads.db");
    let saver = Arc::new(SqliteSaver::open(&db).expect("open"));
    let app = graph("setup", saver.clone());
    let mut racers = [Racer::spawn(&db, "a"), Racer::spawn(&db, "b")];
    for round in 0..ROUNDS {
        let thread = format!("race-{round}");
        let config = RunConfig::thread(thread.as_str()).interrupt_before(["work"]);
        let _ = app
            .invoke(update([("who", Value::from("start"))]), &config)
            .await
            .expect("run up to the interrupt");
        let head = saver
            .get_tuple(&CheckpointConfig::thread(thread.as_str()))
            .await
            .expect("get")
            .expect("a head");
        for racer in &mut racers {
            racer.send(&format!("GO {thread}"));
        }
        let outcomes: Vec<String> = racers.iter_mut().map(Racer::next).collect();
        let won: Vec<usize> = (0..2).filter(|&i| outcomes[i] == "WON").collect();
        let lost: Vec<usize> = (0..2).filter(|&i| outcomes[i] == "CONFLICT").collect();
        assert_eq!(
            (won.len(), lost.len()),
            (1, 1),
            "round {round}: one winner, one conflict: {outcomes:?}"
        );
        let who = Value::from(["a", "b"][won[0]]);
        // One line of checkpoints: each one's parent is the next older one.
        let history = saver
            .list(
                Some(&CheckpointConfig::thread(thread.as_str())),
                &Default::default(),
            )
            .await
            .expect("list");
        assert_linear(&history, round);
        let last = &history[0].checkpoint.channel_values;
        assert_eq!(
            last.get("who"),
            Some(&who),
            "round {round}: the winner's state"
        );
        assert_eq!(last.get("seen"), Some(&who));
        // The write of `work` on the head is the winner's.
        let on_head = history
            .iter()
            .find(|t| t.checkpoint.id == head.checkpoint.id)
            .expect("the head is in the history");
        let writes: Vec<&Value> = on_head
            .pending_writes
            .iter()
            .filter(|w| w.channel == "who")
            .map(|w| &w.value)
            .collect();
        assert_eq!(
            writes,
            [&who],
            "round {round}: the task write is the winner's"
        );
    }
    drop(racers);
    drop(app);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every checkpoint of `history` (newest first) has the next older one as its parent: the
/// thread never forked.
fn assert_linear(history: &[CheckpointTuple], round: usize) {
    for pair in history.windows(2) {
        let parent = pair[0]
            .parent_config
            .as_ref()
            .and_then(|p| p.checkpoint_id.clone());
        assert_eq!(
            parent.as_deref(),
            Some(pair[1].checkpoint.id.as_str()),
            "round {round}: the history forked"
        );
    }
}
