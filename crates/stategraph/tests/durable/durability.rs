//! Durability modes: `exit` stores only where the run stopped, `sync` and `async` store the
//! same checkpoints and writes.

use std::sync::Arc;

use indexmap::IndexMap;
use stategraph::checkpoint::{CheckpointSaver, CheckpointSource};
use stategraph::{
    list, Command, Durability, DynState, NoInput, NodeContext, NodeError, RunConfig, StateGraph,
    Value, END, START,
};

use crate::for_each_saver;
use crate::support::golden::{saver as seeded_saver, sources};
use crate::util::{
    all_namespaces, history, log_graph, log_input, log_of, logs, parent_id, with_saver, writes,
    Calls,
};

type Update = Vec<(String, Value)>;

/// `START -> a -> b -> END`.
fn two_nodes(calls: &Calls) -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("a", logs("a", calls))
        .add_node("b", logs("b", calls));
    g.add_edge(START, "a").add_edge("a", "b").add_edge("b", END);
    g
}

/// What an asking node's call returns.
type Asked = futures::future::BoxFuture<'static, Result<Update, NodeError>>;

/// A node that asks `"ok?"` and logs `name:answer`.
fn asks(
    name: &'static str,
    calls: &Calls,
) -> impl Fn(DynState, NodeContext) -> Asked + Send + Sync + 'static {
    let calls = calls.clone();
    move |_s: DynState, ctx: NodeContext| {
        calls.hit(name);
        Box::pin(async move {
            let a = ctx.interrupt("ok?")?;
            let line = format!("{name}:{}", a.as_str().unwrap());
            Ok(stategraph::update([("log", list![line])]))
        })
    }
}

/// `START -> a -> ask -> END`, `ask` interrupting.
fn interrupted(calls: &Calls) -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("a", logs("a", calls))
        .add_node("ask", asks("ask", calls));
    g.add_edge(START, "a")
        .add_edge("a", "ask")
        .add_edge("ask", END);
    g
}

/// `START -> pre -> sub -> END` where `sub` runs `i1 -> i2`, `i2` interrupting if `ask`.
fn nested(calls: &Calls, ask: bool) -> StateGraph<DynState> {
    let mut sb = log_graph();
    sb.add_node("i1", logs("i1", calls));
    if ask {
        sb.add_node("i2", asks("i2", calls));
    } else {
        sb.add_node("i2", logs("i2", calls));
    }
    sb.add_edge(START, "i1")
        .add_edge("i1", "i2")
        .add_edge("i2", END);
    let sub = sb.compile().unwrap();
    let mut g = log_graph();
    g.add_node("pre", logs("pre", calls))
        .add_subgraph("sub", &sub);
    g.add_edge(START, "pre")
        .add_edge("pre", "sub")
        .add_edge("sub", END);
    g
}

fn exit(thread: &str) -> RunConfig {
    RunConfig::thread(thread).durability(Durability::Exit)
}

// Python: one checkpoint, step 2, parent None, no writes; a second run on the thread adds
// one checkpoint (step 6) whose parent is the first.
for_each_saver! {
    async fn exit_stores_one_checkpoint_per_run(saver) {
        let graph = with_saver(&two_nodes(&Calls::new()), &saver);
        let out = graph.invoke(log_input(&[]), &exit("t")).await.unwrap();
        assert_eq!(log_of(&out), ["a", "b"]);
        let stored = history(&saver, "t").await;
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].metadata.step, Some(2));
        assert_eq!(stored[0].metadata.source, Some(CheckpointSource::Loop));
        assert_eq!(parent_id(&stored[0]), None);
        assert!(stored[0].pending_writes.is_empty());

        let out = graph
            .invoke(log_input(&["again"]), &exit("t"))
            .await
            .unwrap();
        assert_eq!(log_of(&out), ["a", "b", "again", "a", "b"]);
        let stored = history(&saver, "t").await;
        assert_eq!(stored.len(), 2);
        assert_eq!(stored[1].metadata.step, Some(6));
        assert_eq!(parent_id(&stored[1]), Some(stored[0].checkpoint.id.clone()));
        assert!(stored[1].pending_writes.is_empty());
    }
}

