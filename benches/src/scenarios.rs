//! The graphs of scenarios S1-S3 (`shared/bench/SCENARIOS.md`), built as
//! `bench_langgraph.py` builds them, and their inputs.

use std::sync::Arc;

use stategraph::channels::{BinaryOperatorAggregate, Channel, LastValue};
use stategraph::checkpoint::CheckpointSaver;
use stategraph::{
    list, map, reducers, update, Command, CompileOptions, CompiledGraph, DynState, Goto, Result,
    Send, StateGraph, Value, END, START,
};

/// The number of nodes of the S2 chain.
pub const CHAIN_LEN: usize = 100;

/// The number of `Send`s of the S3 fan-out.
pub const FANOUT: i64 = 100;

/// An input of a [`DynState`] graph: channel writes.
pub type Input = Vec<(String, Value)>;

/// Compiles `graph`, with `saver` as its checkpointer when there is one.
pub fn compile<S: stategraph::State>(
    graph: &StateGraph<S>,
    saver: Option<Arc<dyn CheckpointSaver>>,
) -> Result<CompiledGraph<S>> {
    let options = match saver {
        Some(s) => CompileOptions::new().checkpointer(s),
        None => CompileOptions::new(),
    };
    graph.compile_with(options)
}

fn last_value() -> Box<dyn Channel> {
    Box::new(LastValue::new())
}

/// S1 seed: state `{name, address}`; `get_address` returns a `Command` setting both;
/// `START -> get_address -> END`.
pub fn seed() -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![
        ("name".into(), last_value()),
        ("address".into(), last_value()),
    ]);
    g.add_node("get_address", |_s: DynState| async move {
        Command::update(update([
            ("name", "pavaneeshwar"),
            ("address", "Hyderabad residency"),
        ]))
    });
    g.add_edge(START, "get_address")
        .add_edge("get_address", END);
    g
}

/// The input of S1: `{"name": "", "address": ""}`.
pub fn seed_input() -> Input {
    update([("name", ""), ("address", "")])
}

/// The node of the chains: `counter + 1`.
async fn increment(s: DynState) -> Input {
    let counter = s.get("counter").and_then(Value::as_i64).unwrap_or(0);
    update([("counter", counter + 1)])
}

/// S2 chain: `n` nodes `n0 .. n{n-1}` in a line, each adding 1 to `counter`.
pub fn chain(n: usize) -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![("counter".into(), last_value())]);
    let mut prev = START.to_owned();
    for i in 0..n {
        let name = format!("n{i}");
        g.add_node(name.as_str(), increment);
        g.add_edge(prev, name.as_str());
        prev = name;
    }
    g.add_edge(prev, END);
    g
}

/// The input of S2: `{"counter": 0}`.
pub fn chain_input() -> Input {
    update([("counter", 0)])
}

/// The typed state of the S2 chain, through `#[derive(State)]`.
#[derive(stategraph::State, Clone, Debug, Default)]
pub struct Counter {
    /// The counter each node increments.
    pub counter: i64,
}

/// S2 chain over the typed [`Counter`] state: the same graph as [`chain`].
pub fn typed_chain(n: usize) -> StateGraph<Counter> {
    let mut g = StateGraph::<Counter>::new();
    let mut prev = START.to_owned();
    for i in 0..n {
        let name = format!("n{i}");
        g.add_node(name.as_str(), |s: Counter| async move {
            CounterUpdate::default().counter(s.counter + 1)
        });
        g.add_edge(prev, name.as_str());
        prev = name;
    }
    g.add_edge(prev, END);
    g
}

/// S3 fan-out: `fan` returns a `Command` whose goto is [`FANOUT`] `Send("worker", i)`;
/// each worker appends `[i]` to `results` (an add reducer).
///
/// A `Send` argument becomes the worker's state, and a [`DynState`] is a map, so `i` is
/// sent as `{"i": i}` where Python sends the bare integer.
pub fn fanout() -> StateGraph<DynState> {
    let mut g = StateGraph::<DynState>::with_channels(vec![(
        "results".into(),
        Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![]))) as _,
    )]);
    g.add_node("fan", |_s: DynState| async move {
        Command::<Input> {
            goto: (0..FANOUT)
                .map(|i| Goto::Send(Send::new("worker", map! { "i" => i })))
                .collect(),
            ..Default::default()
        }
    });
    g.add_node("worker", |s: DynState| async move {
        let i = s.get("i").cloned().unwrap_or(Value::Nil);
        update([("results", Value::list(vec![i]))])
    });
    g.add_edge(START, "fan").add_edge("worker", END);
    g
}

/// The input of S3: `{"results": []}`.
pub fn fanout_input() -> Input {
    update([("results", list![])])
}
