//! The typed payloads of the `tasks`, `checkpoints`, `debug` and `messages` stream modes,
//! read from the payloads the run streams (the shapes Python LangGraph streams).

use std::fmt;

use indexmap::IndexMap;
use stategraph_checkpoint::{CheckpointConfig, CheckpointMetadata, Ext, Map, ObjectCode, Value};

use crate::error::{Error, Result};
use crate::types::Interrupt;

/// A task starting (`tasks` mode; Python's `TaskPayload`).
#[derive(Clone, PartialEq)]
pub struct TaskStart {
    /// The task id.
    pub id: String,
    /// The node it runs.
    pub name: String,
    /// Its input: the state it reads, or a `Send`'s argument.
    pub input: Value,
    /// The channels that triggered it (`__pregel_push` for a `Send`).
    pub triggers: Vec<String>,
}

/// A task finishing (`tasks` mode; Python's `TaskResultPayload`).
#[derive(Clone, PartialEq)]
pub struct TaskResult {
    /// The task id.
    pub id: String,
    /// The node it ran.
    pub name: String,
    /// The error it failed with, if it failed.
    pub error: Option<Value>,
    /// Its writes to output channels: `channel -> value`, a channel written several times
    /// as `{"$writes": [...]}`.
    pub result: IndexMap<String, Value>,
    /// The interrupts it raised.
    pub interrupts: Vec<Interrupt>,
}

/// A `tasks` event: a task starts or finishes.
#[derive(Clone, PartialEq)]
pub enum TaskEvent {
    /// A task starts.
    Start(TaskStart),
    /// A task finished (or failed, or was interrupted).
    Result(TaskResult),
}

/// A task of a [`CheckpointEvent`] (Python's `CheckpointTask`).
#[derive(Clone, PartialEq)]
pub struct CheckpointTask {
    /// The task id.
    pub id: String,
    /// The node it runs.
    pub name: String,
    /// The error it failed with, when it failed.
    pub error: Option<Value>,
    /// Its writes to output channels, when it finished.
    pub result: Option<IndexMap<String, Value>>,
    /// The interrupts it raised.
    pub interrupts: Vec<Interrupt>,
}

/// A `checkpoints` event: a checkpoint as `get_state` shows it (Python's
/// `CheckpointPayload`).
#[derive(Clone, PartialEq)]
pub struct CheckpointEvent {
    /// The checkpoint's config (thread, namespace, id).
    pub config: CheckpointConfig,
    /// Its parent's config, if it has a parent.
    pub parent_config: Option<CheckpointConfig>,
    /// The output channels' values; read a typed state with `State::from_values`.
    pub values: IndexMap<String, Value>,
    /// Its metadata (source, step, parents).
    pub metadata: CheckpointMetadata,
    /// The nodes that run next.
    pub next: Vec<String>,
    /// The tasks of the next step.
    pub tasks: Vec<CheckpointTask>,
}

/// What a `debug` event carries.
#[derive(Clone, PartialEq)]
pub enum DebugPayload {
    /// A checkpoint (`type: "checkpoint"`).
    Checkpoint(Box<CheckpointEvent>),
    /// A task starts (`type: "task"`).
    Task(TaskStart),
    /// A task finished (`type: "task_result"`).
    TaskResult(TaskResult),
}

/// A `debug` event: a checkpoint or task event with its step and time.
#[derive(Clone, PartialEq)]
pub struct DebugEvent {
    /// The step.
    pub step: i64,
    /// When it happened (ISO 8601).
    pub timestamp: String,
    /// The event.
    pub payload: DebugPayload,
}

/// The metadata of a `messages` event: the task that sent the message, as Python's
/// `stream_mode="messages"` gives it.
#[derive(Clone, PartialEq)]
pub struct MessageMetadata {
    /// The run's thread.
    pub thread_id: Option<String>,
    /// The step of the task.
    pub langgraph_step: i64,
    /// The node of the task.
    pub langgraph_node: String,
    /// The channels that triggered the task.
    pub langgraph_triggers: Vec<String>,
    /// The task's path (`["__pregel_pull", node]`, `["__pregel_push", index, false]`).
    pub langgraph_path: Vec<Value>,
    /// The task's checkpoint namespace (`node:task_id`, `|`-joined in subgraphs).
    pub langgraph_checkpoint_ns: String,
    /// `checkpoint_ns` as Python's metadata has it: the outermost subgraph task's
    /// namespace inside a subgraph, the task's own for a chat-model chunk at the root.
    pub checkpoint_ns: Option<String>,
    /// The run's tags (given by a chat model).
    pub tags: Vec<String>,
    /// The other keys, in order: the run's metadata, `ls_integration`, a model's keys.
    pub extra: Map,
}

