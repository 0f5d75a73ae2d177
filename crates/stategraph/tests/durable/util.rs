//! Helpers of the durable-execution tests: channels, call counters, logging nodes, and
//! reading what a saver stored.

use std::sync::Arc;

use indexmap::IndexMap;
use parking_lot::Mutex;
use stategraph::channels::{BinaryOperatorAggregate, Channel, LastValue};
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, CheckpointTuple, ListOptions};
use stategraph::{
    list, reducers, CompileOptions, CompiledGraph, DynState, State, StateGraph, Value,
};

/// A `LastValue` channel.
pub(crate) fn last_value() -> Box<dyn Channel> {
    Box::new(LastValue::new())
}

/// An `Annotated[list, operator.add]` channel.
pub(crate) fn add_list() -> Box<dyn Channel> {
    Box::new(BinaryOperatorAggregate::new(reducers::add(), Some(list![])))
}

/// A dynamic-state graph with a `log` list reducer channel (and nothing else).
pub(crate) fn log_graph() -> StateGraph<DynState> {
    StateGraph::with_channels(vec![("log".into(), add_list())])
}

/// Counts the calls of each node (shared by the node closures and the test).
#[derive(Clone, Default)]
pub(crate) struct Calls(Arc<Mutex<IndexMap<String, usize>>>);

impl Calls {
    /// A counter with no calls.
    pub(crate) fn new() -> Calls {
        Calls::default()
    }

    /// Records a call of `node`; returns its number (1 for the first call).
    pub(crate) fn hit(&self, node: &str) -> usize {
        let mut m = self.0.lock();
        let n = m.entry(node.to_owned()).or_insert(0);
        *n += 1;
        *n
    }

    /// How many times `node` was called.
    pub(crate) fn of(&self, node: &str) -> usize {
        self.0.lock().get(node).copied().unwrap_or(0)
    }

    /// `(node, calls)` for the given nodes, for one readable assertion.
    pub(crate) fn counts<const N: usize>(&self, nodes: [&str; N]) -> [(String, usize); N] {
        nodes.map(|n| (n.to_owned(), self.of(n)))
    }
}

/// Expected counts for [`Calls::counts`].
pub(crate) fn expect<const N: usize>(pairs: [(&str, usize); N]) -> [(String, usize); N] {
    pairs.map(|(n, c)| (n.to_owned(), c))
}

/// A node of a [`log_graph`] that counts its calls and appends its own name to `log`.
pub(crate) fn logs(
    name: &'static str,
    calls: &Calls,
) -> impl Fn(DynState) -> std::future::Ready<Vec<(String, Value)>> + Send + Sync + 'static {
    let calls = calls.clone();
    move |_s: DynState| {
        calls.hit(name);
        std::future::ready(stategraph::update([("log", list![name])]))
    }
}

/// An input of `log` values.
pub(crate) fn log_input(items: &[&str]) -> Vec<(String, Value)> {
    let items: Vec<Value> = items.iter().map(|s| Value::from(*s)).collect();
    vec![("log".to_owned(), Value::List(items.into()))]
}

/// The strings of a list value.
pub(crate) fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

/// The `log` of a state.
pub(crate) fn log_of(state: &DynState) -> Vec<String> {
    strings(state.get("log"))
}

/// Owned strings, for comparing with [`log_of`].
pub(crate) fn log(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Compiles `g` with `saver` as its checkpointer.
pub(crate) fn with_saver<S: State>(
    g: &StateGraph<S>,
    saver: &Arc<dyn CheckpointSaver>,
) -> CompiledGraph<S> {
    g.compile_with(CompileOptions::new().checkpointer(saver.clone()))
        .unwrap()
}

/// The checkpoints of a thread in namespace `ns`, oldest first.
pub(crate) async fn history_ns(
    saver: &Arc<dyn CheckpointSaver>,
    thread: &str,
    ns: &str,
) -> Vec<CheckpointTuple> {
    let mut all = saver
        .list(
            Some(&CheckpointConfig::thread(thread).with_ns(ns)),
            &ListOptions::default(),
        )
        .await
        .unwrap();
    all.reverse();
    all
}

/// The root checkpoints of a thread, oldest first.
pub(crate) async fn history(
    saver: &Arc<dyn CheckpointSaver>,
    thread: &str,
) -> Vec<CheckpointTuple> {
    history_ns(saver, thread, "").await
}

/// The checkpoints of a thread in every namespace, newest first.
pub(crate) async fn all_namespaces(
    saver: &Arc<dyn CheckpointSaver>,
    thread: &str,
) -> Vec<CheckpointTuple> {
    let cfg = CheckpointConfig {
        checkpoint_ns: None,
        ..CheckpointConfig::thread(thread)
    };
    saver
        .list(Some(&cfg), &ListOptions::default())
        .await
        .unwrap()
}

/// The `step` of each checkpoint.
pub(crate) fn steps(history: &[CheckpointTuple]) -> Vec<i64> {
    history.iter().map(|t| t.metadata.step.unwrap()).collect()
}

/// The pending writes of a checkpoint as `(channel, value)`, in the saver's order.
pub(crate) fn writes(t: &CheckpointTuple) -> Vec<(String, Value)> {
    t.pending_writes
        .iter()
        .map(|w| (w.channel.clone(), w.value.clone()))
        .collect()
}

/// The writes of a checkpoint to one channel.
pub(crate) fn writes_to(t: &CheckpointTuple, channel: &str) -> Vec<Value> {
    t.pending_writes
        .iter()
        .filter(|w| w.channel == channel)
        .map(|w| w.value.clone())
        .collect()
}

/// `(channel, value)` pairs from string channels, for comparing with [`writes`].
pub(crate) fn pairs<const N: usize>(items: [(&str, Value); N]) -> Vec<(String, Value)> {
    items.into_iter().map(|(c, v)| (c.to_owned(), v)).collect()
}

/// The `parent_config` checkpoint id of a stored checkpoint.
pub(crate) fn parent_id(t: &CheckpointTuple) -> Option<String> {
    t.parent_config
        .as_ref()
        .and_then(|p| p.checkpoint_id.clone())
}

/// The `Error::Node` parts, or a panic naming what the error was instead.
pub(crate) fn node_error(err: stategraph::Error) -> (String, String) {
    match err {
        stategraph::Error::Node { node, message } => (node, message),
        other => panic!("expected Error::Node, got {other:?}"),
    }
}
