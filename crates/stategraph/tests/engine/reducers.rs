//! Reducer channels: the typed ones of `#[derive(State)]` and the dynamic ones of `DynState`.

use std::sync::Arc;

use stategraph::channels::{BinaryOperatorAggregate, ChannelError};
use stategraph::{list, reducers, DynState, RunConfig, State, StateGraph, Value, END, START};

use crate::util::{add_list, last_value, strings};

/// A typed reducer: the larger value wins whatever the order of writes.
fn keep_max(a: i64, b: i64) -> i64 {
    a.max(b)
}

#[derive(State, Debug, Clone, PartialEq)]
struct Tally {
    #[state(reducer = add)]
    items: Vec<String>,
    #[state(reducer = add)]
    total: i64,
    #[state(reducer = keep_max)]
    best: i64,
    last: String,
}

fn step(
    name: &'static str,
    amount: i64,
) -> impl Fn(Tally) -> std::future::Ready<TallyUpdate> + Send + Sync {
    move |_s: Tally| {
        std::future::ready(
            TallyUpdate::default()
                .items(vec![name.to_owned()])
                .total(amount)
                .best(amount)
                .last(name),
        )
    }
}

#[tokio::test]
async fn typed_reducers_fold_each_write_into_the_state() {
    let mut g = StateGraph::<Tally>::new();
    g.add_node("first", step("first", 7))
        .add_node("second", step("second", 2));
    g.add_edge(START, "first")
        .add_edge("first", "second")
        .add_edge("second", END);
    let out = g
        .compile()
        .unwrap()
        .invoke(
            TallyUpdate::default()
                .items(vec!["input".to_owned()])
                .total(1),
            &RunConfig::default(),
        )
        .await
        .unwrap()
        .done()
        .unwrap();
    assert_eq!(
        out,
        Tally {
            items: vec!["input".into(), "first".into(), "second".into()],
            total: 10,
            best: 7,
            last: "second".into(),
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_typed_reducer_combines_parallel_writes() {
    let mut g = StateGraph::<Tally>::new();
    g.add_node(
        "low",
        |_s: Tally| async move { TallyUpdate::default().best(3) },
    );
    g.add_node(
        "high",
        |_s: Tally| async move { TallyUpdate::default().best(9) },
    );
    g.add_node(
        "mid",
        |_s: Tally| async move { TallyUpdate::default().best(5) },
    );
    for n in ["low", "high", "mid"] {
        g.add_edge(START, n).add_edge(n, END);
    }
    let out = g
        .compile()
        .unwrap()
        .invoke(TallyUpdate::default().best(4), &RunConfig::default())
        .await
        .unwrap();
    assert_eq!(out.best, 9);
}

#[test]
fn a_typed_reducer_starts_from_the_field_default() {
    let channels = Tally::channels();
    let initial: Vec<(String, Option<Value>)> =
        channels.iter().map(|(n, c)| (n.clone(), c.get())).collect();
    assert_eq!(
        initial,
        vec![
            ("items".to_owned(), Some(list![])),
            ("total".to_owned(), Some(Value::Int(0))),
            ("best".to_owned(), Some(Value::Int(0))),
            ("last".to_owned(), None),
        ]
    );
}

/// A dynamic reducer closure: joins strings with `+`.
fn joined() -> Box<dyn stategraph::channels::Channel> {
    let join = Arc::new(|a: Value, b: Value| match (a.as_str(), b.as_str()) {
        (Some(a), Some(b)) => Ok(Value::from(format!("{a}+{b}"))),
        _ => Err(ChannelError::Reducer("join needs two strings".into())),
    });
    Box::new(BinaryOperatorAggregate::new(join, None))
}

fn dyn_graph() -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("log".into(), add_list()),
        (
            "count".into(),
            Box::new(BinaryOperatorAggregate::new(
                reducers::add(),
                Some(Value::Int(0)),
            )),
        ),
        ("path".into(), joined()),
        ("last".into(), last_value()),
    ]);
    for n in ["a", "b"] {
        g.add_node(n, move |_s: DynState| async move {
            stategraph::update([
                ("log", list![n]),
                ("count", Value::Int(1)),
                ("path", Value::from(n)),
                ("last", Value::from(n)),
            ])
        });
    }
    g.add_edge(START, "a").add_edge("a", "b").add_edge("b", END);
    g
}

#[tokio::test]
async fn dynamic_reducers_fold_each_write_into_the_state() {
    let out = dyn_graph()
        .compile()
        .unwrap()
        .invoke(
            stategraph::update([("log", list!["in"]), ("count", Value::Int(10))]),
            &RunConfig::default(),
        )
        .await
        .unwrap();
    assert_eq!(strings(out.get("log")), ["in", "a", "b"]);
    assert_eq!(out.get("count"), Some(&Value::Int(12)));
    assert_eq!(out.get("last"), Some(&Value::from("b")));
}

#[tokio::test]
async fn a_reducer_without_an_initial_value_takes_the_first_write_as_is() {
    let out = dyn_graph()
        .compile()
        .unwrap()
        .invoke(
            stategraph::update([("log", list![])]),
            &RunConfig::default(),
        )
        .await
        .unwrap();
    assert_eq!(out.get("path"), Some(&Value::from("a+b")));
}

#[tokio::test]
async fn a_failing_reducer_is_an_invalid_update_naming_the_key() {
    let err = dyn_graph()
        .compile()
        .unwrap()
        .invoke(stategraph::update([("path", 5)]), &RunConfig::default())
        .await
        .unwrap_err();
    match err {
        stategraph::Error::InvalidUpdate(msg) => {
            assert!(msg.starts_with("At key 'path': "), "{msg}");
            assert!(msg.contains("join needs two strings"), "{msg}");
        }
        other => panic!("expected InvalidUpdate, got {other:?}"),
    }
}

/// A typed state whose history is a shared list: nodes read it without copying it.
#[derive(State, Debug, Clone, PartialEq)]
struct Chat {
    #[state(reducer = add)]
    history: stategraph::checkpoint::List,
    turn: i64,
}

#[tokio::test]
async fn a_shared_list_field_is_handed_to_every_node_without_a_copy() {
    use stategraph::checkpoint::List;
    use std::sync::Mutex;
    let seen: Arc<Mutex<Vec<List>>> = Arc::default();
    let mut g = StateGraph::<Chat>::new();
    for name in ["a", "b"] {
        let seen = seen.clone();
        g.add_node(name, move |s: Chat| {
            seen.lock().unwrap().push(s.history.clone());
            std::future::ready(ChatUpdate::default().turn(s.turn + 1))
        });
    }
    g.add_edge(START, "a").add_edge("a", "b").add_edge("b", END);
    let history: List = (0..1000).map(|i| Value::from(format!("m{i}"))).collect();
    let out = g
        .compile()
        .unwrap()
        .invoke(
            ChatUpdate::default().history(history.clone()).turn(0),
            &RunConfig::default(),
        )
        .await
        .unwrap();
    assert_eq!(out.turn, 2);
    assert_eq!(out.history, history);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    // Both nodes got the very list the channel holds, and so does the output.
    assert!(List::ptr_eq(&seen[0], &seen[1]));
    assert!(List::ptr_eq(&seen[1], &out.history));
}
