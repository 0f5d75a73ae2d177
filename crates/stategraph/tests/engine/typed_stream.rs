//! `stream_typed`: one typed event per mode (the state, the state's update per node, the
//! pause, custom values, task and checkpoint events), several modes at once, subgraphs.

use futures::StreamExt;
use stategraph::graph::typed_stream::{DebugPayload, TaskEvent};
use stategraph::{
    list, map, CompiledGraph, DynState, NodeContext, NodeError, RunConfig, State, StateGraph,
    StreamMode, StreamOptions, StreamPart, Value, END, START,
};

use crate::util::{log_graph, log_input, logs, saver, with_saver};

#[derive(State, Debug, Clone, PartialEq, Default)]
struct Person {
    name: String,
    age: i64,
    #[state(reducer = add)]
    log: Vec<String>,
}

/// `START -> greet -> birthday -> END` over a typed state; `greet` writes a custom event.
fn people() -> CompiledGraph<Person> {
    let mut g = StateGraph::<Person>::new();
    g.add_node("greet", |s: Person, ctx: NodeContext| async move {
        ctx.write_custom(map! {"hello" => s.name.as_str()});
        PersonUpdate::default()
            .name(format!("Dr. {}", s.name))
            .log(vec!["greet".to_owned()])
    });
    g.add_node("birthday", |s: Person| async move {
        PersonUpdate::default().age(s.age + 1)
    });
    g.add_edge(START, "greet")
        .add_edge("greet", "birthday")
        .add_edge("birthday", END);
    g.compile().unwrap()
}

fn ada() -> PersonUpdate {
    PersonUpdate::default().name("Ada").age(36)
}

async fn parts<S: State>(
    app: &CompiledGraph<S>,
    input: impl stategraph::graph::IntoInput,
    config: &RunConfig,
    options: impl Into<StreamOptions>,
) -> Vec<StreamPart<S>>
where
    S::Update: stategraph::FromWrites,
{
    app.stream_typed(input, config, options)
        .map(|p| p.unwrap())
        .collect()
        .await
}

