//! `RunConfig::assume_new_thread`: a run with new input on a thread the caller knows is
//! empty starts without reading the saver; a wrong assumption is the fence's `Conflict`
//! and overwrites nothing; where the option does not apply it is ignored (or, with a
//! `checkpoint_id`, refused). Run on the fencing savers: memory, SQLite, Postgres.

use std::sync::Arc;

use stategraph::checkpoint::{CheckpointSaver, MemorySaver};
use stategraph::{
    list, Command, Durability, DynState, Error, InputFate, NoInput, NodeContext, NodeError,
    RunConfig, StateGraph, END, START,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

use crate::support::crash_saver::CrashSaver;
use crate::support::savers::{postgres_fenced, PostgresSchema};
use crate::util::{all_namespaces, log, log_graph, log_input, log_of, logs, with_saver, Calls};

const MODES: [Durability; 3] = [Durability::Sync, Durability::Async, Durability::Exit];

/// The fencing savers, named (the Postgres one with the guard of its schema, when the
/// server is reachable).
async fn fenced_savers() -> Vec<(
    &'static str,
    Arc<dyn CheckpointSaver>,
    Option<PostgresSchema>,
)> {
    let mut out: Vec<(
        &'static str,
        Arc<dyn CheckpointSaver>,
        Option<PostgresSchema>,
    )> = vec![
        ("memory", Arc::new(MemorySaver::new()), None),
        ("sqlite", Arc::new(SqliteSaver::in_memory().unwrap()), None),
    ];
    if let Some((saver, guard)) = postgres_fenced().await {
        out.push(("postgres", Arc::new(saver), Some(guard)));
    }
    for (name, saver, _) in &out {
        assert!(saver.capabilities().fence, "{name} fences");
    }
    out
}

/// `START -> a -> b -> END`.
fn two_nodes(calls: &Calls) -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("a", logs("a", calls))
        .add_node("b", logs("b", calls));
    g.add_edge(START, "a").add_edge("a", "b").add_edge("b", END);
    g
}

/// `START -> a -> ask -> END`, `ask` interrupting once.
fn asking(calls: &Calls) -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("a", logs("a", calls)).add_node(
        "ask",
        |_s: DynState, ctx: NodeContext| async move {
            let answer = ctx.interrupt("ok?")?;
            let line = format!("ask:{}", answer.as_str().unwrap_or_default());
            Ok::<_, NodeError>(stategraph::update([("log", list![line])]))
        },
    );
    g.add_edge(START, "a")
        .add_edge("a", "ask")
        .add_edge("ask", END);
    g
}

fn new_thread(thread: &str, mode: Durability) -> RunConfig {
    RunConfig::thread(thread)
        .durability(mode)
        .assume_new_thread()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_a_new_thread_starts_without_reading_the_saver() {
    for (name, inner, _guard) in fenced_savers().await {
        for mode in MODES {
            let saver = Arc::new(CrashSaver::new(inner.clone()));
            let graph = with_saver(&two_nodes(&Calls::new()), &(saver.clone() as _));
            let thread = format!("new-{mode:?}");
            let out = graph
                .invoke(log_input(&["in"]), &new_thread(&thread, mode))
                .await
                .unwrap();
            assert_eq!(log_of(&out), log(&["in", "a", "b"]), "{name} {mode:?}");
            assert_eq!(saver.get_tuples(), 0, "{name} {mode:?}: no read");
            // The thread is stored as without the option: a later run continues it.
            let cfg = RunConfig::thread(&thread).durability(mode);
            let out = graph.invoke(log_input(&["more"]), &cfg).await.unwrap();
            assert_eq!(
                log_of(&out),
                log(&["in", "a", "b", "more", "a", "b"]),
                "{name} {mode:?}"
            );
            assert_eq!(saver.get_tuples(), 1, "{name} {mode:?}: that run reads");
        }
    }
}

// The caller was wrong: the first put is refused with the fence's Conflict, and the
// thread's checkpoints, writes and state are as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_assumption_is_a_conflict_and_overwrites_nothing() {
    for (name, saver, _guard) in fenced_savers().await {
        for mode in MODES {
            let graph = with_saver(&asking(&Calls::new()), &saver);
            let thread = format!("taken-{mode:?}");
            let cfg = RunConfig::thread(&thread).durability(mode);
            let out = graph.invoke(log_input(&["old"]), &cfg).await.unwrap();
            assert_eq!(out.interrupts.len(), 1, "{name} {mode:?}");
            let stored = all_namespaces(&saver, &thread).await;
            let state = graph.get_state(&cfg).await.unwrap();

            let err = graph
                .invoke(log_input(&["new"]), &new_thread(&thread, mode))
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
                "{name} {mode:?}: {err:?}"
            );
            assert_eq!(
                all_namespaces(&saver, &thread).await,
                stored,
                "{name} {mode:?}"
            );
            assert_eq!(
                graph.get_state(&cfg).await.unwrap(),
                state,
                "{name} {mode:?}"
            );
            // The paused thread still resumes.
            let out = graph.invoke(Command::resume("yes"), &cfg).await.unwrap();
            assert_eq!(
                log_of(&out),
                log(&["old", "a", "ask:yes"]),
                "{name} {mode:?}"
            );
        }
    }
}

