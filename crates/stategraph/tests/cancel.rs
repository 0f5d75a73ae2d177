//! Cancellation safety (issue 9, hole 4): dropping an `invoke` future at a random point and
//! resuming the thread at once with `NoInput` never forks the history, never meets a
//! `Conflict`, and ends in the state of a run that was never cancelled -- on every saver and
//! in every durability mode.
//!
//! Each case runs [`ROUNDS`] threads. A round starts a run under `tokio::time::timeout`
//! with a random budget (between zero and the length of the fastest of three uninterrupted runs, so the
//! cancellation lands anywhere: before the first save, between a task's writes and the
//! step's checkpoint, inside a subgraph, while a save is in flight), then resumes at once --
//! on the same saver, or (`hand_over`) on another saver instance on the same database after
//! `settle`, as another process would.
//!
//! `read_then_decide` (issue 20, hole 3) does what an application does after a cancel: it
//! reads the thread (`get_state`, `get_state_history`, `get_tuple` or `list` on the saver it
//! gave the graph) and, seeing no checkpoint, starts the thread again with its input, else
//! resumes it with `NoInput`. A read older than the cancelled run's queued saves makes it
//! apply the input twice.
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use stategraph::channels::{BinaryOperatorAggregate, Channel};
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions};
use stategraph::{
    list, reducers, CompileOptions, CompiledGraph, Durability, DynState, NoInput, RunConfig,
    StateGraph, StreamMode, Value, END, START,
};

/// Threads per saver and durability mode.
const ROUNDS: usize = 200;

/// A node that yields to the scheduler a few times (so a cancellation can land inside it)
/// and appends its name to `log`.
fn yields(
    channel: &'static str,
    name: &'static str,
) -> impl Fn(DynState) -> futures::future::BoxFuture<'static, Vec<(String, Value)>> + Send + Sync + 'static
{
    move |_s: DynState| {
        Box::pin(async move {
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
            stategraph::update([(channel, list![name])])
        })
    }
}

fn add_list() -> Box<dyn Channel> {
    Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![])))
}

/// `START -> a -> {b, c, sub} -> d -> END` appending to `log`, where `sub` is a subgraph
/// `i1 -> i2` appending to `inner`.
fn graph(saver: &Arc<dyn CheckpointSaver>) -> CompiledGraph<DynState> {
    let mut sb = StateGraph::<DynState>::with_channels(vec![("inner".into(), add_list())]);
    sb.add_node("i1", yields("inner", "i1"))
        .add_node("i2", yields("inner", "i2"));
    sb.add_edge(START, "i1")
        .add_edge("i1", "i2")
        .add_edge("i2", END);
    let sub = sb.compile().unwrap();
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("log".into(), add_list()),
        ("inner".into(), add_list()),
    ]);
    g.add_node("a", yields("log", "a"))
        .add_node("b", yields("log", "b"))
        .add_node("c", yields("log", "c"))
        .add_subgraph("sub", &sub)
        .add_node("d", yields("log", "d"));
    g.add_edge(START, "a");
    for n in ["b", "c", "sub"] {
        g.add_edge("a", n).add_edge(n, "d");
    }
    g.add_edge("d", END);
    g.compile_with(CompileOptions::new().checkpointer(saver.clone()))
        .unwrap()
}

fn input() -> Vec<(String, Value)> {
    vec![("log".to_owned(), list!["x"])]
}

/// The strings of the `log` and `inner` lists.
fn log_of(state: &DynState) -> Vec<String> {
    let strings = |key: &str| {
        state
            .get(key)
            .and_then(Value::as_list)
            .unwrap_or(&[])
            .iter()
            .map(|v| v.as_str().unwrap_or("?").to_owned())
            .collect::<Vec<_>>()
    };
    let mut out = strings("log");
    out.push("|".to_owned());
    out.extend(strings("inner"));
    out
}

/// A small deterministic generator (xorshift64*), so a failing case can be rerun.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

/// Checkpoints of `thread` (every namespace) that share a parent with another one, plus
/// extra roots of a namespace: 0 unless the history forked.
async fn forks(saver: &Arc<dyn CheckpointSaver>, thread: &str) -> usize {
    let cfg = CheckpointConfig {
        checkpoint_ns: None,
        ..CheckpointConfig::thread(thread)
    };
    let all = saver
        .list(Some(&cfg), &ListOptions::default())
        .await
        .unwrap();
    let mut children: HashMap<(String, Option<String>), usize> = HashMap::new();
    for t in &all {
        let ns = t.config.checkpoint_ns.clone().unwrap_or_default();
        let parent = t
            .parent_config
            .as_ref()
            .and_then(|p| p.checkpoint_id.clone());
        *children.entry((ns, parent)).or_default() += 1;
    }
    children.values().map(|n| n.saturating_sub(1)).sum()
}

