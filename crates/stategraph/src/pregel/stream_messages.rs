//! The `messages` stream mode: chat-model chunks, and the messages a node returns, each
//! with the metadata of its task, as Python LangGraph's `StreamMessagesHandler` streams
//! them.
//!
//! - A chunk ([`NodeContext::send_message_chunk`](super::context::NodeContext::send_message_chunk))
//!   is always streamed, and its id is remembered.
//! - When a node returns, every message in its writes (a message value, or a message in
//!   a list value) is streamed once, unless its id was streamed before in the run or is
//!   the id of a message in the node's input: a model that streamed its answer as chunks
//!   with the answer's id is not streamed twice, and a node handing back the history
//!   does not repeat it. A message without id gets a fresh uuid4 in the stream.
//! - The metadata is a map: the run's `metadata`, `thread_id` (and the `checkpoint_id`,
//!   `run_id`, `assistant_id`, `graph_id` and `task_id` configurable keys when set),
//!   `ls_integration`, `langgraph_step`, `langgraph_node`, `langgraph_triggers`,
//!   `langgraph_path`, `langgraph_checkpoint_ns`, and `checkpoint_ns` (the outermost
//!   subgraph's task namespace inside a subgraph; for a chunk at the root, the task's
//!   own namespace).

use stategraph_checkpoint::{Map, Value};

use super::stream::{StreamMode, StreamSink};
use super::task::{PathPart, Task};
use crate::config::RunConfig;
use crate::messages::{Message, Role};

/// The configurable keys Python copies into run metadata when they are set.
const PROPAGATED: [&str; 4] = ["run_id", "assistant_id", "graph_id", "task_id"];

/// The sink handed to a task's context: it carries the task's `messages` metadata when
/// that mode is streamed.
pub(crate) fn task_sink(
    sink: Option<&StreamSink>,
    config: &RunConfig,
    task: &Task,
    step: i64,
) -> Option<StreamSink> {
    let sink = sink?;
    if sink.wants(StreamMode::Messages) {
        Some(sink.for_task(task_metadata(config, task, step)))
    } else {
        Some(sink.clone())
    }
}

/// The metadata of the messages a task's node returns.
pub(crate) fn task_metadata(config: &RunConfig, task: &Task, step: i64) -> Map {
    let mut m = Map::with_capacity(config.metadata.len() + 9);
    for (k, v) in &config.metadata {
        m.insert(k.as_str(), v.clone());
    }
    let mut propagate = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            if m.get(key).is_none() && is_set(&v) {
                m.insert(key, v);
            }
        }
    };
    propagate("thread_id", config.thread_id.as_deref().map(Value::from));
    propagate(
        "checkpoint_id",
        config.checkpoint_id.as_deref().map(Value::from),
    );
    for key in PROPAGATED {
        propagate(key, config.configurable.get(key).cloned());
    }
    m.insert("ls_integration", "langgraph");
    m.insert("langgraph_step", step);
    m.insert("langgraph_node", task.name.as_str());
    m.insert(
        "langgraph_triggers",
        Value::List(
            task.triggers
                .iter()
                .map(|t| Value::from(t.as_str()))
                .collect(),
        ),
    );
    m.insert(
        "langgraph_path",
        Value::List(task.path.0.iter().map(path_part).collect()),
    );
    m.insert("langgraph_checkpoint_ns", task.ns.as_str());
    if let Some((outer, _)) = task.ns.split_once('|') {
        m.insert("checkpoint_ns", outer);
    }
    m
}

/// The metadata of a chat-model chunk sent from a task with metadata `task_meta`, with
/// the model's own keys (`extra`, e.g. `ls_provider`) after LangGraph's.
pub(crate) fn chunk_metadata(task_meta: &Map, extra: Option<&Map>) -> Map {
    let mut m = task_meta.clone();
    m.insert("ls_integration", "langchain_chat_model");
    if m.get("checkpoint_ns").is_none() {
        let ns = m
            .get("langgraph_checkpoint_ns")
            .cloned()
            .unwrap_or_default();
        if is_set(&ns) {
            m.insert("checkpoint_ns", ns);
        }
    }
    if let Some(extra) = extra {
        for (k, v) in extra.iter() {
            m.insert(k.clone(), v.clone());
        }
    }
    m
}