#[tokio::test]
async fn updates_decode_with_one_match_as_the_states_update_type() {
    let app = people();
    let mut stream = app.stream_typed(ada(), &RunConfig::default(), StreamMode::Updates);
    let mut seen = Vec::new();
    while let Some(part) = stream.next().await {
        match part.unwrap() {
            StreamPart::Updates { node, update, .. } => seen.push((node, update.name, update.age)),
            other => panic!("only updates were asked for: {other:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            ("greet".to_owned(), Some("Dr. Ada".to_owned()), None),
            ("birthday".to_owned(), None, Some(37)),
        ]
    );
}

#[tokio::test]
async fn values_are_the_state_after_the_input_and_each_step() {
    let got: Vec<Person> = parts(&people(), ada(), &RunConfig::default(), StreamMode::Values)
        .await
        .into_iter()
        .map(|p| match p {
            StreamPart::Values {
                state, interrupts, ..
            } => {
                assert!(interrupts.is_empty());
                state
            }
            other => panic!("{other:?}"),
        })
        .collect();
    let names: Vec<(&str, i64, usize)> = got
        .iter()
        .map(|p| (p.name.as_str(), p.age, p.log.len()))
        .collect();
    assert_eq!(
        names,
        [("Ada", 36, 0), ("Dr. Ada", 36, 1), ("Dr. Ada", 37, 1)]
    );
}

#[tokio::test]
async fn several_modes_arrive_interleaved_each_typed() {
    let got = parts(
        &people(),
        ada(),
        &RunConfig::default(),
        [StreamMode::Values, StreamMode::Updates, StreamMode::Custom],
    )
    .await;
    let kinds: Vec<String> = got
        .iter()
        .map(|p| match p {
            StreamPart::Values { state, .. } => format!("values {}", state.name),
            StreamPart::Updates { node, .. } => format!("updates {node}"),
            StreamPart::Custom { data, .. } => format!("custom {}", data.repr()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "values Ada",
            "custom {'hello': 'Ada'}",
            "updates greet",
            "values Dr. Ada",
            "updates birthday",
            "values Dr. Ada",
        ]
    );
    assert!(got.iter().all(|p| p.ns().is_empty()));
    assert_eq!(got[1].mode(), StreamMode::Custom);
}

#[tokio::test]
async fn a_dyn_state_graph_gets_its_writes_as_the_update() {
    let mut g = log_graph();
    g.add_node("a", logs("a"));
    g.add_edge(START, "a").add_edge("a", END);
    let app = g.compile().unwrap();
    let got = parts(
        &app,
        log_input(&["in"]),
        &RunConfig::default(),
        StreamMode::Updates,
    )
    .await;
    match &got[..] {
        [StreamPart::Updates { node, update, .. }] => {
            assert_eq!(node, "a");
            assert_eq!(update, &[("log".to_owned(), list!["a"])]);
        }
        other => panic!("{other:?}"),
    }
}

/// `START -> ask -> END` where `ask` interrupts, on a saver.
fn asking() -> CompiledGraph<DynState> {
    let mut g = log_graph();
    g.add_node("ask", |_s: DynState, ctx: NodeContext| async move {
        let answer = ctx.interrupt("name?")?;
        Ok::<_, NodeError>(stategraph::update([("log", list![answer])]))
    });
    g.add_edge(START, "ask").add_edge("ask", END);
    with_saver(&g, &saver())
}

#[tokio::test]
async fn a_pause_is_a_typed_interrupt_in_updates_and_values() {
    let app = asking();
    let got = parts(
        &app,
        log_input(&["in"]),
        &RunConfig::thread("t"),
        [StreamMode::Updates, StreamMode::Values],
    )
    .await;
    let paused: Vec<(&str, Value)> = got
        .iter()
        .filter_map(|p| match p {
            StreamPart::Interrupt { interrupts, .. } => {
                Some(("updates", interrupts[0].value.clone()))
            }
            StreamPart::Values { interrupts, .. } if !interrupts.is_empty() => {
                Some(("values", interrupts[0].value.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        paused,
        [
            ("updates", Value::from("name?")),
            ("values", Value::from("name?"))
        ]
    );
    // The values event of the pause carries the state without `__interrupt__`.
    match got.last() {
        Some(StreamPart::Values { state, .. }) => {
            assert_eq!(state.0.keys().collect::<Vec<_>>(), ["log"]);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn tasks_checkpoints_and_debug_are_typed_structs() {
    let mut g = log_graph();
    g.add_node("a", logs("a"));
    g.add_edge(START, "a").add_edge("a", END);
    let app = with_saver(&g, &saver());
    let got = parts(
        &app,
        log_input(&["in"]),
        &RunConfig::thread("t"),
        [
            StreamMode::Tasks,
            StreamMode::Checkpoints,
            StreamMode::Debug,
        ],
    )
    .await;
    let mut starts = 0;
    let mut results = Vec::new();
    let mut checkpoints = Vec::new();
    let mut debug = Vec::new();
    for p in &got {
        match p {
            StreamPart::Tasks {
                event: TaskEvent::Start(t),
                ..
            } => {
                assert_eq!(t.triggers, ["branch:to:a"]);
                starts += 1;
            }
            StreamPart::Tasks {
                event: TaskEvent::Result(r),
                ..
            } => results.push((
                r.name.clone(),
                r.result.get("log").cloned(),
                r.error.clone(),
            )),
            StreamPart::Checkpoints { checkpoint, .. } => {
                assert_eq!(checkpoint.config.thread_id, "t");
                assert!(checkpoint.config.checkpoint_id.is_some());
                checkpoints.push((checkpoint.metadata.step, checkpoint.next.clone()));
            }
            StreamPart::Debug { event, .. } => debug.push(match &event.payload {
                DebugPayload::Checkpoint(_) => "checkpoint",
                DebugPayload::Task(_) => "task",
                DebugPayload::TaskResult(_) => "task_result",
            }),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(starts, 1);
    assert_eq!(results, [("a".to_owned(), Some(list!["a"]), None)]);
    assert_eq!(
        checkpoints,
        [
            (Some(-1), vec!["__start__".to_owned()]),
            (Some(0), vec!["a".to_owned()]),
            (Some(1), vec![]),
        ]
    );
    assert_eq!(
        debug,
        [
            "checkpoint",
            "checkpoint",
            "task",
            "task_result",
            "checkpoint"
        ]
    );
}

/// A parent `START -> sub -> END` whose subgraph `START -> inner -> END` writes `log`
/// and a custom event.
fn nested() -> CompiledGraph<DynState> {
    let mut sub = log_graph();
    sub.add_node("inner", |_s: DynState, ctx: NodeContext| async move {
        ctx.write_custom("from inner");
        stategraph::update([("log", list!["inner"])])
    });
    sub.add_edge(START, "inner").add_edge("inner", END);
    let sub = sub.compile().unwrap();
    let mut g = log_graph();
    g.add_subgraph("sub", &sub);
    g.add_edge(START, "sub").add_edge("sub", END);
    g.compile().unwrap()
}

#[tokio::test]
async fn subgraph_events_stream_under_their_namespace_only_when_asked() {
    let app = nested();
    let modes = [StreamMode::Updates, StreamMode::Custom];
    let without = parts(&app, log_input(&["in"]), &RunConfig::default(), modes).await;
    assert_eq!(without.len(), 1, "{without:?}");
    assert!(matches!(&without[0], StreamPart::Updates { node, .. } if node == "sub"));

    let with = parts(
        &app,
        log_input(&["in"]),
        &RunConfig::default(),
        StreamOptions::new(&modes).subgraphs(true),
    )
    .await;
    let described: Vec<String> = with
        .iter()
        .map(|p| {
            let ns: Vec<&str> = p
                .ns()
                .iter()
                .map(|s| s.split(':').next().unwrap())
                .collect();
            let what = match p {
                StreamPart::Custom { data, .. } => format!("custom {}", data.repr()),
                StreamPart::SubgraphUpdates { node, writes, .. } => {
                    format!("sub-updates {node} {}", writes[0].1.repr())
                }
                StreamPart::Updates { node, .. } => format!("updates {node}"),
                other => panic!("{other:?}"),
            };
            format!("{ns:?} {what}")
        })
        .collect();
    assert_eq!(
        described,
        [
            "[\"sub\"] custom 'from inner'",
            "[\"sub\"] sub-updates inner ['inner']",
            "[] updates sub",
        ]
    );
    // The namespace is the subgraph task's `node:task_id`.
    assert_eq!(with[0].ns()[0].len(), "sub:".len() + 36);
}

#[tokio::test]
async fn typed_events_print_values_readably() {
    let got = parts(
        &people(),
        ada(),
        &RunConfig::default(),
        [StreamMode::Custom, StreamMode::Updates],
    )
    .await;
    let text = format!("{:?}", got[0]);
    assert_eq!(text, "Custom { ns: [], data: {'hello': 'Ada'} }");
    let text = format!("{:?}", got[1]);
    assert!(text.contains("node: \"greet\""), "{text}");
    assert!(text.contains("Some(\"Dr. Ada\")"), "{text}");
}

#[tokio::test]
async fn subgraph_values_come_with_the_subgraphs_channels() {
    let got = parts(
        &nested(),
        log_input(&["in"]),
        &RunConfig::default(),
        StreamOptions::new(&[StreamMode::Values]).subgraphs(true),
    )
    .await;
    let described: Vec<(usize, Value)> = got
        .iter()
        .map(|p| match p {
            StreamPart::Values { state, .. } => (0, state.get("log").unwrap().clone()),
            StreamPart::SubgraphValues { ns, values, .. } => {
                (ns.len(), values.get("log").unwrap().clone())
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        described,
        [
            (0, list!["in"]),
            (1, list!["in"]),
            (1, list!["in", "inner"]),
            // The subgraph's whole `log` is the node's write, added to the parent's.
            (0, list!["in", "in", "inner"]),
        ]
    );
}

#[test]
fn a_derived_update_reads_back_the_last_write_of_each_field() {
    use stategraph::FromWrites;
    let writes = vec![
        ("name".to_owned(), Value::from("A")),
        ("not_a_field".to_owned(), Value::from(1)),
        ("name".to_owned(), Value::from("B")),
    ];
    let update = PersonUpdate::from_writes(&writes).unwrap();
    assert_eq!((update.name.as_deref(), update.age), (Some("B"), None));
    let wrong = PersonUpdate::from_writes(&[("age".to_owned(), Value::from("old"))]);
    assert!(
        matches!(wrong, Err(stategraph::Error::State(_))),
        "{wrong:?}"
    );
}
