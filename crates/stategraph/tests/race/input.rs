//! Two processes giving one thread new input at once (issue 20, hole 2), 200 rounds on
//! SQLite and on Postgres.
//!
//! A round: this process runs a fresh thread to its end with input `setup`, then tells
//! both racer processes to give the thread new input at nearly the same moment (one of
//! them a few milliseconds later, a different lag each round). A racer's input appends
//! its name to `log`; its `work` node sleeps, then appends `<name>-work`. Sometimes the
//! later racer starts from a checkpoint the earlier one has just stored (the winner is
//! built on the loser's input), sometimes both start from the setup's head (the loser
//! stored nothing the history keeps). The loser's `Error::Conflict` says which
//! ([`InputFate`]); the test checks that it says the truth (its input is in the final
//! state exactly once when it says applied, not at all when it says not), then follows
//! its advice (runs the input again only when it was not applied), and checks that in the
//! end each racer's input is in the state exactly once and the history is one line.

use std::ffi::OsStr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use stategraph::channels::BinaryOperatorAggregate;
use stategraph::checkpoint::{
    CheckpointConfig, CheckpointSaver, CheckpointSource, CheckpointTuple, Value,
};
use stategraph::sqlite::SqliteSaver;
use stategraph::{
    list, reducers, update, CompileOptions, CompiledGraph, Durability, DynState, Error, InputFate,
    RunConfig, StateGraph, END, START,
};
use stategraph_checkpoint_postgres::PostgresSaver;

use super::{Racer, RACER_NAME};

const ROUNDS: usize = 200;
/// `sqlite:<path>` or `postgres:<url>`: the saver a racer opens.
const RACER_SAVER: &str = "STATEGRAPH_RACE_SAVER";

/// `START -> work -> END` over `log` (a list with `operator.add`); `work` appends
/// `<name>-work`, after a sleep in the racers (long enough for the other racer to start
/// while this one runs).
fn graph(name: &str, saver: Arc<dyn CheckpointSaver>) -> CompiledGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![(
        "log".into(),
        Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![]))) as _,
    )]);
    let me = name.to_owned();
    g.add_node("work", move |_s: DynState| {
        let me = me.clone();
        async move {
            if me != "setup" {
                tokio::time::sleep(Duration::from_millis(40)).await;
            }
            update([("log", list![format!("{me}-work")])])
        }
    });
    g.add_edge(START, "work");
    g.add_edge("work", END);
    g.compile_with(CompileOptions::new().checkpointer(saver))
        .expect("compiles")
}

async fn open(spec: &str) -> Arc<dyn CheckpointSaver> {
    match spec.split_once(':') {
        Some(("sqlite", path)) => Arc::new(SqliteSaver::open(path).expect("open SQLite")),
        Some(("postgres", url)) => Arc::new(
            PostgresSaver::connect(url)
                .await
                .expect("connect to Postgres"),
        ),
        _ => panic!("{RACER_SAVER}: sqlite:<path> or postgres:<url>, not {spec:?}"),
    }
}

/// Not a test of its own: the racer processes' entry point. `GO <thread> <lag ms>` waits
/// the lag, gives the thread the input `log: [<name>]`, and answers `WON`,
/// `CONFLICT APPLIED <checkpoint>`, `CONFLICT NOT_APPLIED`, `CONFLICT DROPPED <checkpoint>`
/// or `ERROR <text>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_racer_process_entry() {
    let (Ok(spec), Ok(name)) = (std::env::var(RACER_SAVER), std::env::var(RACER_NAME)) else {
        return;
    };
    let app = graph(&name, open(&spec).await);
    super::say("READY");
    for line in std::io::stdin().lines() {
        let line = line.expect("racer stdin");
        let mut words = line.split(' ');
        let (Some("GO"), Some(thread), Some(lag)) = (words.next(), words.next(), words.next())
        else {
            panic!("GO <thread> <lag>, not {line:?}");
        };
        tokio::time::sleep(Duration::from_millis(lag.parse().expect("lag"))).await;
        let config = RunConfig::thread(thread).durability(Durability::Sync);
        let input = update([("log", list![name.clone()])]);
        match app.invoke(input, &config).await {
            Ok(_) => super::say("WON"),
            Err(Error::Conflict { fate, .. }) => match fate {
                InputFate::Applied { checkpoint_id } => {
                    super::say(&format!("CONFLICT APPLIED {checkpoint_id}"))
                }
                InputFate::NotApplied => super::say("CONFLICT NOT_APPLIED"),
                InputFate::Dropped { checkpoint_id } => {
                    super::say(&format!("CONFLICT DROPPED {checkpoint_id}"))
                }
                other => super::say(&format!("ERROR fate {other:?}")),
            },
            Err(e) => super::say(&format!("ERROR {e}")),
        }
    }
}