#[tokio::test]
async fn assume_new_thread_with_a_checkpoint_id_is_invalid_config() {
    let saver: Arc<dyn CheckpointSaver> = Arc::new(MemorySaver::new());
    let graph = with_saver(&two_nodes(&Calls::new()), &saver);
    let cfg = RunConfig::thread("t")
        .at_checkpoint("1ef4f797-8335-6428-8001-8a1503f9b875")
        .assume_new_thread();
    let err = graph.invoke(log_input(&[]), &cfg).await.unwrap_err();
    assert!(matches!(err, Error::InvalidConfig(_)), "{err:?}");
}

// A resume (Command or NoInput) reads the thread whatever the option says, and so does a
// run on a saver without a fence (a wrong assumption could not be detected there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assume_new_thread_is_ignored_where_it_does_not_apply() {
    let unfenced: Arc<dyn CheckpointSaver> = Arc::new(MemorySaver::new().with_fencing(false));
    let mut savers = fenced_savers().await;
    savers.push(("unfenced memory", unfenced, None));
    for (name, saver, _guard) in savers {
        let graph = with_saver(&asking(&Calls::new()), &saver);
        let cfg = RunConfig::thread("t").assume_new_thread();
        let out = graph.invoke(log_input(&["x"]), &cfg).await.unwrap();
        assert_eq!(out.interrupts.len(), 1, "{name}");
        let out = graph.invoke(Command::resume("yes"), &cfg).await.unwrap();
        assert_eq!(log_of(&out), log(&["x", "a", "ask:yes"]), "{name}");
        let err = graph.invoke(NoInput, &cfg).await.unwrap_err();
        assert!(
            matches!(err, Error::NothingToResume { .. }),
            "{name}: {err:?}"
        );
        if name == "unfenced memory" {
            // New input on the thread: read, so the state goes on.
            let out = graph.invoke(log_input(&["y"]), &cfg).await.unwrap();
            assert_eq!(
                log_of(&out),
                log(&["x", "a", "ask:yes", "y", "a"]),
                "{name}"
            );
        }
    }
}

/// `START -> pre -> sub -> END` where `sub` is [`asking`].
fn nested(calls: &Calls) -> StateGraph<DynState> {
    let sub = asking(calls).compile().unwrap();
    let mut g = log_graph();
    g.add_node("pre", logs("pre", calls))
        .add_subgraph("sub", &sub);
    g.add_edge(START, "pre")
        .add_edge("pre", "sub")
        .add_edge("sub", END);
    g
}

// The option is the root's: a subgraph resumed on the thread loads its own checkpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subgraph_on_a_new_thread_keeps_its_own_state() {
    for (name, saver, _guard) in fenced_savers().await {
        let calls = Calls::new();
        let graph = with_saver(&nested(&calls), &saver);
        let cfg = RunConfig::thread("t").assume_new_thread();
        let out = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        assert_eq!(out.interrupts.len(), 1, "{name}");
        let out = graph.invoke(Command::resume("ok"), &cfg).await.unwrap();
        assert!(log_of(&out).contains(&"ask:ok".to_owned()), "{name}");
        assert_eq!(
            calls.of("a"),
            1,
            "{name}: the subgraph's first node did not rerun"
        );
    }
}
