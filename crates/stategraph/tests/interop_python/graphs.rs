//! The graphs of `interop/interop_graphs.py`, node for node, on `DynState`.

use std::sync::Arc;

use stategraph::channels::{BinaryOperatorAggregate, Channel, LastValue};
use stategraph::checkpoint::CheckpointSaver;
use stategraph::{
    list, map, reducers, update, CompileOptions, CompiledGraph, DynState, Message, NodeContext,
    NodeError, StateGraph, Value, END, START,
};

fn lv() -> Box<dyn Channel> {
    Box::new(LastValue::new())
}

/// `Annotated[list, operator.add]`.
fn add() -> Box<dyn Channel> {
    Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![])))
}

/// `Annotated[list[AnyMessage], add_messages]`.
fn messages() -> Box<dyn Channel> {
    Box::new(BinaryOperatorAggregate::new(
        reducers::add_messages(),
        Some(list![]),
    ))
}

fn text(s: &DynState, key: &str) -> String {
    s.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// START -> a -> b -> c -> END; each node appends its name to `value` and `trail`.
pub(crate) fn chain3() -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("value".into(), lv()),
        ("trail".into(), add()),
    ]);
    for n in ["a", "b", "c"] {
        g.add_node(n, move |s: DynState| async move {
            update([
                ("value", Value::from(text(&s, "value") + n)),
                ("trail", list![n]),
            ])
        });
    }
    g.add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", END);
    g
}

/// `inc` loops on itself until `n == 2`, then `finish` sets `done`.
pub(crate) fn conditional() -> StateGraph<DynState> {
    let mut g =
        StateGraph::<DynState>::with_channels(vec![("n".into(), lv()), ("done".into(), lv())]);
    g.add_node("inc", |s: DynState| async move {
        let n = s.get("n").and_then(Value::as_i64).unwrap_or(0);
        update([("n", n + 1)])
    });
    g.add_node(
        "finish",
        |_s: DynState| async move { update([("done", true)]) },
    );
    g.add_edge(START, "inc");
    g.add_conditional_edges_with_map(
        "inc",
        |s: &DynState| {
            if s.get("n").and_then(Value::as_i64).unwrap_or(0) < 2 {
                "again"
            } else {
                "finish"
            }
        },
        [("again", "inc"), ("finish", "finish")],
    );
    g.add_edge("finish", END);
    g
}

/// `ask` interrupts with the question; `greet` greets the answer.
pub(crate) fn ask_greet() -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("question".into(), lv()),
        ("answer".into(), lv()),
        ("greeting".into(), lv()),
    ]);
    g.add_node("ask", |s: DynState, ctx: NodeContext| async move {
        let q = s.get("question").cloned().unwrap_or_default();
        let answer = ctx.interrupt(map! { "question" => q })?;
        Ok::<_, NodeError>(update([("answer", answer)]))
    });
    g.add_node("greet", |s: DynState| async move {
        update([("greeting", format!("Hello {}", text(&s, "answer")))])
    });
    g.add_edge(START, "ask")
        .add_edge("ask", "greet")
        .add_edge("greet", END);
    g
}

/// START -> pre -> sub -> post -> END, where `sub` (inner1 -> inner2) interrupts in
/// inner2 when `ask` is set.
pub(crate) fn subgraph() -> StateGraph<DynState> {
    let mut sb = StateGraph::<DynState>::with_channels(vec![
        ("text".into(), lv()),
        ("ask".into(), lv()),
        ("inner_count".into(), lv()),
    ]);
    sb.add_node("inner1", |s: DynState| async move {
        update([
            ("text", Value::from(text(&s, "text") + "|inner1")),
            ("inner_count", Value::from(1)),
        ])
    });
    sb.add_node("inner2", |s: DynState, ctx: NodeContext| async move {
        let t = text(&s, "text");
        let t = if s.get("ask").and_then(Value::as_bool).unwrap_or(false) {
            let ok = ctx.interrupt("confirm?")?;
            format!("{t}|inner2({})", ok.as_str().unwrap_or(""))
        } else {
            t + "|inner2"
        };
        Ok::<_, NodeError>(update([
            ("text", Value::from(t)),
            ("inner_count", Value::from(2)),
        ]))
    });
    sb.add_edge(START, "inner1")
        .add_edge("inner1", "inner2")
        .add_edge("inner2", END);
    let sub = sb.compile().expect("subgraph compiles");

    let mut g =
        StateGraph::<DynState>::with_channels(vec![("text".into(), lv()), ("ask".into(), lv())]);
    g.add_node("pre", |s: DynState| async move {
        update([("text", text(&s, "text") + "|pre")])
    });
    g.add_subgraph("sub", &sub);
    g.add_node("post", |s: DynState| async move {
        update([("text", text(&s, "text") + "|post")])
    });
    g.add_edge(START, "pre")
        .add_edge("pre", "sub")
        .add_edge("sub", "post")
        .add_edge("post", END);
    g
}

