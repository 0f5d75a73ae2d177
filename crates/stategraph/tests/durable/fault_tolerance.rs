//! Fault tolerance: a failed step keeps the writes of the tasks that finished, a crashed
//! saver loses nothing it stored, and a rerun with `NoInput` runs only what is left and
//! ends in the same state as a run that never failed.

use std::sync::Arc;
use std::time::Duration;

use stategraph::checkpoint::CheckpointSaver;
use stategraph::{
    list, Durability, DynState, NoInput, NodeError, RunConfig, StateGraph, Value, END, START,
};

use crate::for_each_saver;
use crate::support::crash_saver::{is_crash, CrashSaver};
use crate::util::{
    all_namespaces, expect, history, log, log_graph, log_input, log_of, logs, node_error, pairs,
    steps, strings, with_saver, writes, writes_to, Calls,
};

const MODES: [Durability; 3] = [Durability::Sync, Durability::Async, Durability::Exit];

/// The message `b` fails with.
const FAILURE: &str = "ValueError('first call fails')";

/// `START -> {a, b, c} -> d -> END` over a `log` reducer; `b` fails on its first call when
/// `fail` is set. With `gate`, `b` fails only once the saver received the writes of `a`
/// and `c` (the third `put_writes` of a fresh thread, after the `__start__` task's).
fn fan_out(calls: &Calls, fail: bool, gate: Option<Arc<CrashSaver>>) -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("a", logs("a", calls));
    let c = calls.clone();
    g.add_node("b", move |_s: DynState| {
        let c = c.clone();
        let gate = gate.clone();
        async move {
            if c.hit("b") == 1 && fail {
                if let Some(gate) = gate {
                    tokio::time::timeout(Duration::from_secs(30), gate.wait_for_put_writes(3))
                        .await
                        .map_err(|_| NodeError::msg("the writes of a and c never arrived"))?;
                }
                return Err(NodeError::named("ValueError", "first call fails"));
            }
            Ok(stategraph::update([("log", list!["b"])]))
        }
    });
    g.add_node("c", logs("c", calls));
    g.add_node("d", logs("d", calls));
    for n in ["a", "b", "c"] {
        g.add_edge(START, n).add_edge(n, "d");
    }
    g.add_edge("d", END);
    g
}

/// The final `log` of a run of [`fan_out`] that never fails.
async fn uninterrupted() -> Vec<String> {
    let out = fan_out(&Calls::new(), false, None)
        .compile()
        .unwrap()
        .invoke(log_input(&["in"]), &RunConfig::default())
        .await
        .unwrap();
    log_of(&out)
}

// As in Python (max_concurrency=1), `c` still runs after `b` failed: the finished tasks
// `a` and `c` keep their writes and are not run again; only `b` reruns.
for_each_saver! {
    async fn a_rerun_after_a_failure_runs_only_the_tasks_that_did_not_finish(saver) {
        let expected = uninterrupted().await;
        assert_eq!(expected, log(&["in", "a", "b", "c", "d"]));
        for mode in MODES {
            let thread = format!("seq-{mode:?}");
            let calls = Calls::new();
            let graph = with_saver(&fan_out(&calls, true, None), &saver);
            let cfg = RunConfig::thread(&thread)
                .durability(mode)
                .max_concurrency(1);
            let err = graph.invoke(log_input(&["in"]), &cfg).await.unwrap_err();
            assert_eq!(
                node_error(err),
                ("b".to_owned(), FAILURE.to_owned()),
                "{mode:?}"
            );
            assert_eq!(
                calls.counts(["a", "b", "c"]),
                expect([("a", 1), ("b", 1), ("c", 1)])
            );

            let stored = history(&saver, &thread).await;
            let expected_steps: &[i64] = if mode == Durability::Exit {
                &[0]
            } else {
                &[-1, 0]
            };
            assert_eq!(steps(&stored), expected_steps, "{mode:?}");
            let step0 = stored.last().unwrap();
            assert_eq!(
                writes(step0),
                pairs([
                    ("log", list!["a"]),
                    ("branch:to:d", Value::Nil),
                    ("__error__", Value::from(FAILURE)),
                    ("log", list!["c"]),
                    ("branch:to:d", Value::Nil),
                ]),
                "{mode:?}: the finished tasks' writes and the error, on the step's checkpoint"
            );
            let state = graph.get_state(&RunConfig::thread(&thread)).await.unwrap();
            assert_eq!(state.next, ["b"], "{mode:?}");
            let b = state.tasks.iter().find(|t| t.name == "b").unwrap();
            assert_eq!(b.error, Some(Value::from(FAILURE)));

            let out = graph.invoke(NoInput, &cfg).await.unwrap();
            assert_eq!(log_of(&out), expected, "{mode:?}");
            assert_eq!(
                calls.counts(["a", "b", "c", "d"]),
                expect([("a", 1), ("b", 2), ("c", 1), ("d", 1)]),
                "{mode:?}"
            );
            let expected_steps: &[i64] = if mode == Durability::Exit {
                &[0, 2]
            } else {
                &[-1, 0, 1, 2]
            };
            assert_eq!(
                steps(&history(&saver, &thread).await),
                expected_steps,
                "{mode:?}"
            );
        }
    }
}