/// What the rounds gave, counted.
#[derive(Debug, Default)]
struct Tally {
    /// A racer lost and its input was in the history (the winner built on it).
    applied: usize,
    /// A racer lost and nothing of it was in the history.
    not_applied: usize,
    /// A racer lost, its input checkpoint was in the history, and the winner's new input
    /// dropped its start.
    dropped: usize,
    /// Both went through, one after the other.
    both_won: usize,
}

async fn race_rounds(saver: Arc<dyn CheckpointSaver>, spec: &OsStr, label: &str) {
    let app = graph("setup", saver.clone());
    let mut racers = [
        Racer::spawn_entry("input::input_racer_process_entry", (RACER_SAVER, spec), "a"),
        Racer::spawn_entry("input::input_racer_process_entry", (RACER_SAVER, spec), "b"),
    ];
    let mut tally = Tally::default();
    for round in 0..ROUNDS {
        let thread = format!("input-race-{round}");
        let config = RunConfig::thread(thread.as_str());
        let _ = app
            .invoke(update([("log", list!["setup"])]), &config)
            .await
            .expect("the setup run");
        // One racer starts at once, the other 0..9 ms later, taking turns.
        let lag = (round / 2) % 10;
        let lags = if round % 2 == 0 { [0, lag] } else { [lag, 0] };
        for (racer, lag) in racers.iter_mut().zip(lags) {
            racer.send(&format!("GO {thread} {lag}"));
        }
        let outcomes: Vec<String> = racers.iter_mut().map(Racer::next).collect();
        let log = log_of(saver.as_ref(), &thread).await;
        let mut retry = Vec::new();
        for (i, outcome) in outcomes.iter().enumerate() {
            let name = ["a", "b"][i];
            let seen = log.iter().filter(|v| v.as_str() == Some(name)).count();
            let words: Vec<&str> = outcome.split(' ').collect();
            match words.as_slice() {
                ["WON"] => assert_eq!(seen, 1, "round {round}: {name} won: {log:?}"),
                ["CONFLICT", "APPLIED", id] => {
                    assert_eq!(seen, 1, "round {round}: {name}'s input applied: {log:?}");
                    assert!(
                        in_history(saver.as_ref(), &thread, id).await,
                        "round {round}: {name}'s applied checkpoint {id} is in the history"
                    );
                    tally.applied += 1;
                }
                ["CONFLICT", "NOT_APPLIED"] => {
                    assert_eq!(
                        seen, 0,
                        "round {round}: {name}'s input not applied: {log:?}"
                    );
                    tally.not_applied += 1;
                    retry.push(i);
                }
                ["CONFLICT", "DROPPED", id] => {
                    assert_eq!(seen, 0, "round {round}: {name}'s input dropped: {log:?}");
                    assert!(
                        in_history(saver.as_ref(), &thread, id).await,
                        "round {round}: {name}'s input checkpoint {id} is in the history"
                    );
                    tally.dropped += 1;
                    retry.push(i);
                }
                _ => panic!("round {round}: {name}: {outcome}"),
            }
        }
        if retry.is_empty() && outcomes.iter().all(|o| o == "WON") {
            tally.both_won += 1;
        }
        // The advice followed: an input that was not applied is given again.
        for i in retry {
            racers[i].send(&format!("GO {thread} 0"));
            assert_eq!(racers[i].next(), "WON", "round {round}: the retry");
        }
        let log = log_of(saver.as_ref(), &thread).await;
        for name in ["setup", "a", "b"] {
            let seen = log.iter().filter(|v| v.as_str() == Some(name)).count();
            assert_eq!(seen, 1, "round {round}: {name}'s input once in {log:?}");
        }
        super::assert_linear(&history(saver.as_ref(), &thread).await, round);
    }
    println!("{label}: {ROUNDS} rounds: {tally:?}");
}

