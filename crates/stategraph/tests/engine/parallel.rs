//! Several tasks in one super-step: reducer order, conflicting writes, `Send` fan-out.

use stategraph::{list, map, DynState, Error, RunConfig, Send, StateGraph, Value, END, START};

use crate::util::{
    add_list, history, last_value, log_graph, logs, saver, stored_writes, strings, with_saver,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_writes_reach_a_reducer_in_node_name_order() {
    let mut g = log_graph();
    // Added in an order that is neither alphabetical nor its reverse.
    for n in ["zeta", "alpha", "mid"] {
        g.add_node(n, logs(n)).add_edge(START, n).add_edge(n, END);
    }
    let graph = g.compile().unwrap();
    for _ in 0..5 {
        let out = graph
            .invoke(
                stategraph::update([("log", list![])]),
                &RunConfig::default(),
            )
            .await
            .unwrap();
        assert_eq!(strings(out.get("log")), ["alpha", "mid", "zeta"]);
    }
}

fn conflicting() -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("log".into(), add_list()),
        ("x".into(), last_value()),
    ]);
    g.add_node(
        "a",
        |_s: DynState| async move { stategraph::update([("x", 1)]) },
    );
    g.add_node(
        "b",
        |_s: DynState| async move { stategraph::update([("x", 2)]) },
    );
    g.add_edge(START, "a").add_edge(START, "b");
    g
}

const CONFLICT: &str = "At key 'x': Can receive only one value per step. Use an Annotated key to handle multiple values.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_parallel_writes_to_a_last_value_are_an_invalid_update() {
    let err = conflicting()
        .compile()
        .unwrap()
        .invoke(
            stategraph::update([("log", list![])]),
            &RunConfig::default(),
        )
        .await
        .unwrap_err();
    match err {
        Error::InvalidUpdate(msg) => assert!(msg.starts_with(CONFLICT), "{msg}"),
        other => panic!("expected InvalidUpdate, got {other:?}"),
    }
}

// Python: the tasks' writes are stored, but no checkpoint for the failed step (2
// checkpoints, 5 writes: START's two, `a`'s and `b`'s).
#[tokio::test]
async fn a_conflicting_step_stores_its_writes_but_no_checkpoint() {
    let saver = saver();
    let err = with_saver(&conflicting(), &saver)
        .invoke(
            stategraph::update([("log", list![])]),
            &RunConfig::thread("t"),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidUpdate(_)), "{err:?}");
    assert_eq!(crate::util::steps(&history(&saver, "t").await), [-1, 0]);
    let writes: Vec<(String, Value)> = stored_writes(&saver)
        .into_iter()
        .map(|(_, _, _, channel, value, _)| (channel, value))
        .collect();
    assert_eq!(writes.len(), 5, "{writes:?}");
    assert!(writes.contains(&("x".to_owned(), Value::Int(1))));
    assert!(writes.contains(&("x".to_owned(), Value::Int(2))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_sends_all_run_and_reduce_in_send_order() {
    let mut g = StateGraph::<DynState>::with_channels(vec![("results".into(), add_list())]);
    g.add_node("worker", |arg: DynState| async move {
        let i = arg.get("i").and_then(Value::as_i64).unwrap();
        stategraph::update([("results", list![i])])
    });
    g.add_conditional_edges(START, |_s: &DynState| {
        (0..100)
            .map(|i| Send::new("worker", map! {"i" => i}))
            .collect::<Vec<_>>()
    });
    g.add_edge("worker", END);
    let out = g
        .compile()
        .unwrap()
        .invoke(
            stategraph::update([("results", list![])]),
            &RunConfig::default(),
        )
        .await
        .unwrap();
    let got: Vec<i64> = out
        .get("results")
        .and_then(Value::as_list)
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(got, (0..100).collect::<Vec<i64>>());
}