// Python: `a` and `c` finished before `b` failed; both keep their writes on the step-0
// checkpoint, next to the error, and the rerun runs `b` alone.
for_each_saver! {
    async fn parallel_tasks_that_finished_before_a_failure_are_not_run_again(saver) {
        let expected = uninterrupted().await;
        for mode in [Durability::Sync, Durability::Async] {
            let thread = format!("par-{mode:?}");
            let gate = Arc::new(CrashSaver::new(saver.clone()));
            let calls = Calls::new();
            let g = fan_out(&calls, true, Some(gate.clone()));
            let dyn_gate: Arc<dyn CheckpointSaver> = gate.clone();
            let graph = with_saver(&g, &dyn_gate);
            let cfg = RunConfig::thread(&thread).durability(mode);
            let err = graph.invoke(log_input(&["in"]), &cfg).await.unwrap_err();
            assert_eq!(
                node_error(err),
                ("b".to_owned(), FAILURE.to_owned()),
                "{mode:?}"
            );

            let stored = history(&saver, &thread).await;
            assert_eq!(steps(&stored), [-1, 0], "{mode:?}");
            assert_eq!(
                writes(&stored[1]),
                pairs([
                    ("log", list!["a"]),
                    ("branch:to:d", Value::Nil),
                    ("__error__", Value::from(FAILURE)),
                    ("log", list!["c"]),
                    ("branch:to:d", Value::Nil),
                ]),
                "{mode:?}"
            );
            let state = graph.get_state(&RunConfig::thread(&thread)).await.unwrap();
            assert_eq!(state.next, ["b"], "{mode:?}");
            assert_eq!(
                strings(state.values.get("log")),
                log(&["in", "a", "c"]),
                "{mode:?}"
            );

            let out = graph.invoke(NoInput, &cfg).await.unwrap();
            assert_eq!(log_of(&out), expected, "{mode:?}");
            assert_eq!(
                calls.counts(["a", "b", "c", "d"]),
                expect([("a", 1), ("b", 2), ("c", 1), ("d", 1)]),
                "{mode:?}"
            );
        }
    }
}

// On a current-thread runtime the three tasks of step 1 all finish (`b` by failing)
// before the loop looks at any result; `a` and `c` finished, so Python keeps both writes
// (its runner commits each task as it completes) and the rerun runs `b` alone.
#[tokio::test(flavor = "current_thread")]
// Cause: runner.rs:257 aborts the JoinSet at the first failure, dropping the results of
// tasks that already completed but were not joined yet.

async fn a_task_that_completed_before_a_sibling_failure_was_noticed_keeps_its_writes() {
    let saver = crate::support::savers::memory();
    let calls = Calls::new();
    let graph = with_saver(&fan_out(&calls, true, None), &saver);
    let cfg = RunConfig::thread("t").durability(Durability::Sync);
    let err = graph.invoke(log_input(&["in"]), &cfg).await.unwrap_err();
    assert_eq!(node_error(err).0, "b");
    assert_eq!(
        calls.counts(["a", "b", "c"]),
        expect([("a", 1), ("b", 1), ("c", 1)])
    );
    let stored = history(&saver, "t").await;
    let logged: Vec<Value> = writes_to(&stored[1], "log");
    assert_eq!(
        logged,
        [list!["a"], list!["c"]],
        "c finished: Python keeps its write"
    );
    let _ = graph.invoke(NoInput, &cfg).await.unwrap();
    assert_eq!(
        calls.of("c"),
        1,
        "c finished before the failure: it must not run again"
    );
}

