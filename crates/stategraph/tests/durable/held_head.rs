//! `RunConfig::start_from`: a conversation whose runs start from the head the previous
//! run handed back (`RunStream::final_head`) stores what one whose runs read the thread
//! stores, across interrupts, resumes and `Send`; a stale head is the fence's `Conflict`
//! and overwrites nothing; a contradictory config is refused. Run on the fencing savers:
//! memory, SQLite, Postgres.

use std::sync::Arc;

use futures::StreamExt;
use stategraph::checkpoint::{CheckpointSaver, CheckpointTuple, MemorySaver};
use stategraph::graph::IntoInput;
use stategraph::{
    list, Command, CompiledGraph, Durability, DynState, Error, InputFate, NodeContext, NodeError,
    RunConfig, StateGraph, StreamMode, ThreadHead, Value, END, START,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

use crate::support::crash_saver::CrashSaver;
use crate::support::savers::{postgres_fenced, PostgresSchema};
use crate::util::{all_namespaces, log, log_graph, log_input, logs, strings, with_saver, Calls};

const MODES: [Durability; 3] = [Durability::Sync, Durability::Async, Durability::Exit];

type Named = (
    &'static str,
    Arc<dyn CheckpointSaver>,
    Option<PostgresSchema>,
);

/// A fresh fencing saver of each backend (Postgres when reachable), named.
async fn fenced_savers() -> Vec<Named> {
    let mut out: Vec<Named> = vec![
        ("memory", Arc::new(MemorySaver::new()), None),
        ("sqlite", Arc::new(SqliteSaver::in_memory().unwrap()), None),
    ];
    if let Some((saver, guard)) = postgres_fenced().await {
        out.push(("postgres", Arc::new(saver), Some(guard)));
    }
    out
}

/// `START -Send x2-> work -> ask -> END`: two `Send` tasks, then a node that interrupts
/// and logs the answer.
fn chat(calls: &Calls) -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("work", move |s: DynState| {
        let item = s.get("item").and_then(Value::as_str).unwrap().to_owned();
        async move { Ok::<_, NodeError>(stategraph::update([("log", list![item])])) }
    })
    .add_node("ask", |_s: DynState, ctx: NodeContext| async move {
        let answer = ctx.interrupt("ok?")?;
        let line = format!("ask:{}", answer.as_str().unwrap_or_default());
        Ok::<_, NodeError>(stategraph::update([("log", list![line])]))
    })
    .add_node("tail", logs("tail", calls));
    g.add_conditional_edges(START, |_s: &DynState| {
        ["one", "two"]
            .map(|i| stategraph::Send::new("work", stategraph::map! { "item" => i }))
            .to_vec()
    });
    g.add_edge("work", "ask")
        .add_edge("ask", "tail")
        .add_edge("tail", END);
    g
}

/// Streams a run to its end; returns the head it hands back (panics on a failed run).
async fn run(
    graph: &CompiledGraph<DynState>,
    input: impl IntoInput,
    cfg: &RunConfig,
) -> Option<ThreadHead> {
    let mut stream = graph.stream_run(input, cfg, [StreamMode::Values]);
    while let Some(event) = stream.next().await {
        event.unwrap();
    }
    assert!(stream.final_state().is_some(), "the run ended normally");
    stream.final_head().cloned()
}

/// What a thread stores, without what differs between two threads by construction
/// (checkpoint, task and interrupt ids, timestamps): per checkpoint, oldest first, its
/// step, source, values and parent's position, and its writes' channels (with the value
/// where it holds no ids).
fn stored(history: &[CheckpointTuple]) -> Vec<String> {
    let ids: Vec<&str> = history.iter().map(|t| t.checkpoint.id.as_str()).collect();
    history
        .iter()
        .rev()
        .map(|t| {
            let parent = t
                .parent_config
                .as_ref()
                .and_then(|p| p.checkpoint_id.as_deref())
                .map(|p| ids.iter().position(|i| *i == p));
            let mut values: Vec<_> = t.checkpoint.channel_values.iter().collect();
            values.sort_by(|a, b| a.0.cmp(b.0));
            let mut writes: Vec<String> = t
                .pending_writes
                .iter()
                .map(|w| match w.channel.as_str() {
                    "__interrupt__" => w.channel.clone(),
                    c => format!("{c}={:?}", w.value),
                })
                .collect();
            writes.sort();
            format!(
                "step {:?} {:?} parent {parent:?} values {values:?} writes {writes:?}",
                t.metadata.step, t.metadata.source
            )
        })
        .collect()
}