impl TaskStart {
    pub(crate) fn parse(v: &Value) -> Result<TaskStart> {
        Ok(TaskStart {
            id: req_str(v, "id")?,
            name: req_str(v, "name")?,
            input: v.get("input").cloned().unwrap_or_default(),
            triggers: str_list(v.get("triggers")),
        })
    }
}

impl TaskResult {
    pub(crate) fn parse(v: &Value) -> Result<TaskResult> {
        Ok(TaskResult {
            id: req_str(v, "id")?,
            name: req_str(v, "name")?,
            error: v.get("error").filter(|e| !e.is_nil()).cloned(),
            result: string_map(v.get("result")),
            interrupts: interrupts(v.get("interrupts")),
        })
    }
}

impl TaskEvent {
    pub(crate) fn parse(v: &Value) -> Result<TaskEvent> {
        if v.get("triggers").is_some() {
            TaskStart::parse(v).map(TaskEvent::Start)
        } else {
            TaskResult::parse(v).map(TaskEvent::Result)
        }
    }
}

impl CheckpointEvent {
    pub(crate) fn parse(v: &Value) -> Result<CheckpointEvent> {
        let config = v
            .get("config")
            .and_then(config_of)
            .ok_or_else(|| bad("checkpoint", v))?;
        let tasks = v
            .get("tasks")
            .and_then(Value::as_list)
            .unwrap_or(&[])
            .iter()
            .map(|t| {
                Ok(CheckpointTask {
                    id: req_str(t, "id")?,
                    name: req_str(t, "name")?,
                    error: t.get("error").filter(|e| !e.is_nil()).cloned(),
                    result: t.get("result").map(|r| string_map(Some(r))),
                    interrupts: interrupts(t.get("interrupts")),
                })
            })
            .collect::<Result<_>>()?;
        Ok(CheckpointEvent {
            config,
            parent_config: v.get("parent_config").and_then(config_of),
            values: string_map(v.get("values")),
            metadata: CheckpointMetadata::from_value(
                v.get("metadata").cloned().unwrap_or_default(),
            )?,
            next: str_list(v.get("next")),
            tasks,
        })
    }
}

impl DebugEvent {
    pub(crate) fn parse(v: &Value) -> Result<DebugEvent> {
        let payload = v.get("payload").ok_or_else(|| bad("debug", v))?;
        let payload = match v.get("type").and_then(Value::as_str) {
            Some("checkpoint") => {
                DebugPayload::Checkpoint(Box::new(CheckpointEvent::parse(payload)?))
            }
            Some("task") => DebugPayload::Task(TaskStart::parse(payload)?),
            Some("task_result") => DebugPayload::TaskResult(TaskResult::parse(payload)?),
            _ => return Err(bad("debug", v)),
        };
        Ok(DebugEvent {
            step: v.get("step").and_then(Value::as_i64).unwrap_or_default(),
            timestamp: v
                .get("timestamp")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            payload,
        })
    }
}

impl MessageMetadata {
    pub(crate) fn parse(v: &Value) -> Result<MessageMetadata> {
        let map = v.as_map().ok_or_else(|| bad("messages metadata", v))?;
        let mut md = MessageMetadata {
            thread_id: None,
            langgraph_step: 0,
            langgraph_node: String::new(),
            langgraph_triggers: Vec::new(),
            langgraph_path: Vec::new(),
            langgraph_checkpoint_ns: String::new(),
            checkpoint_ns: None,
            tags: Vec::new(),
            extra: Map::new(),
        };
        for (k, val) in map.iter() {
            let owned = || val.as_str().map(str::to_owned);
            match k.as_str() {
                Some("thread_id") => md.thread_id = owned(),
                Some("langgraph_step") => md.langgraph_step = val.as_i64().unwrap_or_default(),
                Some("langgraph_node") => md.langgraph_node = owned().unwrap_or_default(),
                Some("langgraph_triggers") => md.langgraph_triggers = str_list(Some(val)),
                Some("langgraph_path") => {
                    md.langgraph_path = val.as_list().unwrap_or(&[]).to_vec();
                }
                Some("langgraph_checkpoint_ns") => {
                    md.langgraph_checkpoint_ns = owned().unwrap_or_default();
                }
                Some("checkpoint_ns") => md.checkpoint_ns = owned(),
                Some("tags") => md.tags = str_list(Some(val)),
                _ => {
                    md.extra.insert(k.clone(), val.clone());
                }
            }
        }
        Ok(md)
    }
}