// The saver fails the third `put`: the checkpoint of step 1, after the writes of `a`, `b`
// and `c` were stored against step 0. Nothing stored is lost, and the rerun finds all
// three tasks finished: none of them runs again.
for_each_saver! {
    async fn a_crash_saving_a_checkpoint_loses_no_stored_write(saver) {
        let expected = uninterrupted().await;
        for mode in [Durability::Sync, Durability::Async] {
            let thread = format!("put-{mode:?}");
            let calls = Calls::new();
            let crash: Arc<dyn CheckpointSaver> =
                Arc::new(CrashSaver::new(saver.clone()).fail_put(3));
            let graph = with_saver(&fan_out(&calls, false, None), &crash);
            let cfg = RunConfig::thread(&thread)
                .durability(mode)
                .max_concurrency(1);
            let err = graph.invoke(log_input(&["in"]), &cfg).await.unwrap_err();
            assert!(is_crash(&err), "{mode:?}: {err:?}");

            let stored = history(&saver, &thread).await;
            assert_eq!(steps(&stored), [-1, 0], "{mode:?}");
            let logged = writes_to(&stored[1], "log");
            assert_eq!(logged, [list!["a"], list!["b"], list!["c"]], "{mode:?}");

            let out = graph.invoke(NoInput, &cfg).await.unwrap();
            assert_eq!(log_of(&out), expected, "{mode:?}");
            assert_eq!(
                calls.counts(["a", "b", "c"]),
                expect([("a", 1), ("b", 1), ("c", 1)]),
                "{mode:?}: their writes were stored"
            );
            if mode == Durability::Sync {
                assert_eq!(calls.of("d"), 1, "the crashed sync run stopped before d");
            }
            assert_eq!(
                steps(&history(&saver, &thread).await),
                [-1, 0, 1, 2],
                "{mode:?}"
            );
        }
    }
}

// The saver fails the third `put_writes`: the writes of `b` (after the `__start__` task's
// and `a`'s). `a` keeps its writes; `b` runs again.
for_each_saver! {
    async fn a_crash_saving_a_task_s_writes_reruns_that_task_only(saver) {
        let expected = uninterrupted().await;
        for mode in [Durability::Sync, Durability::Async] {
            let thread = format!("writes-{mode:?}");
            let calls = Calls::new();
            let crash: Arc<dyn CheckpointSaver> =
                Arc::new(CrashSaver::new(saver.clone()).fail_put_writes(3));
            let graph = with_saver(&fan_out(&calls, false, None), &crash);
            let cfg = RunConfig::thread(&thread)
                .durability(mode)
                .max_concurrency(1);
            let err = graph.invoke(log_input(&["in"]), &cfg).await.unwrap_err();
            assert!(is_crash(&err), "{mode:?}: {err:?}");

            let stored = history(&saver, &thread).await;
            assert_eq!(steps(&stored), [-1, 0], "{mode:?}");
            assert_eq!(
                writes(&stored[1]),
                pairs([("log", list!["a"]), ("branch:to:d", Value::Nil)]),
                "{mode:?}: a's writes are stored, b's failed, nothing after them reached the saver"
            );

            let out = graph.invoke(NoInput, &cfg).await.unwrap();
            assert_eq!(log_of(&out), expected, "{mode:?}");
            assert_eq!(
                calls.counts(["a", "b"]),
                expect([("a", 1), ("b", 2)]),
                "{mode:?}"
            );
            if mode == Durability::Sync {
                assert_eq!(
                    calls.counts(["c", "d"]),
                    expect([("c", 1), ("d", 1)]),
                    "the crashed sync run stopped at b"
                );
            }
        }
    }
}

// A crash on the rerun itself is no worse: the thread still completes on the next try.
for_each_saver! {
    async fn a_thread_survives_crashes_on_consecutive_runs(saver) {
        let expected = uninterrupted().await;
        let calls = Calls::new();
        // Each run gets a fresh wrapper that fails its second put.
        let cfg = RunConfig::thread("again")
            .durability(Durability::Sync)
            .max_concurrency(1);
        let mut outcome = None;
        for attempt in 0..10 {
            let crash: Arc<dyn CheckpointSaver> =
                Arc::new(CrashSaver::new(saver.clone()).fail_put(2));
            let graph = with_saver(&fan_out(&calls, false, None), &crash);
            let result = if attempt == 0 {
                graph.invoke(log_input(&["in"]), &cfg).await
            } else {
                graph.invoke(NoInput, &cfg).await
            };
            match result {
                Ok(out) => {
                    outcome = Some(out);
                    break;
                }
                Err(e) => assert!(is_crash(&e), "{e:?}"),
            }
        }
        let out = outcome.expect("the thread completes despite the crashes");
        assert_eq!(log_of(&out), expected);
        assert_eq!(
            calls.counts(["a", "b", "c", "d"]),
            expect([("a", 1), ("b", 1), ("c", 1), ("d", 1)]),
            "every task's writes were stored before the checkpoint that failed"
        );
    }
}