// Python: the interrupted run stores the step-1 checkpoint and the `__interrupt__` write;
// the resume stores one more checkpoint (step 2, parent the first) and not the client's
// `__resume__` write.
for_each_saver! {
    async fn exit_stores_the_interrupt_and_resumes_from_it(saver) {
        let calls = Calls::new();
        let graph = with_saver(&interrupted(&calls), &saver);
        let out = graph
            .invoke(log_input(&[]), &exit("t"))
            .await
            .unwrap();
        assert_eq!(out.interrupts.len(), 1);
        let stored = history(&saver, "t").await;
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].metadata.step, Some(1));
        assert_eq!(parent_id(&stored[0]), None);
        let interrupt_write = vec![(
            "__interrupt__".to_owned(),
            Value::List(
                out.interrupts
                    .iter()
                    .map(stategraph::Interrupt::to_value)
                    .collect(),
            ),
        )];
        assert_eq!(writes(&stored[0]), interrupt_write);
        let state = graph.get_state(&RunConfig::thread("t")).await.unwrap();
        assert_eq!(state.next, ["ask"]);
        assert_eq!(state.interrupts, out.interrupts);

        let out = graph
            .invoke(Command::resume("yes"), &exit("t"))
            .await
            .unwrap();
        assert_eq!(log_of(&out), ["a", "ask:yes"]);
        let stored = history(&saver, "t").await;
        assert_eq!(stored.len(), 2);
        assert_eq!(
            writes(&stored[0]),
            interrupt_write,
            "no __resume__ write was stored"
        );
        assert_eq!(stored[1].metadata.step, Some(2));
        assert_eq!(parent_id(&stored[1]), Some(stored[0].checkpoint.id.clone()));
        assert!(stored[1].pending_writes.is_empty());
        assert_eq!((calls.of("a"), calls.of("ask")), (1, 2));
    }
}

fn namespaces(tuples: &[stategraph::checkpoint::CheckpointTuple]) -> Vec<String> {
    let mut ns: Vec<String> = tuples.iter().map(|t| t.config.ns().to_owned()).collect();
    ns.sort();
    ns.dedup();
    ns
}

// Python: a subgraph run to its end under `exit` stores nothing in its namespace; only
// the root's final checkpoint is stored.
for_each_saver! {
    // Cause: run_loop.rs `exit()` saves whenever the checkpoint moved, also for a nested
    // loop that finished; Python saves a nested graph only on an error or interrupt.

    async fn exit_stores_nothing_for_a_subgraph_that_completed(saver) {
        let graph = with_saver(&nested(&Calls::new(), false), &saver);
        let out = graph.invoke(log_input(&[]), &exit("t")).await.unwrap();
        assert_eq!(log_of(&out), ["pre", "pre", "i1", "i2"]);
        let stored = all_namespaces(&saver, "t").await;
        assert_eq!(namespaces(&stored), [""], "only the root namespace");
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].metadata.step, Some(2));
    }
}

// Python: a subgraph interrupted under `exit` stores its step-1 checkpoint with the
// `__interrupt__` write, and the root stores its own; the resume adds only the root's
// final checkpoint.
for_each_saver! {
    async fn exit_stores_an_interrupted_subgraph_and_resumes_it(saver) {
        let calls = Calls::new();
        let graph = with_saver(&nested(&calls, true), &saver);
        let out = graph
            .invoke(log_input(&[]), &exit("t"))
            .await
            .unwrap();
        assert_eq!(out.interrupts.len(), 1);
        let stored = all_namespaces(&saver, "t").await;
        let ns = namespaces(&stored);
        assert_eq!(ns.len(), 2, "{ns:?}");
        assert!(ns[1].starts_with("sub:"));
        for t in &stored {
            assert_eq!(t.metadata.step, Some(1), "{}", t.config.ns());
            assert_eq!(parent_id(t), None);
            let channels: Vec<String> = writes(t).into_iter().map(|w| w.0).collect();
            assert_eq!(channels, ["__interrupt__"], "{}", t.config.ns());
        }

        let out = graph
            .invoke(Command::resume("y"), &exit("t"))
            .await
            .unwrap();
        assert_eq!(log_of(&out), ["pre", "pre", "i1", "i2:y"]);
        let root = history(&saver, "t").await;
        assert_eq!(root.len(), 2);
        assert_eq!(root[1].metadata.step, Some(2));
        assert_eq!(parent_id(&root[1]), Some(root[0].checkpoint.id.clone()));
        assert_eq!((calls.of("i1"), calls.of("i2")), (1, 2));
    }
}