/// What went wrong in a case, counted.
#[derive(Default, Debug)]
struct Failures {
    forks: usize,
    conflicts: usize,
    other_errors: Vec<String>,
    wrong_state: Vec<String>,
}

/// How a round's first run is cancelled.
#[derive(Clone, Copy, Debug)]
enum Cancel {
    /// `invoke` under a timeout.
    Invoke,
    /// `stream` collected under a timeout (the stream is dropped with its run).
    Stream,
}

/// Starts a run of `config`'s thread with [`input`] and drops it after `limit` (the way
/// `how` says); true when it was cancelled, false when it had ended by then.
async fn cancel_after(
    g: &CompiledGraph<DynState>,
    config: &RunConfig,
    limit: Duration,
    how: Cancel,
) -> bool {
    match how {
        Cancel::Invoke => tokio::time::timeout(limit, g.invoke(input(), config))
            .await
            .is_err(),
        Cancel::Stream => {
            let events = g.stream(input(), config, &[StreamMode::Updates]);
            tokio::time::timeout(limit, events.collect::<Vec<_>>())
                .await
                .is_err()
        }
    }
}

/// The length of the fastest of three uninterrupted runs (to spread the cancellation
/// points over a whole run; nothing asserts on time), and their state.
async fn reference(g: &CompiledGraph<DynState>, durability: Durability) -> (u64, Vec<String>) {
    let mut expected = Vec::new();
    let mut length = Duration::MAX;
    for i in 0..3 {
        let config = RunConfig::thread(format!("reference-{i}")).durability(durability);
        let started = Instant::now();
        expected = log_of(&g.invoke(input(), &config).await.unwrap());
        length = length.min(started.elapsed());
    }
    let mut names = expected.clone();
    names.sort();
    assert_eq!(names, ["a", "b", "c", "d", "i1", "i2", "x", "|"]);
    ((length.as_micros() as u64).clamp(50, 200_000), expected)
}

async fn run_case(saver: Arc<dyn CheckpointSaver>, durability: Durability, seed: u64) {
    run_cancelled(saver.clone(), saver, durability, seed, Cancel::Invoke).await
}

/// Cancels on `saver`, resumes on `resumer` (the same saver, or another instance on the same
/// database standing for another process: the cancelled side then calls `settle` before it
/// hands the thread over).
async fn run_cancelled(
    saver: Arc<dyn CheckpointSaver>,
    resumer: Arc<dyn CheckpointSaver>,
    durability: Durability,
    seed: u64,
    how: Cancel,
) {
    let g = graph(&saver);
    let other = if Arc::ptr_eq(&saver, &resumer) {
        None
    } else {
        Some(graph(&resumer))
    };
    let (budget, expected) = reference(&g, durability).await;

    let mut rng = Rng(seed);
    let mut failures = Failures::default();
    let mut cancelled = 0;
    for round in 0..ROUNDS {
        let thread = format!("cancel-{round}");
        let config = RunConfig::thread(thread.clone()).durability(durability);
        let limit = Duration::from_micros(rng.below(budget));
        if cancel_after(&g, &config, limit, how).await {
            cancelled += 1;
        }
        // Resume at once; a thread with nothing stored yet starts again from its input.
        let resume = match &other {
            Some(other) => {
                g.settle(&config).await;
                other
            }
            None => &g,
        };
        let mut result = resume
            .invoke(NoInput, &config)
            .await
            .map(stategraph::Outcome::into_state);
        match &result {
            Err(stategraph::Error::EmptyInput(_)) => {
                result = resume
                    .invoke(input(), &config)
                    .await
                    .map(stategraph::Outcome::into_state);
            }
            // The cancelled run had finished: the thread's state is its result.
            Err(stategraph::Error::NothingToResume { .. }) => {
                result = match resume.get_state(&config).await {
                    Ok(snapshot) => <DynState as stategraph::State>::from_values(&snapshot.values),
                    Err(e) => Err(e),
                };
            }
            _ => {}
        }
        match result {
            Ok(state) => {
                let got = log_of(&state);
                if got != expected {
                    failures.wrong_state.push(format!("round {round}: {got:?}"));
                }
            }
            Err(stategraph::Error::Conflict { .. }) => failures.conflicts += 1,
            // A conflict met by the subgraph reaches the run as the node's failure.
            Err(e) if e.to_string().contains("conflict") => failures.conflicts += 1,
            Err(e) => failures.other_errors.push(format!("round {round}: {e}")),
        }
        failures.forks += forks(&saver, &thread).await;
    }
    println!("{how:?} {durability:?}: {cancelled} of {ROUNDS} runs cancelled, {failures:?}");
    assert!(
        failures.forks == 0
            && failures.conflicts == 0
            && failures.other_errors.is_empty()
            && failures.wrong_state.is_empty(),
        "{how:?} {durability:?} (seed {seed}): {failures:#?}"
    );
}

