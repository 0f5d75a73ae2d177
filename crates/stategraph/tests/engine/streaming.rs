//! `stream` with the values, updates and custom modes, alone and together
//! (docs/runtime.md#streams).

use futures::StreamExt;
use stategraph::{
    list, map, DynState, NodeContext, RunConfig, StateGraph, StreamMode, Value, END, START,
};

use crate::util::{log_graph, log_input, logs};

/// `START -> talker -> after -> END`; `talker` writes two custom events.
fn talking() -> StateGraph<DynState> {
    let mut g = log_graph();
    g.add_node("talker", |_s: DynState, ctx: NodeContext| async move {
        ctx.write_custom(map! {"progress" => 1});
        ctx.write_custom("done");
        stategraph::update([("log", list!["talker"])])
    });
    g.add_node("after", logs("after"));
    g.add_edge(START, "talker")
        .add_edge("talker", "after")
        .add_edge("after", END);
    g
}

/// The `(mode, data)` of every event of a run.
async fn events(modes: &[StreamMode]) -> Vec<(&'static str, Value)> {
    talking()
        .compile()
        .unwrap()
        .stream(log_input(&["in"]), &RunConfig::default(), modes)
        .map(|e| {
            let e = e.unwrap();
            assert!(e.ns.is_empty(), "root events have an empty namespace");
            (e.mode.as_str(), e.data)
        })
        .collect()
        .await
}

fn data(events: Vec<(&'static str, Value)>) -> Vec<Value> {
    events.into_iter().map(|(_, d)| d).collect()
}

#[tokio::test]
async fn values_streams_the_state_after_the_input_and_after_each_step() {
    assert_eq!(
        data(events(&[StreamMode::Values]).await),
        [
            map! {"log" => list!["in"]},
            map! {"log" => list!["in", "talker"]},
            map! {"log" => list!["in", "talker", "after"]},
        ]
    );
}

#[tokio::test]
async fn updates_streams_each_nodes_writes_by_node() {
    assert_eq!(
        data(events(&[StreamMode::Updates]).await),
        [
            map! {"talker" => map! {"log" => list!["talker"]}},
            map! {"after" => map! {"log" => list!["after"]}},
        ]
    );
}

#[tokio::test]
async fn custom_streams_what_nodes_write_in_order() {
    assert_eq!(
        data(events(&[StreamMode::Custom]).await),
        [map! {"progress" => 1}, Value::from("done")]
    );
}

#[tokio::test]
async fn several_modes_stream_interleaved_as_they_happen() {
    assert_eq!(
        events(&[StreamMode::Updates, StreamMode::Custom, StreamMode::Values]).await,
        [
            ("values", map! {"log" => list!["in"]}),
            ("custom", map! {"progress" => 1}),
            ("custom", Value::from("done")),
            (
                "updates",
                map! {"talker" => map! {"log" => list!["talker"]}}
            ),
            ("values", map! {"log" => list!["in", "talker"]}),
            ("updates", map! {"after" => map! {"log" => list!["after"]}}),
            ("values", map! {"log" => list!["in", "talker", "after"]}),
        ]
    );
}

#[tokio::test]
async fn custom_writes_are_dropped_when_nobody_streams_them() {
    let out = talking()
        .compile()
        .unwrap()
        .invoke(log_input(&["in"]), &RunConfig::default())
        .await
        .unwrap();
    assert_eq!(out.get("log"), Some(&list!["in", "talker", "after"]));
}

#[tokio::test]
async fn a_failed_run_ends_its_stream_with_the_error() {
    let mut g = log_graph();
    g.add_node("boom", |_s: DynState| async move {
        Err::<(), _>(stategraph::NodeError::msg("no"))
    });
    g.add_edge(START, "boom");
    let items: Vec<_> = g
        .compile()
        .unwrap()
        .stream(
            log_input(&["in"]),
            &RunConfig::default(),
            &[StreamMode::Values],
        )
        .collect()
        .await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0].as_ref().unwrap().data, map! {"log" => list!["in"]});
    assert!(
        matches!(items[1], Err(stategraph::Error::Node { .. })),
        "{items:?}"
    );
}