/// A `Send` per topic to `worker`, then `summarize` joins the results.
pub(crate) fn fanout() -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("topics".into(), lv()),
        ("results".into(), add()),
        ("summary".into(), lv()),
    ]);
    g.add_node("worker", |arg: DynState| async move {
        update([("results", list![text(&arg, "topic").to_uppercase()])])
    });
    g.add_node("summarize", |s: DynState| async move {
        let results: Vec<&str> = s
            .get("results")
            .and_then(Value::as_list)
            .unwrap_or(&[])
            .iter()
            .filter_map(Value::as_str)
            .collect();
        update([("summary", results.join(","))])
    });
    g.add_conditional_edges(START, |s: &DynState| {
        s.get("topics")
            .and_then(Value::as_list)
            .unwrap_or(&[])
            .iter()
            .map(|t| stategraph::Send::new("worker", map! { "topic" => t.clone() }))
            .collect::<Vec<_>>()
    });
    g.add_edge("worker", "summarize").add_edge("summarize", END);
    g
}

/// START -> left, right; both -> join (a barrier).
pub(crate) fn join() -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![("log".into(), add())]);
    for n in ["left", "right", "join"] {
        g.add_node(
            n,
            move |_s: DynState| async move { update([("log", list![n])]) },
        );
    }
    g.add_edge(START, "left")
        .add_edge(START, "right")
        .add_join(["left", "right"], "join")
        .add_edge("join", END);
    g
}

/// A chat: `bot` echoes the last message, counts the turns, records the count in the
/// `profile` map (whose other entries, written by Python, it keeps as they are) and adds
/// 0.5 to the float `score` (stored inline in a Postgres checkpoint, like every number).
pub(crate) fn chat() -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("messages".into(), messages()),
        ("profile".into(), lv()),
        ("turns".into(), lv()),
        ("score".into(), lv()),
    ]);
    g.add_node("bot", |s: DynState| async move {
        let last = s
            .get("messages")
            .and_then(Value::as_list)
            .and_then(<[Value]>::last)
            .map(|m| Message::from_value(m).expect("a message").text())
            .unwrap_or_default();
        let turns = s.get("turns").and_then(Value::as_i64).unwrap_or(0) + 1;
        let mut profile = s
            .get("profile")
            .and_then(Value::as_map)
            .cloned()
            .unwrap_or_default();
        profile.insert("turns", turns);
        let score = s.get("score").and_then(Value::as_f64).unwrap_or(0.0) + 0.5;
        update([
            (
                "messages",
                list![Message::ai(format!("echo: {last}")).to_value()],
            ),
            ("turns", Value::from(turns)),
            ("profile", Value::Map(profile)),
            ("score", Value::from(score)),
        ])
    });
    g.add_edge(START, "bot").add_edge("bot", END);
    g
}

/// The graph that runs a thread (the threads of `THREADS` in the Python script).
pub(crate) fn for_thread(thread: &str) -> StateGraph<DynState> {
    match thread {
        "chain" => chain3(),
        "cond" => conditional(),
        "int-1" | "int-2" => ask_greet(),
        "sub-1" | "sub-2" => subgraph(),
        "fan" => fanout(),
        "join" => join(),
        "chat" => chat(),
        other => panic!("no graph for thread {other}"),
    }
}

/// Every thread of the scenarios.
pub(crate) const THREADS: [&str; 9] = [
    "chain", "cond", "int-1", "int-2", "sub-1", "sub-2", "fan", "join", "chat",
];

/// The thread's graph compiled on `saver`.
pub(crate) fn compiled(thread: &str, saver: &Arc<dyn CheckpointSaver>) -> CompiledGraph<DynState> {
    for_thread(thread)
        .compile_with(CompileOptions::new().checkpointer(saver.clone()))
        .expect("compiles")
}