/// `START -> pre -> sub -> post -> END`, the subgraph `sub` running `i1 -> flaky`, where
/// `flaky` fails on its first call.
fn failing_inside(calls: &Calls) -> StateGraph<DynState> {
    let mut sb = log_graph();
    sb.add_node("i1", logs("i1", calls));
    let c = calls.clone();
    sb.add_node("flaky", move |_s: DynState| {
        let first = c.hit("flaky") == 1;
        async move {
            if first {
                return Err(NodeError::named("ValueError", "once"));
            }
            Ok(stategraph::update([("log", list!["flaky"])]))
        }
    });
    sb.add_edge(START, "i1")
        .add_edge("i1", "flaky")
        .add_edge("flaky", END);
    let sub = sb.compile().unwrap();
    let mut g = log_graph();
    g.add_node("pre", logs("pre", calls));
    g.add_subgraph("sub", &sub);
    g.add_node("post", logs("post", calls));
    g.add_edge(START, "pre")
        .add_edge("pre", "sub")
        .add_edge("sub", "post")
        .add_edge("post", END);
    g
}

// Python: the error is stored in both namespaces (on the root's step-1 checkpoint and the
// subgraph's); the rerun resumes the subgraph from its own checkpoint: `i1` does not run
// again, `flaky` does.
for_each_saver! {
    async fn a_failure_inside_a_subgraph_resumes_the_subgraph_where_it_failed(saver) {
        for mode in MODES {
            let thread = format!("sub-{mode:?}");
            let calls = Calls::new();
            let graph = with_saver(&failing_inside(&calls), &saver);
            let cfg = RunConfig::thread(&thread).durability(mode);
            let err = graph.invoke(log_input(&[]), &cfg).await.unwrap_err();
            let failure = ("sub".to_owned(), "ValueError('once')".to_owned());
            assert_eq!(node_error(err), failure, "{mode:?}");
            let errors: Vec<(String, Vec<Value>)> = all_namespaces(&saver, &thread)
                .await
                .iter()
                .filter(|t| !writes_to(t, "__error__").is_empty())
                .map(|t| {
                    let ns = t.config.ns().split(':').next().unwrap().to_owned();
                    (ns, writes_to(t, "__error__"))
                })
                .collect();
            let mut namespaces: Vec<&str> = errors.iter().map(|e| e.0.as_str()).collect();
            namespaces.sort();
            assert_eq!(namespaces, ["", "sub"], "{mode:?}: {errors:?}");
            for (_, e) in &errors {
                assert_eq!(e, &[Value::from("ValueError('once')")], "{mode:?}");
            }

            let out = graph.invoke(NoInput, &cfg).await.unwrap();
            assert_eq!(
                log_of(&out),
                log(&["pre", "pre", "i1", "flaky", "post"]),
                "{mode:?}"
            );
            assert_eq!(
                calls.counts(["pre", "i1", "flaky", "post"]),
                expect([("pre", 1), ("i1", 1), ("flaky", 2), ("post", 1)]),
                "{mode:?}"
            );
        }
    }
}

/// `START` sends `worker` three items; the worker for `"two"` fails on its first call.
fn send_fan_out(calls: &Calls) -> StateGraph<DynState> {
    let mut g = log_graph();
    let c = calls.clone();
    g.add_node("worker", move |s: DynState| {
        let item = s.get("item").and_then(Value::as_str).unwrap().to_owned();
        let n = c.hit(&item);
        async move {
            if item == "two" && n == 1 {
                return Err(NodeError::named("ValueError", "two failed"));
            }
            Ok(stategraph::update([("log", list![item])]))
        }
    });
    g.add_conditional_edges(START, |_s: &DynState| {
        ["one", "two", "three"]
            .map(|i| stategraph::Send::new("worker", stategraph::map! { "item" => i }))
            .to_vec()
    });
    g.add_edge("worker", END);
    g
}

// Push tasks keep their ids across runs (they hash the checkpoint and the Send's index):
// the rerun runs only the failed worker, not the finished ones.
for_each_saver! {
    async fn a_failed_send_task_reruns_alone(saver) {
        for mode in MODES {
            let thread = format!("send-{mode:?}");
            let calls = Calls::new();
            let graph = with_saver(&send_fan_out(&calls), &saver);
            let cfg = RunConfig::thread(&thread)
                .durability(mode)
                .max_concurrency(1);
            let err = graph.invoke(log_input(&[]), &cfg).await.unwrap_err();
            assert_eq!(node_error(err).1, "ValueError('two failed')", "{mode:?}");
            assert_eq!(
                calls.counts(["one", "two", "three"]),
                expect([("one", 1), ("two", 1), ("three", 1)])
            );
            let out = graph.invoke(NoInput, &cfg).await.unwrap();
            assert_eq!(log_of(&out), log(&["one", "two", "three"]), "{mode:?}");
            assert_eq!(
                calls.counts(["one", "two", "three"]),
                expect([("one", 1), ("two", 2), ("three", 1)]),
                "{mode:?}"
            );
        }
    }
}
