//! `Command` from a node and as input, runs without a saver, and `add_sequence`.

use stategraph::{list, Command, DynState, NoInput, RunConfig, StateGraph, Value, END, START};

use crate::util::{
    history, log_graph, log_input, logs, saver, steps, stored_writes, strings, with_saver,
};

/// `START -> router`; `router` returns `Command(update, goto="b")`; `a` and `b` end.
fn routed() -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("router", |_s: DynState| async move {
        Command::goto("b").with_update(stategraph::update([("log", list!["router"])]))
    });
    g.add_node("a", logs("a")).add_node("b", logs("b"));
    g.add_edge(START, "router")
        .add_edge("a", END)
        .add_edge("b", END);
    g
}

#[tokio::test]
async fn a_command_from_a_node_updates_the_state_and_goes_to_its_target() {
    let out = routed()
        .compile()
        .unwrap()
        .invoke(log_input(&[]), &RunConfig::default())
        .await
        .unwrap();
    assert_eq!(strings(out.get("log")), ["router", "b"]);
}

#[tokio::test]
async fn a_command_going_to_end_stops_the_run() {
    let mut g = log_graph();
    g.add_node("stop", |_s: DynState| async move {
        Command::goto(END).with_update(stategraph::update([("log", list!["stop"])]))
    });
    g.add_node("never", logs("never"));
    g.add_edge(START, "stop").add_edge("never", END);
    let out = g
        .compile()
        .unwrap()
        .invoke(log_input(&[]), &RunConfig::default())
        .await
        .unwrap();
    assert_eq!(strings(out.get("log")), ["stop"]);
}

// Python: on an existing thread the Command is a resume: no input checkpoint; its writes
// are stored on the head checkpoint under the null task id with an empty task path
// (`branch:to:a` = "__start__" at idx 0, then the update), then `a` runs in step 3.
#[tokio::test]
async fn a_command_as_input_updates_the_state_and_goes_to_its_target() {
    let saver = saver();
    let graph = with_saver(&routed(), &saver);
    let config = RunConfig::thread("c");
    let _ = graph.invoke(log_input(&["in"]), &config).await.unwrap();
    let head = history(&saver, "c")
        .await
        .last()
        .unwrap()
        .checkpoint
        .id
        .clone();

    let out = graph
        .invoke(
            Command::goto("a").with_update(stategraph::update([("log", list!["cmd"])])),
            &config,
        )
        .await
        .unwrap();
    assert_eq!(strings(out.get("log")), ["in", "router", "b", "cmd", "a"]);
    assert_eq!(steps(&history(&saver, "c").await), [-1, 0, 1, 2, 3]);
    let null_writes: Vec<(i64, String, Value, String)> = stored_writes(&saver)
        .into_iter()
        .filter(|w| w.0 == head && w.1 == stategraph::checkpoint::NULL_TASK_ID)
        .map(|(_, _, idx, channel, value, path)| (idx, channel, value, path))
        .collect();
    assert_eq!(
        null_writes,
        [
            (
                0,
                "branch:to:a".to_owned(),
                Value::from("__start__"),
                String::new()
            ),
            (1, "log".to_owned(), list!["cmd"], String::new()),
        ]
    );
}

// Python, on a thread without state (or without a saver), applies the update twice: once
// as the command's own writes and once through the START node (the Command is the
// `__start__` value), which also follows its edge to `router`: log = cmd, cmd, a, router,
// b. stategraph applies only the command's writes and never runs START.
#[tokio::test]

async fn a_command_as_input_on_a_new_thread_runs_like_python() {
    let out = routed()
        .compile()
        .unwrap()
        .invoke(
            Command::goto("a").with_update(stategraph::update([("log", list!["cmd"])])),
            &RunConfig::default(),
        )
        .await
        .unwrap();
    assert_eq!(strings(out.get("log")), ["cmd", "cmd", "a", "router", "b"]);
}

#[tokio::test]
async fn a_graph_without_a_saver_runs_and_keeps_nothing() {
    let graph = routed().compile().unwrap();
    assert!(graph.checkpointer().is_none());
    let config = RunConfig::thread("ignored");
    let first = graph.invoke(log_input(&["one"]), &config).await.unwrap();
    let second = graph.invoke(log_input(&["two"]), &config).await.unwrap();
    assert_eq!(strings(first.get("log")), ["one", "router", "b"]);
    assert_eq!(
        strings(second.get("log")),
        ["two", "router", "b"],
        "no state carried over"
    );
}

#[tokio::test]
async fn continuing_without_a_saver_has_no_input() {
    let err = routed()
        .compile()
        .unwrap()
        .invoke(NoInput, &RunConfig::default())
        .await
        .unwrap_err();
    assert!(matches!(err, stategraph::Error::EmptyInput(_)), "{err:?}");
}

#[tokio::test]
async fn a_sequence_runs_its_nodes_in_order() {
    let mut g = log_graph();
    g.add_sequence(vec![
        ("one", logs("one")),
        ("two", logs("two")),
        ("three", logs("three")),
    ]);
    g.add_edge(START, "one").add_edge("three", END);
    let saver = saver();
    let out = with_saver(&g, &saver)
        .invoke(log_input(&[]), &RunConfig::thread("seq"))
        .await
        .unwrap();
    assert_eq!(strings(out.get("log")), ["one", "two", "three"]);
    assert_eq!(steps(&history(&saver, "seq").await), [-1, 0, 1, 2, 3]);
}
