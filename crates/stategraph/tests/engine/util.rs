//! Helpers shared by the engine tests: channels, savers, reading stored checkpoints.

use std::sync::Arc;

use parking_lot::Mutex;
use stategraph::channels::{BinaryOperatorAggregate, Channel, LastValue};
use stategraph::checkpoint::serde::msgpack;
use stategraph::checkpoint::{
    CheckpointConfig, CheckpointSaver, CheckpointTuple, ListOptions, MemorySaver,
};
use stategraph::{list, reducers, CompileOptions, CompiledGraph, DynState, StateGraph, Value};

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

/// A node of a [`log_graph`] appending its own name to `log`.
pub(crate) fn logs(
    name: &'static str,
) -> impl Fn(DynState) -> std::future::Ready<Vec<(String, Value)>> + Send + Sync + 'static {
    move |_s: DynState| std::future::ready(stategraph::update([("log", list![name])]))
}

/// The strings of a list value.
pub(crate) fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect()
}

/// An input of `log` values.
pub(crate) fn log_input(items: &[&str]) -> Vec<(String, Value)> {
    let items: Vec<Value> = items.iter().map(|s| Value::from(*s)).collect();
    vec![("log".to_owned(), Value::List(items.into()))]
}

/// A fresh saver.
pub(crate) fn saver() -> Arc<MemorySaver> {
    Arc::new(MemorySaver::new())
}

/// Compiles `g` with `saver` as its checkpointer.
pub(crate) fn with_saver<S: stategraph::State>(
    g: &StateGraph<S>,
    saver: &Arc<MemorySaver>,
) -> CompiledGraph<S> {
    g.compile_with(CompileOptions::new().checkpointer(saver.clone()))
        .unwrap()
}

/// The root checkpoints of a thread, oldest first.
pub(crate) async fn history(saver: &MemorySaver, thread: &str) -> Vec<CheckpointTuple> {
    let mut all = saver
        .list(
            Some(&CheckpointConfig::thread(thread)),
            &ListOptions::default(),
        )
        .await
        .unwrap();
    all.reverse();
    all
}

/// The `step` of each checkpoint, oldest first.
pub(crate) fn steps(history: &[CheckpointTuple]) -> Vec<i64> {
    history.iter().map(|t| t.metadata.step.unwrap()).collect()
}

/// A stored write decoded: `(checkpoint_id, task_id, idx, channel, value, task_path)`.
pub(crate) type StoredWrite = (String, String, i64, String, Value, String);

/// Every write a saver stores, values decoded from msgpack (`null` tags read as nil).
pub(crate) fn stored_writes(saver: &MemorySaver) -> Vec<StoredWrite> {
    saver
        .storage_snapshot()
        .writes
        .into_iter()
        .map(|w| {
            let value = match w.value.tag.as_ref() {
                "msgpack" => msgpack::decode(&w.value.bytes).unwrap(),
                "null" => Value::Nil,
                other => panic!("unexpected tag {other}"),
            };
            (
                w.checkpoint_id,
                w.task_id,
                w.idx,
                w.channel,
                value,
                w.task_path,
            )
        })
        .collect()
}

/// Runs `f` and returns what it returned and the messages of the warnings it logged.
pub(crate) fn capture_warnings<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let subscriber = WarningSink {
        warnings: warnings.clone(),
    };
    let out = tracing::subscriber::with_default(subscriber, f);
    let w = warnings.lock().clone();
    (out, w)
}

/// A `tracing` subscriber keeping the message of every warning.
struct WarningSink {
    warnings: Arc<Mutex<Vec<String>>>,
}

struct MessageOf<'a>(&'a mut String);

impl tracing::field::Visit for MessageOf<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for WarningSink {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() == tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut message = String::new();
        event.record(&mut MessageOf(&mut message));
        self.warnings.lock().push(message);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}