// The same conversation twice on one saver: once reading the thread at every run, once
// starting each run with new input from the head the run before handed back. Both store
// the same checkpoints and writes and end in the same state; the second reads only for
// the resumes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_from_held_heads_stores_what_one_that_reads_stores() {
    for (name, inner, _guard) in fenced_savers().await {
        for mode in MODES {
            let saver = Arc::new(CrashSaver::new(inner.clone()));
            let dyn_saver: Arc<dyn CheckpointSaver> = saver.clone();
            let graph = with_saver(&chat(&Calls::new()), &dyn_saver);
            let turns: [(&str, bool); 5] = [
                ("new", false),
                ("resume", true),
                ("new", false),
                ("new", false), // on a thread paused at the interrupt
                ("resume", true),
            ];
            let mut finals = Vec::new();
            for held in [false, true] {
                let thread = format!("chat-{held}-{mode:?}");
                let mut head: Option<ThreadHead> = None;
                let reads = saver.get_tuples();
                for (i, (kind, _)) in turns.iter().enumerate() {
                    let mut cfg = RunConfig::thread(&thread)
                        .durability(mode)
                        .with_metadata("run_id", format!("run-{i}"));
                    if let (true, Some(h)) = (held, head.take()) {
                        cfg = cfg.start_from(h);
                    }
                    head = if *kind == "new" {
                        run(&graph, log_input(&[&format!("in{i}")]), &cfg).await
                    } else {
                        run(&graph, Command::resume(format!("yes{i}")), &cfg).await
                    };
                    assert!(head.is_some(), "{name} {mode:?} turn {i}: a head");
                }
                let resumes = turns.iter().filter(|t| t.1).count();
                let new_runs = turns.len() - resumes;
                // The first run has nothing to start from: it reads, as do resumes.
                let expected = if held { 1 + resumes } else { turns.len() };
                assert_eq!(
                    saver.get_tuples() - reads,
                    expected,
                    "{name} {mode:?} held={held}: reads at the start ({new_runs} new runs)"
                );
                let state = graph.get_state(&RunConfig::thread(&thread)).await.unwrap();
                finals.push((
                    stored(&all_namespaces(&dyn_saver, &thread).await),
                    state.values,
                    state.next,
                ));
            }
            assert_eq!(finals[0], finals[1], "{name} {mode:?}");
            assert_eq!(
                strings(finals[1].1.get("log")),
                log(&[
                    "in0", "one", "two", "ask:yes1", "tail", "in2", "one", "two", "in3", "one",
                    "two", "ask:yes4", "tail"
                ]),
                "{name} {mode:?}"
            );
        }
    }
}

// The thread moved on after the head was handed back (a run that read it, an
// update_state): a run from the old head is refused at its first put, and the thread's
// checkpoints and writes are as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_head_is_a_conflict_and_overwrites_nothing() {
    for (name, saver, _guard) in fenced_savers().await {
        for mode in MODES {
            for moved_by in ["run", "update_state"] {
                let graph = with_saver(&chat(&Calls::new()), &saver);
                let thread = format!("stale-{moved_by}-{mode:?}");
                let cfg = RunConfig::thread(&thread).durability(mode);
                let old = run(&graph, log_input(&["a"]), &cfg).await.unwrap();
                if moved_by == "run" {
                    run(&graph, Command::resume("y"), &cfg).await;
                } else {
                    graph
                        .update_state(&cfg, log_input(&["u"]), None)
                        .await
                        .unwrap();
                }
                let stored = all_namespaces(&saver, &thread).await;
                let err = graph
                    .invoke(log_input(&["b"]), &cfg.clone().start_from(old))
                    .await
                    .unwrap_err();
                assert!(
                    matches!(
                        err,
                        Error::Conflict {
                            fate: InputFate::NotApplied,
                            ..
                        }
                    ),
                    "{name} {mode:?} {moved_by}: {err:?}"
                );
                assert_eq!(
                    all_namespaces(&saver, &thread).await,
                    stored,
                    "{name} {mode:?} {moved_by}"
                );
            }
        }
    }
}

// A head with a checkpoint_id, with assume_new_thread, or for another thread is a
// contradiction; a run that continues the head's own run (same run_id: a resume) reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contradictory_head_is_invalid_config_and_a_continuation_reads() {
    let inner: Arc<dyn CheckpointSaver> = Arc::new(MemorySaver::new());
    let saver = Arc::new(CrashSaver::new(inner));
    let dyn_saver: Arc<dyn CheckpointSaver> = saver.clone();
    let graph = with_saver(&chat(&Calls::new()), &dyn_saver);
    let cfg = RunConfig::thread("t").with_metadata("run_id", "r1");
    let head = run(&graph, log_input(&["a"]), &cfg).await.unwrap();
    assert_eq!(head.thread_id(), "t");
    assert_eq!(head.write_count(), 1, "the interrupt of ask");
    let contradictions = [
        RunConfig::thread("t").at_checkpoint(head.checkpoint_id()),
        RunConfig::thread("t").assume_new_thread(),
        RunConfig::thread("other"),
    ];
    for c in contradictions {
        let err = graph
            .invoke(log_input(&["b"]), &c.clone().start_from(head.clone()))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::InvalidConfig(_)), "{c:?}: {err:?}");
    }
    let reads = saver.get_tuples();
    run(&graph, log_input(&["b"]), &cfg.clone().start_from(head)).await;
    assert_eq!(
        saver.get_tuples() - reads,
        1,
        "the same run_id resumes: it reads"
    );
}
