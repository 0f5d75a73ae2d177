//! A graph rebuilt from its description (`CompiledGraph::spec`, `from_spec`) reads a
//! thread as the graph with the code does: the same snapshots, at the head and along the
//! history, for a thread interrupted with a finished task's writes pending, on a
//! DeltaChannel merged with `add_messages`.

use std::sync::Arc;

use stategraph::channels::{BinaryOperatorAggregate, Channel, DeltaChannel};
use stategraph::checkpoint::{CheckpointSaver, MemorySaver, Value};
use stategraph::pregel::spec::GraphSpec;
use stategraph::{
    list, reducers, CompileOptions, CompiledGraph, DynState, Message, NodeContext, NodeError,
    RunConfig, StateGraph, END, START,
};

fn graph(saver: Arc<dyn CheckpointSaver>) -> CompiledGraph<DynState> {
    let messages: Box<dyn Channel> =
        Box::new(DeltaChannel::from_pairwise(reducers::add_messages(), 2));
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("messages".into(), messages),
        (
            "log".into(),
            Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![]))) as _,
        ),
    ]);
    g.add_node("fast", |_s: DynState| async move {
        let said = Message::ai("fast").with_id("f-1").to_value();
        stategraph::update([
            ("messages", Value::list(vec![said])),
            ("log", list!["fast"]),
        ])
    });
    g.add_node("ask", |_s: DynState, ctx: NodeContext| async move {
        let name = ctx.interrupt("name?")?;
        Ok::<_, NodeError>(stategraph::update([("log", Value::list(vec![name]))]))
    });
    g.add_edge(START, "fast")
        .add_edge(START, "ask")
        .add_edge("fast", END)
        .add_edge("ask", END);
    g.compile_with(CompileOptions::new().checkpointer(saver))
        .expect("the graph compiles")
}

#[tokio::test]
async fn a_graph_rebuilt_from_its_description_reads_threads_as_the_graph_does() {
    let saver: Arc<dyn CheckpointSaver> = Arc::new(MemorySaver::new());
    let app = graph(saver.clone());
    let config = RunConfig::thread("t");
    let hi = Message::human("hi").with_id("h-1").to_value();
    let input = vec![("messages".to_owned(), Value::list(vec![hi]))];
    let out = app.invoke(input, &config).await.expect("the run");
    assert!(out.is_interrupted());

    // Through JSON, as the Agent Server stores it.
    let spec = app
        .spec()
        .expect("built-in channels and reducers are described");
    let json = serde_json::to_string(&spec).expect("the spec serializes");
    let spec: GraphSpec = serde_json::from_str(&json).expect("and reads back");
    let rebuilt = CompiledGraph::<DynState>::from_spec(
        &spec,
        CompileOptions::new().checkpointer(saver.clone()),
    )
    .expect("the description rebuilds");

    let theirs = app.get_state(&config).await.expect("state");
    assert_eq!(theirs.next, ["ask"]);
    assert_eq!(rebuilt.get_state(&config).await.expect("state"), theirs);
    let history = app
        .get_state_history(&config, &Default::default())
        .await
        .expect("history");
    assert!(history.len() >= 2);
    let ours = rebuilt
        .get_state_history(&config, &Default::default())
        .await
        .expect("history");
    assert_eq!(ours, history);
    for snapshot in &history {
        let at = snapshot.config.clone().expect("a config");
        assert_eq!(
            rebuilt.get_state(&at).await.expect("state"),
            app.get_state(&at).await.expect("state")
        );
    }

    // Its nodes cannot run: a run is an error, not a silent no-op.
    let resumed = rebuilt
        .invoke(stategraph::Command::resume("Ann"), &config)
        .await;
    assert!(resumed.is_err(), "{resumed:?}");
}

#[test]
fn a_reducer_of_ones_own_leaves_a_graph_without_description() {
    fn longest(a: String, b: String) -> String {
        if b.len() > a.len() {
            b
        } else {
            a
        }
    }
    let own: Box<dyn Channel> = Box::new(BinaryOperatorAggregate::new(
        reducers::from_fn(longest),
        None,
    ));
    let mut g = StateGraph::<DynState>::with_channels(vec![("word".into(), own)]);
    g.add_node("n", |_s: DynState| async move {
        stategraph::update([("word", "x")])
    });
    g.add_edge(START, "n").add_edge("n", END);
    let app = g.compile().expect("the graph compiles");
    assert!(app.spec().is_none());
}