/// The `log` of the thread's head.
async fn log_of(saver: &dyn CheckpointSaver, thread: &str) -> Vec<Value> {
    let head = saver
        .get_tuple(&CheckpointConfig::thread(thread))
        .await
        .expect("get")
        .expect("a head");
    match head.checkpoint.channel_values.get("log") {
        Some(Value::List(l)) => l.iter().cloned().collect(),
        other => panic!("log is {other:?}"),
    }
}

async fn in_history(saver: &dyn CheckpointSaver, thread: &str, id: &str) -> bool {
    let history = history(saver, thread).await;
    history.iter().any(|t| t.checkpoint.id == id)
}

/// The thread's history, newest first.
async fn history(saver: &dyn CheckpointSaver, thread: &str) -> Vec<CheckpointTuple> {
    saver
        .list(Some(&CheckpointConfig::thread(thread)), &Default::default())
        .await
        .expect("list")
}

/// The race's "built on the loser" case without timing: two saver instances on one file
/// (the in-process lease is per instance, so they race as two processes would). B stops
/// in its `work` node, after its input and step-0 checkpoints are stored; A gives its
/// input meanwhile and finishes; B's writes are then refused, and its `Conflict` says
/// its input was applied, at its step-0 checkpoint, the parent of A's input checkpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_winner_built_on_the_losers_step_makes_the_losers_conflict_say_applied() {
    let dir = std::env::temp_dir().join(format!("stategraph-race-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let db = dir.join("threads.db");
    let (one, two) = (
        Arc::new(SqliteSaver::open(&db).expect("open")),
        Arc::new(SqliteSaver::open(&db).expect("open again")),
    );
    let config = RunConfig::thread("t").durability(Durability::Sync);
    let _ = graph("setup", one.clone())
        .invoke(update([("log", list!["setup"])]), &config)
        .await
        .expect("the setup run");
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let mut g = StateGraph::<DynState>::with_channels(vec![(
        "log".into(),
        Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![]))) as _,
    )]);
    let (s, r) = (started.clone(), release.clone());
    g.add_node("work", move |_s: DynState| {
        let (s, r) = (s.clone(), r.clone());
        async move {
            s.notify_one();
            r.notified().await;
            update([("log", list!["b-work"])])
        }
    });
    g.add_edge(START, "work").add_edge("work", END);
    let b = g
        .compile_with(CompileOptions::new().checkpointer(one.clone()))
        .expect("compiles");
    let b_config = config.clone();
    let b_run =
        tokio::spawn(async move { b.invoke(update([("log", list!["b"])]), &b_config).await });
    started.notified().await;
    let _ = graph("a", two.clone())
        .invoke(update([("log", list!["a"])]), &config)
        .await
        .expect("A goes through");
    release.notify_one();
    let err = b_run.await.expect("B's task").expect_err("B loses");
    let Error::Conflict {
        fate: InputFate::Applied { checkpoint_id },
        ..
    } = &err
    else {
        panic!("not an applied conflict: {err:?}");
    };
    assert!(err.to_string().contains("do not give it again"), "{err}");
    let history = history(two.as_ref(), "t").await;
    let a_input = history
        .iter()
        .find(|t| t.metadata.source == Some(CheckpointSource::Input))
        .expect("A's input checkpoint");
    let parent = a_input
        .parent_config
        .as_ref()
        .and_then(|p| p.checkpoint_id.as_ref());
    assert_eq!(
        parent,
        Some(checkpoint_id),
        "A started from B's step-0 checkpoint"
    );
    assert_eq!(
        log_of(two.as_ref(), "t").await,
        [
            Value::from("setup"),
            "setup-work".into(),
            "b".into(),
            "a".into(),
            "a-work".into()
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_two_processes_giving_one_thread_input_apply_each_input_once() {
    let dir = std::env::temp_dir().join(format!("stategraph-race-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let db = dir.join("threads.db");
    let saver = Arc::new(SqliteSaver::open(&db).expect("open"));
    let spec = format!("sqlite:{}", db.display());
    race_rounds(saver, OsStr::new(&spec), "sqlite").await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_two_processes_giving_one_thread_input_apply_each_input_once() {
    let Some((saver, schema)) = crate::support::savers::postgres_fenced().await else {
        return;
    };
    let spec = format!("postgres:{}", schema.url());
    race_rounds(Arc::new(saver), OsStr::new(&spec), "postgres").await;
}
