//! Loops closed by a conditional edge, and the recursion limit (docs/runtime.md#termination).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use stategraph::{DynState, Error, RunConfig, StateGraph, Value, END, START};

use crate::util::{history, last_value, saver, steps, with_saver};

/// `START -> inc`, then `inc` again until `n == target` (`n` a LastValue), counting runs.
fn counter(target: i64, runs: Arc<AtomicUsize>) -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![("n".into(), last_value())]);
    g.add_node("inc", move |s: DynState| {
        runs.fetch_add(1, Ordering::SeqCst);
        let n = s.get("n").and_then(Value::as_i64).unwrap();
        async move { stategraph::update([("n", n + 1)]) }
    });
    g.add_edge(START, "inc");
    g.add_conditional_edges("inc", move |s: &DynState| {
        if s.get("n").and_then(Value::as_i64) == Some(target) {
            END
        } else {
            "inc"
        }
    });
    g
}

fn n_of(t: &stategraph::checkpoint::CheckpointTuple) -> Option<i64> {
    t.checkpoint.channel_values.get("n").and_then(Value::as_i64)
}

// Python: 1002 checkpoints, steps -1 (input), 0 (START), then 1..=1000.
#[tokio::test]
async fn a_thousand_step_loop_stores_one_checkpoint_per_step_plus_the_input() {
    let runs = Arc::new(AtomicUsize::new(0));
    let saver = saver();
    let graph = with_saver(&counter(1000, runs.clone()), &saver);
    let out = graph
        .invoke(
            stategraph::update([("n", 0)]),
            &RunConfig::thread("long").recursion_limit(1001),
        )
        .await
        .unwrap();
    assert_eq!(out.get("n"), Some(&Value::Int(1000)));
    assert_eq!(runs.load(Ordering::SeqCst), 1000);
    let history = history(&saver, "long").await;
    assert_eq!(history.len(), 1002);
    assert_eq!(steps(&history), (-1..=1000).collect::<Vec<i64>>());
    let parents_chain = history.windows(2).all(|w| {
        w[1].parent_config
            .as_ref()
            .and_then(|p| p.checkpoint_id.as_deref())
            == Some(w[0].checkpoint.id.as_str())
    });
    assert!(
        parents_chain,
        "each checkpoint's parent is the one before it"
    );
    assert_eq!(n_of(&history[1001]), Some(1000));
}

#[tokio::test]
async fn the_recursion_limit_is_a_typed_error_with_langgraphs_text() {
    let err = counter(-1, Arc::default())
        .compile()
        .unwrap()
        .invoke(
            stategraph::update([("n", 0)]),
            &RunConfig::default().recursion_limit(3),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::RecursionLimit(3)), "{err:?}");
    assert!(
        err.to_string().starts_with(
            "Recursion limit of 3 reached without hitting a stop condition. You can increase the limit by setting the `recursion_limit` config key."
        ),
        "{err}"
    );
}

// Python: limit 3 on a self-loop runs the node 3 times; checkpoints at steps -1..=3.
#[tokio::test]
async fn a_limit_of_three_runs_a_self_loop_three_times_on_new_input() {
    let runs = Arc::new(AtomicUsize::new(0));
    let saver = saver();
    let err = with_saver(&counter(-1, runs.clone()), &saver)
        .invoke(
            stategraph::update([("n", 0)]),
            &RunConfig::thread("t").recursion_limit(3),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::RecursionLimit(3)), "{err:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    let history = history(&saver, "t").await;
    assert_eq!(steps(&history), [-1, 0, 1, 2, 3]);
    assert_eq!(n_of(history.last().unwrap()), Some(3));
}

// Python: the step limit is checked before looking for tasks, so a loop that ends after
// exactly `limit` node steps still fails; it needs `limit + 1`.
#[tokio::test]
async fn a_loop_of_n_node_steps_needs_a_limit_above_n() {
    let err = counter(3, Arc::default())
        .compile()
        .unwrap()
        .invoke(
            stategraph::update([("n", 0)]),
            &RunConfig::default().recursion_limit(3),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::RecursionLimit(3)), "{err:?}");
    let out = counter(3, Arc::default())
        .compile()
        .unwrap()
        .invoke(
            stategraph::update([("n", 0)]),
            &RunConfig::default().recursion_limit(4),
        )
        .await
        .unwrap();
    assert_eq!(out.get("n"), Some(&Value::Int(3)));
}

// Python: the same thread resumed with `invoke(None)` and limit 3 runs the node 5 more
// times (no input checkpoint: limit + 2 super-steps), last checkpoint step 8.
#[tokio::test]
async fn a_resumed_run_gets_two_more_steps_than_its_limit() {
    let runs = Arc::new(AtomicUsize::new(0));
    let saver = saver();
    let graph = with_saver(&counter(-1, runs.clone()), &saver);
    let config = RunConfig::thread("t").recursion_limit(3);
    graph
        .invoke(stategraph::update([("n", 0)]), &config)
        .await
        .unwrap_err();
    runs.store(0, Ordering::SeqCst);
    let err = graph
        .invoke(stategraph::NoInput, &config)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::RecursionLimit(3)), "{err:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 5);
    let history = history(&saver, "t").await;
    assert_eq!(*steps(&history).last().unwrap(), 8);
    assert_eq!(n_of(history.last().unwrap()), Some(8));
}

#[tokio::test]
async fn a_recursion_limit_of_zero_is_refused() {
    let err = counter(1, Arc::default())
        .compile()
        .unwrap()
        .invoke(
            stategraph::update([("n", 0)]),
            &RunConfig::default().recursion_limit(0),
        )
        .await
        .unwrap_err();
    assert!(!matches!(err, Error::RecursionLimit(_)), "{err:?}");
    assert!(err.to_string().contains("recursion_limit"), "{err}");
}