/// A chunk as Python streams it: an AI message as an `AIMessageChunk` (with its
/// `tool_call_chunks` and `chunk_position`), other kinds as they are.
pub(crate) fn chunk_value(chunk: &Message) -> Value {
    let value = chunk.to_value();
    if chunk.role != Role::Ai {
        return value;
    }
    let Some((_, fields)) = value.as_message() else {
        return value;
    };
    let mut fields = fields.clone();
    fields.insert("type", "AIMessageChunk");
    if fields.get("tool_call_chunks").is_none() {
        fields.insert("tool_call_chunks", Value::List(Vec::new().into()));
    }
    if fields.get("chunk_position").is_none() {
        fields.insert("chunk_position", Value::Nil);
    }
    Value::pydantic_v2(chunk.role.module(), "AIMessageChunk", fields)
}

/// Streams one message with `meta`; with `dedupe`, not when its id was seen. A message
/// without id gets a fresh one.
pub(crate) fn emit_message(sink: &StreamSink, message: &Value, meta: &Map, dedupe: bool) {
    let id = message_id(message);
    if dedupe && id.as_deref().is_some_and(|id| sink.was_seen(id)) {
        return;
    }
    let (message, id) = match id {
        Some(id) => (message.clone(), id),
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            let with_id = Message::from_value(message)
                .map(|m| m.with_id(id.clone()).to_value())
                .unwrap_or_else(|_| message.clone());
            (with_id, id)
        }
    };
    sink.mark_seen(&id);
    sink.emit(
        StreamMode::Messages,
        Value::list(vec![message, Value::Map(meta.clone())]),
    );
}

/// Streams the messages a task returned (its `writes`) that were not streamed before
/// and are not in its input.
pub(crate) fn emit_node_messages(
    sink: &StreamSink,
    config: &RunConfig,
    task: &Task,
    step: i64,
    writes: &[(String, Value)],
) {
    if !sink.wants(StreamMode::Messages) {
        return;
    }
    for_each_message(&task.input, true, &mut |m| {
        if let Some(id) = message_id(m) {
            sink.mark_seen(&id);
        }
    });
    let returned: Vec<&Value> = writes
        .iter()
        .filter(|(c, _)| !c.starts_with("__") && !c.starts_with("branch:"))
        .map(|(_, v)| v)
        .collect();
    if returned.is_empty() {
        return;
    }
    let meta = task_metadata(config, task, step);
    for value in returned {
        for_each_message(value, false, &mut |m| emit_message(sink, m, &meta, true));
    }
}

/// Calls `f` on each message in `v`: `v` itself, a message in a list, and with
/// `in_map`, the same among a map's values (a node's input state), as Python looks
/// through a node's input and output.
fn for_each_message(v: &Value, in_map: bool, f: &mut dyn FnMut(&Value)) {
    if v.as_message().is_some() {
        f(v);
    } else if let Some(items) = v.as_list() {
        items
            .iter()
            .filter(|i| i.as_message().is_some())
            .for_each(&mut *f);
    } else if let (Some(map), true) = (v.as_map(), in_map) {
        for (_, item) in map.iter() {
            for_each_message(item, false, f);
        }
    }
}

/// A stored message's id, when it has one.
fn message_id(message: &Value) -> Option<String> {
    let (_, fields) = message.as_message()?;
    fields
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Python's truthiness of a propagated value: set and not empty.
fn is_set(v: &Value) -> bool {
    match v {
        Value::Nil => false,
        Value::Str(s) => !s.as_str().is_empty(),
        _ => true,
    }
}

fn path_part(p: &PathPart) -> Value {
    match p {
        PathPart::Str(s) => Value::from(s.as_str()),
        PathPart::Int(n) => Value::from(*n),
        PathPart::Bool(b) => Value::from(*b),
        PathPart::Path(inner) => Value::List(inner.0.iter().map(path_part).collect()),
    }
}