macro_rules! cancel_cases {
    ($($mode:ident: $durability:expr, $seed:expr;)*) => {
        $(
            mod $mode {
                use super::*;

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn memory() {
                    run_case(support::savers::memory(), $durability, $seed).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    run_case(support::savers::sqlite(), $durability, $seed).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    let Some((saver, _schema)) = support::savers::postgres_fenced().await else {
                        return;
                    };
                    run_case(Arc::new(saver), $durability, $seed).await;
                }
            }
        )*
    };
}

cancel_cases! {
    sync: Durability::Sync, 0x5eed_0001;
    durability_async: Durability::Async, 0x5eed_0002;
    exit: Durability::Exit, 0x5eed_0003;
}

/// Dropping a stream cancels its run like dropping an `invoke` future (durability `async`,
/// where the most is in flight).
mod stream {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn memory() {
        let saver = support::savers::memory();
        run_cancelled(
            saver.clone(),
            saver,
            Durability::Async,
            0x5eed_0004,
            Cancel::Stream,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        let saver = support::savers::sqlite();
        run_cancelled(
            saver.clone(),
            saver,
            Durability::Async,
            0x5eed_0005,
            Cancel::Stream,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        let Some((saver, _schema)) = support::savers::postgres_fenced().await else {
            return;
        };
        let saver: Arc<dyn CheckpointSaver> = Arc::new(saver);
        run_cancelled(
            saver.clone(),
            saver,
            Durability::Async,
            0x5eed_0006,
            Cancel::Stream,
        )
        .await;
    }
}

/// A thread cancelled on one saver instance and, after `settle`, resumed on another instance
/// on the same database (what another process does).
mod hand_over {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        let dir = std::env::temp_dir().join(format!("sg-cancel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("hand_over.db");
        let _ = std::fs::remove_file(&path);
        let open = || -> Arc<dyn CheckpointSaver> {
            Arc::new(stategraph_checkpoint_sqlite::SqliteSaver::open(&path).unwrap())
        };
        let (a, b) = (open(), open());
        run_cancelled(a, b, Durability::Async, 0x5eed_0007, Cancel::Invoke).await;
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        let Some((a, schema)) = support::savers::postgres_fenced().await else {
            return;
        };
        let b = stategraph_checkpoint_postgres::PostgresSaver::connect(&schema.url())
            .await
            .unwrap();
        let (a, b): (Arc<dyn CheckpointSaver>, Arc<dyn CheckpointSaver>) =
            (Arc::new(a), Arc::new(b));
        run_cancelled(a, b, Durability::Async, 0x5eed_0008, Cancel::Invoke).await;
    }
}

/// Issue 20, hole 3: after a cancel the caller *reads* the thread to decide what to do next,
/// as an application does: `get_state`, `get_state_history`, or the saver's own `get_tuple`
/// or `list` (through the very saver instance it gave the graph). No checkpoint: the
/// thread never started, so it runs again with its input; a checkpoint: it resumes with
/// `NoInput`. Every read must already see every save the cancelled run handed over, or
/// the input is applied twice.
async fn read_then_decide(
    saver: Arc<dyn CheckpointSaver>,
    durability: Durability,
    seed: u64,
    how: Cancel,
) {
    let g = graph(&saver);
    let (budget, expected) = reference(&g, durability).await;
    let mut rng = Rng(seed);
    let (mut cancelled, mut started_again) = (0, 0);
    let mut wrong = Vec::new();
    for round in 0..ROUNDS {
        let thread = format!("read-{round}");
        let config = RunConfig::thread(thread.clone()).durability(durability);
        let limit = Duration::from_micros(rng.below(budget));
        if cancel_after(&g, &config, limit, how).await {
            cancelled += 1;
        }
        // Each read in turn goes first (the later ones would find the saves stored); the
        // first one decides, and all must agree.
        let mut seen = Vec::new();
        for i in 0..READS.len() {
            let read = READS[(round + i) % READS.len()];
            seen.push((read, has_checkpoint(&g, &saver, &thread, read).await));
        }
        let stored = seen[0].1;
        if seen.iter().any(|(_, s)| *s != stored) {
            wrong.push(format!("round {round}: the reads disagree: {seen:?}"));
        }
        let state = if !stored {
            started_again += 1;
            g.invoke(input(), &config).await.map(|o| o.into_state())
        } else {
            match g.invoke(NoInput, &config).await {
                // The cancelled run had finished: the thread's state is its result.
                Err(stategraph::Error::NothingToResume { .. }) => {
                    let values = g.get_state(&config).await.unwrap().values;
                    <DynState as stategraph::State>::from_values(&values)
                }
                other => other.map(|o| o.into_state()),
            }
        };
        match state {
            Ok(state) => {
                let got = log_of(&state);
                if got != expected {
                    wrong.push(format!("round {round}: {got:?}"));
                }
            }
            Err(e) => wrong.push(format!("round {round}: {e}")),
        }
    }
    println!(
        "read then decide, {how:?} {durability:?}: {cancelled} of {ROUNDS} runs cancelled, \
         {started_again} started again with their input"
    );
    assert!(
        wrong.is_empty(),
        "{how:?} {durability:?} (seed {seed}): {} of {ROUNDS} rounds wrong: {wrong:#?}",
        wrong.len()
    );
}

/// The reads a caller may decide by.
const READS: [&str; 4] = [
    "get_state",
    "get_state_history",
    "saver.get_tuple",
    "saver.list",
];

/// Whether `read` finds a checkpoint of `thread` (its root namespace).
async fn has_checkpoint(
    g: &CompiledGraph<DynState>,
    saver: &Arc<dyn CheckpointSaver>,
    thread: &str,
    read: &str,
) -> bool {
    let config = RunConfig::thread(thread);
    let root = CheckpointConfig::thread(thread);
    let one = ListOptions::default().limit(1);
    match read {
        "get_state" => g.get_state(&config).await.unwrap().created_at.is_some(),
        "get_state_history" => {
            let history = g.get_state_history(&config, &one).await.unwrap();
            !history.is_empty()
        }
        "saver.get_tuple" => saver.get_tuple(&root).await.unwrap().is_some(),
        _ => {
            let listed = saver.list(Some(&root), &one).await.unwrap();
            !listed.is_empty()
        }
    }
}

macro_rules! read_cases {
    ($($mode:ident: $durability:expr, $seed:expr;)*) => {
        /// Cancel, read (`get_state`, `get_state_history`, `saver.get_tuple`, `saver.list`), decide: the input applied once.
        mod read_then_decide {
            use super::*;
            $(
                mod $mode {
                    use super::*;

                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn memory() {
                        read_then_decide(support::savers::memory(), $durability, $seed, Cancel::Invoke).await;
                    }

                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn sqlite() {
                        read_then_decide(support::savers::sqlite(), $durability, $seed, Cancel::Invoke).await;
                    }

                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn postgres() {
                        let Some((saver, _schema)) = support::savers::postgres_fenced().await
                        else {
                            return;
                        };
                        read_then_decide(Arc::new(saver), $durability, $seed, Cancel::Invoke).await;
                    }
                }
            )*
        }
    };
}

read_cases! {
    sync: Durability::Sync, 0x5eed_0011;
    durability_async: Durability::Async, 0x5eed_0012;
    exit: Durability::Exit, 0x5eed_0013;
}

/// Cancel by dropping a stream, then read and decide (durability `async`): the stream's run
/// is dropped later, on its own task, and the reads still wait for its saves.
mod read_then_decide_stream {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        let saver = support::savers::sqlite();
        read_then_decide(saver, Durability::Async, 0x5eed_0014, Cancel::Stream).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        let Some((saver, _schema)) = support::savers::postgres_fenced().await else {
            return;
        };
        let saver: Arc<dyn CheckpointSaver> = Arc::new(saver);
        read_then_decide(saver, Durability::Async, 0x5eed_0015, Cancel::Stream).await;
    }
}
