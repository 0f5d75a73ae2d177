//! Failing nodes: an `Err` or a panic is `Error::Node`, and the `__error__` write is
//! stored the way LangGraph stores `repr(exception)`.

use stategraph::{list, DynState, Error, NodeError, RunConfig, StateGraph, Value, END, START};

use crate::util::{history, log_graph, logs, saver, steps, stored_writes, with_saver};

/// `START -> boom -> END` with `boom` given.
fn failing<M>(boom: impl stategraph::graph::NodeHandler<DynState, M>) -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("boom", boom);
    g.add_edge(START, "boom").add_edge("boom", END);
    g
}

fn value_error() -> StateGraph<DynState> {
    failing(
        |_s: DynState| async move { Err::<(), _>(NodeError::named("ValueError", "it's broken")) },
    )
}

fn panicking() -> StateGraph<DynState> {
    failing(|_s: DynState| async move {
        if true {
            panic!("kaboom");
        }
    })
}

/// A panic with a formatted (`String`) payload.
fn panicking_with_args() -> StateGraph<DynState> {
    failing(|_s: DynState| async move {
        let what = "boom";
        if true {
            panic!("ka{what}");
        }
    })
}

fn node_error(err: Error) -> (String, String) {
    match err {
        Error::Node { node, message } => (node, message),
        other => panic!("expected Error::Node, got {other:?}"),
    }
}

#[tokio::test]
async fn a_node_returning_err_fails_the_run_with_a_node_error() {
    let err = value_error()
        .compile()
        .unwrap()
        .invoke(
            stategraph::update([("log", list![])]),
            &RunConfig::default(),
        )
        .await
        .unwrap_err();
    let (node, message) = node_error(err);
    assert_eq!(node, "boom");
    assert_eq!(message, "ValueError(\"it's broken\")");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_node_fails_the_run_with_a_node_error() {
    let graph = panicking().compile().unwrap();
    let err = graph
        .invoke(
            stategraph::update([("log", list![])]),
            &RunConfig::default(),
        )
        .await
        .unwrap_err();
    let (node, message) = node_error(err);
    assert_eq!(node, "boom");
    assert!(message.starts_with("Panic('"), "{message}");
    // The graph is still usable.
    let again = graph
        .invoke(
            stategraph::update([("log", list![])]),
            &RunConfig::default(),
        )
        .await;
    assert!(matches!(again, Err(Error::Node { .. })));
}

#[tokio::test]

async fn a_panicking_node_error_keeps_the_panic_message() {
    for graph in [panicking(), panicking_with_args()] {
        let saver = saver();
        let err = with_saver(&graph, &saver)
            .invoke(
                stategraph::update([("log", list![])]),
                &RunConfig::thread("t"),
            )
            .await
            .unwrap_err();
        assert_eq!(node_error(err).1, "Panic('kaboom')");
        let stored: Vec<Value> = stored_writes(&saver)
            .into_iter()
            .filter(|w| w.3 == "__error__")
            .map(|w| w.4)
            .collect();
        assert_eq!(stored, [Value::from("Panic('kaboom')")]);
    }
}

#[tokio::test]
async fn a_std_error_returned_by_a_node_is_named_after_its_type() {
    let g = failing(|_s: DynState| async move {
        let n: i64 = "seven".parse()?;
        Ok::<_, NodeError>(stategraph::update([("log", list![n])]))
    });
    let err = g
        .compile()
        .unwrap()
        .invoke(
            stategraph::update([("log", list![])]),
            &RunConfig::default(),
        )
        .await
        .unwrap_err();
    let (_, message) = node_error(err);
    assert_eq!(message, "ParseIntError('invalid digit found in string')");
}

// Python: 2 checkpoints (steps -1 and 0); on the step-0 checkpoint the failed task's one
// write `(task_id, "__error__", repr(e))` at idx -1, as a msgpack string. The stored
// text is the message of the returned error.
#[tokio::test]
async fn the_error_write_is_stored_as_langgraph_stores_it() {
    for graph in [value_error(), panicking()] {
        let saver = saver();
        let err = with_saver(&graph, &saver)
            .invoke(
                stategraph::update([("log", list![])]),
                &RunConfig::thread("t"),
            )
            .await
            .unwrap_err();
        let repr = Value::from(node_error(err).1);
        let history = history(&saver, "t").await;
        assert_eq!(steps(&history), [-1, 0]);
        let step0 = &history[1].checkpoint.id;
        let errors: Vec<_> = stored_writes(&saver)
            .into_iter()
            .filter(|w| w.0 == *step0)
            .collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        let (_, task_id, idx, channel, value, path) = &errors[0];
        assert_eq!((*idx, channel.as_str()), (-1, "__error__"));
        assert_eq!(value, &repr);
        assert_eq!(path, "~__pregel_pull, boom");
        let raw = saver.storage_snapshot().writes;
        let raw = raw.iter().find(|w| w.channel == "__error__").unwrap();
        assert_eq!(raw.value.tag, "msgpack");
        // And the saver hands it back as a pending write of that checkpoint.
        let pending = &history[1].pending_writes;
        assert_eq!(pending.len(), 1);
        assert_eq!(
            (
                &pending[0].task_id,
                pending[0].channel.as_str(),
                &pending[0].value
            ),
            (task_id, "__error__", &repr)
        );
    }
}

// Python keeps the writes of the tasks that finished before the failure, next to the
// `__error__` write. One task at a time (in task order: `alpha` then `boom`) makes the
// order certain.
#[tokio::test]
async fn a_failure_keeps_the_writes_of_tasks_that_finished_before_it() {
    let mut g = log_graph();
    g.add_node("alpha", logs("alpha"));
    g.add_node("boom", |_s: DynState| async move {
        Err::<(), _>(NodeError::msg("late"))
    });
    g.add_edge(START, "alpha").add_edge(START, "boom");
    let saver = saver();
    let err = with_saver(&g, &saver)
        .invoke(
            stategraph::update([("log", list![])]),
            &RunConfig::thread("t").max_concurrency(1),
        )
        .await
        .unwrap_err();
    assert_eq!(
        node_error(err),
        ("boom".to_owned(), "NodeError('late')".to_owned())
    );
    let history = history(&saver, "t").await;
    assert_eq!(
        steps(&history),
        [-1, 0],
        "no checkpoint for the failed step"
    );
    let writes: Vec<(String, Value)> = history[1]
        .pending_writes
        .iter()
        .map(|w| (w.channel.clone(), w.value.clone()))
        .collect();
    assert_eq!(
        writes,
        [
            ("log".to_owned(), list!["alpha"]),
            ("__error__".to_owned(), Value::from("NodeError('late')")),
        ]
    );
}