/// What a thread stored, without ids, versions or timestamps: per namespace (task ids
/// dropped), each checkpoint oldest first as `step source values parent-index writes`.
async fn summary(saver: &Arc<dyn CheckpointSaver>, thread: &str) -> Vec<String> {
    let mut by_ns: IndexMap<String, Vec<stategraph::checkpoint::CheckpointTuple>> = IndexMap::new();
    for t in all_namespaces(saver, thread).await {
        let ns = t.config.ns().split(':').next().unwrap_or("").to_owned();
        by_ns.entry(ns).or_default().push(t);
    }
    by_ns.sort_keys();
    let mut out = Vec::new();
    for (ns, mut tuples) in by_ns {
        tuples.sort_by(|a, b| a.checkpoint.id.cmp(&b.checkpoint.id));
        let ids: Vec<String> = tuples.iter().map(|t| t.checkpoint.id.clone()).collect();
        for t in &tuples {
            let parent = parent_id(t).map(|p| ids.iter().position(|i| *i == p));
            out.push(format!(
                "[{ns}] step {:?} {:?} values {:?} parent {parent:?} writes {:?}",
                t.metadata.step,
                t.metadata.source,
                t.checkpoint.channel_values,
                without_interrupt_ids(writes(t)),
            ));
        }
    }
    out
}

/// Interrupt ids hash the task's namespace, which holds random checkpoint ids: keep only
/// the interrupts' values.
fn without_interrupt_ids(writes: Vec<(String, Value)>) -> Vec<(String, Value)> {
    writes
        .into_iter()
        .map(|(c, v)| {
            if c != "__interrupt__" {
                return (c, v);
            }
            let values = v
                .as_list()
                .unwrap()
                .iter()
                .map(|i| stategraph::Interrupt::from_value(i).unwrap().value)
                .collect();
            (c, Value::List(values))
        })
        .collect()
}

/// Runs the same story under `mode` on thread `thread`: a nested run interrupted and
/// resumed, then a failing node resumed by a rerun.
async fn story(saver: &Arc<dyn CheckpointSaver>, mode: Durability, thread: &str) -> Vec<String> {
    let cfg = RunConfig::thread(thread)
        .durability(mode)
        .max_concurrency(1);
    let graph = with_saver(&nested(&Calls::new(), true), saver);
    let _ = graph.invoke(log_input(&[]), &cfg).await.unwrap();
    let _ = graph.invoke(Command::resume("y"), &cfg).await.unwrap();

    let calls = Calls::new();
    let mut g = log_graph();
    g.add_node("ok", logs("ok", &calls));
    let c = calls.clone();
    g.add_node("flaky", move |_s: DynState| {
        let first = c.hit("flaky") == 1;
        async move {
            if first {
                return Err(NodeError::msg("once"));
            }
            Ok(stategraph::update([("log", list!["flaky"])]))
        }
    });
    g.add_edge(START, "ok").add_edge(START, "flaky");
    let graph = with_saver(&g, saver);
    let second = format!("{thread}-failing");
    let cfg = RunConfig::thread(&second)
        .durability(mode)
        .max_concurrency(1);
    graph.invoke(log_input(&[]), &cfg).await.unwrap_err();
    let _ = graph.invoke(NoInput, &cfg).await.unwrap();
    let mut all = summary(saver, thread).await;
    all.extend(summary(saver, &second).await);
    all
}

for_each_saver! {
    async fn sync_and_async_store_the_same_checkpoints_and_writes(saver) {
        let sync = story(&saver, Durability::Sync, "sync").await;
        let not_sync = story(&saver, Durability::Async, "async").await;
        assert!(sync.len() > 10, "{sync:#?}");
        assert_eq!(sync, not_sync);
    }
}