/// A `{"configurable": {thread_id, checkpoint_ns, checkpoint_id}}` payload.
fn config_of(v: &Value) -> Option<CheckpointConfig> {
    let c = v.get("configurable")?;
    let mut cfg = CheckpointConfig::thread(c.get("thread_id")?.as_str()?)
        .with_ns(c.get("checkpoint_ns").and_then(Value::as_str).unwrap_or(""));
    if let Some(id) = c.get("checkpoint_id").and_then(Value::as_str) {
        cfg = cfg.with_checkpoint_id(id);
    }
    Some(cfg)
}

fn req_str(v: &Value, key: &str) -> Result<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Error::State(format!("stream payload without {key:?}: {}", v.repr())))
}

fn str_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// A map with string keys (other keys are left out).
pub(crate) fn string_map(v: Option<&Value>) -> IndexMap<String, Value> {
    v.and_then(Value::as_map)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), v.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// The interrupts of a payload: stored `Interrupt` objects or `{value, id}` maps.
pub(crate) fn interrupts(v: Option<&Value>) -> Vec<Interrupt> {
    v.and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .filter_map(|i| match i {
            // `asdict(Interrupt)`: read it as the stored object with those fields.
            Value::Map(m) => Interrupt::from_value(&Value::from(Ext::object(
                ObjectCode::ConstructorKwArgs,
                "langgraph.types",
                "Interrupt",
                Value::Map(m.clone()),
                None,
            ))),
            stored => Interrupt::from_value(stored),
        })
        .collect()
}

fn bad(what: &str, v: &Value) -> Error {
    Error::State(format!("unexpected {what} stream payload: {}", v.repr()))
}

/// A value shown readably (its [`Value::repr`]) in `Debug` output.
pub(crate) struct Readable<'a>(pub &'a Value);

impl fmt::Debug for Readable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.repr(), f)
    }
}

/// A map of values shown readably in `Debug` output.
pub(crate) struct ReadableMap<'a>(pub &'a IndexMap<String, Value>);

impl fmt::Debug for ReadableMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, Readable(v))))
            .finish()
    }
}

fn readable_config(c: &CheckpointConfig) -> String {
    format!(
        "{}/{}/{}",
        c.thread_id,
        c.ns(),
        c.checkpoint_id.as_deref().unwrap_or("-")
    )
}

impl fmt::Debug for TaskStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskStart")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("input", &Readable(&self.input))
            .field("triggers", &self.triggers)
            .finish()
    }
}

impl fmt::Debug for TaskResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskResult")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("error", &self.error.as_ref().map(Readable))
            .field("result", &ReadableMap(&self.result))
            .field("interrupts", &self.interrupts)
            .finish()
    }
}

impl fmt::Debug for TaskEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskEvent::Start(t) => t.fmt(f),
            TaskEvent::Result(t) => t.fmt(f),
        }
    }
}

impl fmt::Debug for CheckpointTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckpointTask")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("error", &self.error.as_ref().map(Readable))
            .field("result", &self.result.as_ref().map(ReadableMap))
            .field("interrupts", &self.interrupts)
            .finish()
    }
}

impl fmt::Debug for CheckpointEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckpointEvent")
            .field("config", &readable_config(&self.config))
            .field(
                "parent_config",
                &self.parent_config.as_ref().map(readable_config),
            )
            .field("values", &ReadableMap(&self.values))
            .field("metadata", &Readable(&self.metadata.to_value()))
            .field("next", &self.next)
            .field("tasks", &self.tasks)
            .finish()
    }
}

impl fmt::Debug for DebugPayload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DebugPayload::Checkpoint(c) => c.fmt(f),
            DebugPayload::Task(t) => t.fmt(f),
            DebugPayload::TaskResult(t) => t.fmt(f),
        }
    }
}

impl fmt::Debug for DebugEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DebugEvent")
            .field("step", &self.step)
            .field("timestamp", &self.timestamp)
            .field("payload", &self.payload)
            .finish()
    }
}

impl fmt::Debug for MessageMetadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageMetadata")
            .field("thread_id", &self.thread_id)
            .field("langgraph_step", &self.langgraph_step)
            .field("langgraph_node", &self.langgraph_node)
            .field("langgraph_triggers", &self.langgraph_triggers)
            .field(
                "langgraph_path",
                &Readable(&Value::List(self.langgraph_path.clone().into())),
            )
            .field("langgraph_checkpoint_ns", &self.langgraph_checkpoint_ns)
            .field("checkpoint_ns", &self.checkpoint_ns)
            .field("tags", &self.tags)
            .field("extra", &Readable(&Value::Map(self.extra.clone())))
            .finish()
    }
}