// With the ids, versions and clocks of the golden traces, the two modes store the same
// bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_and_async_store_the_same_bytes_in_a_memory_saver() {
    let mut dumps = Vec::new();
    for mode in [Durability::Sync, Durability::Async] {
        let saver = seeded_saver();
        let graph = with_saver(
            &nested(&Calls::new(), true),
            &(saver.clone() as Arc<dyn CheckpointSaver>),
        )
        .with_sources(sources());
        let cfg = RunConfig::thread("t").durability(mode);
        let _ = graph.invoke(log_input(&[]), &cfg).await.unwrap();
        let _ = graph.invoke(Command::resume("y"), &cfg).await.unwrap();
        dumps.push(saver.dump());
    }
    assert_eq!(dumps[0], dumps[1]);
}

// Python: a run that stops again at the checkpoint it loaded (here: the second question of
// the same node) still stores its new writes under `exit`: the `__resume__` answers and
// the new `__interrupt__`. Without them the next resume answers the first question again.
for_each_saver! {
    // Cause: run_loop.rs:464 returns early when `checkpoint.id == loaded_id`, so the
    // pending writes of a run that did not finish a step are never stored.

    async fn exit_stores_the_writes_of_a_run_that_stopped_where_it_started(saver) {
        let calls = Calls::new();
        let mut g = log_graph();
        let c = calls.clone();
        g.add_node("two", move |_s: DynState, ctx: NodeContext| {
            c.hit("two");
            async move {
                let x = ctx.interrupt("first?")?;
                let y = ctx.interrupt("second?")?;
                let line = format!("two:{}+{}", x.as_str().unwrap(), y.as_str().unwrap());
                Ok::<_, NodeError>(stategraph::update([("log", list![line])]))
            }
        });
        g.add_edge(START, "two").add_edge("two", END);
        let graph = with_saver(&g, &saver);
        let _ = graph.invoke(log_input(&[]), &exit("t")).await.unwrap();
        let out = graph
            .invoke(Command::resume("X"), &exit("t"))
            .await
            .unwrap();
        assert_eq!(out.interrupts[0].value, Value::from("second?"));
        let state = graph.get_state(&RunConfig::thread("t")).await.unwrap();
        assert_eq!(
            state.interrupts, out.interrupts,
            "the second question is stored"
        );

        let out = graph
            .invoke(Command::resume("Y"), &exit("t"))
            .await
            .unwrap();
        assert!(out.interrupts.is_empty(), "{:?}", out.interrupts);
        assert_eq!(log_of(&out.state), ["two:X+Y"]);
        assert_eq!(calls.of("two"), 3);
    }
}

// Python: `a` fails on its first call, `b` on its first two (one task at a time). The
// second run's successful `a` is stored next to `b`'s new error although the run ended
// at the checkpoint it loaded; the third run does not run `a` again.
for_each_saver! {
    // Cause: the same early return as above (run_loop.rs:464).

    async fn exit_keeps_the_work_of_a_rerun_that_failed_again(saver) {
        let calls = Calls::new();
        let mut g = log_graph();
        for (name, failures) in [("a", 1), ("b", 2)] {
            let c = calls.clone();
            g.add_node(name, move |_s: DynState| {
                let n = c.hit(name);
                async move {
                    if n <= failures {
                        return Err(NodeError::named("ValueError", format!("{name} call {n}")));
                    }
                    Ok(stategraph::update([("log", list![name])]))
                }
            });
            g.add_edge(START, name).add_edge(name, END);
        }
        let graph = with_saver(&g, &saver);
        let cfg = exit("t").max_concurrency(1);
        graph.invoke(log_input(&[]), &cfg).await.unwrap_err();
        graph.invoke(NoInput, &cfg).await.unwrap_err();
        let stored = history(&saver, "t").await;
        assert_eq!(stored.len(), 1);
        assert!(
            writes(&stored[0]).contains(&("log".to_owned(), list!["a"])),
            "a's write of the second run is stored: {:?}",
            writes(&stored[0])
        );
        let out = graph.invoke(NoInput, &cfg).await.unwrap();
        assert_eq!(log_of(&out), ["a", "b"]);
        assert_eq!(calls.of("a"), 2, "a finished in the second run");
    }
}
