//! The payloads of stream events, shaped as LangGraph streams them (docs/runtime.md#streams).

use indexmap::IndexMap;
use stategraph_checkpoint::{CheckpointConfig, CheckpointMetadata, Map, Value};

use super::status::read_task_statuses;
use super::task::Task;

/// `{"configurable": {checkpoint_ns, thread_id, checkpoint_id}}` as LangGraph streams it.
pub fn config_value(cfg: &CheckpointConfig) -> Value {
    let mut c = Map::with_capacity(3);
    c.insert("checkpoint_ns", cfg.ns());
    c.insert("thread_id", cfg.thread_id.as_str());
    if let Some(id) = &cfg.checkpoint_id {
        c.insert("checkpoint_id", id.as_str());
    }
    let mut m = Map::with_capacity(1);
    m.insert("configurable", c);
    Value::Map(m)
}

/// A values map as a payload.
pub fn values_payload(values: IndexMap<String, Value>) -> Value {
    Value::Map(
        values
            .into_iter()
            .map(|(k, v)| (Value::Str(k.into()), v))
            .collect(),
    )
}

/// Folds writes into `{channel: value}`, repeated channels as `{"$writes": [...]}`.
fn result_map(writes: &[(String, Value)], keys: &[String]) -> Map {
    let mut out = Map::new();
    for (c, v) in writes.iter().filter(|(c, _)| keys.contains(c)) {
        match out.remove(c) {
            None => {
                out.insert(c.as_str(), v.clone());
            }
            Some(Value::Map(m)) if m.get("$writes").is_some() => {
                let mut list = m
                    .get("$writes")
                    .and_then(Value::as_list)
                    .unwrap_or(&[])
                    .to_vec();
                list.push(v.clone());
                let mut w = Map::new();
                w.insert("$writes", Value::List(list.into()));
                out.insert(c.as_str(), w);
            }
            Some(prev) => {
                let mut w = Map::new();
                w.insert("$writes", Value::list(vec![prev, v.clone()]));
                out.insert(c.as_str(), w);
            }
        }
    }
    out
}

/// A task's result as `get_state` shows it: `{channel: value}`.
pub fn result_value(writes: &[(String, Value)]) -> Value {
    let keys: Vec<String> = writes.iter().map(|(c, _)| c.clone()).collect();
    Value::Map(result_map(writes, &keys))
}

/// The payload of a `checkpoints` event (and of a debug `checkpoint` event).
pub fn checkpoint_payload(
    config: &CheckpointConfig,
    parent: Option<&CheckpointConfig>,
    values: IndexMap<String, Value>,
    metadata: &CheckpointMetadata,
    tasks: &[Task],
    pending_writes: &[(String, String, Value)],
    output_keys: &[String],
) -> Value {
    let statuses = read_task_statuses(
        pending_writes
            .iter()
            .map(|(t, c, v)| (t.as_str(), c.as_str(), v)),
    );
    let mut m = Map::with_capacity(6);
    m.insert("config", config_value(config));
    m.insert(
        "parent_config",
        parent.map(config_value).unwrap_or_default(),
    );
    m.insert("values", values_payload(values));
    m.insert("metadata", metadata.to_value());
    m.insert(
        "next",
        Value::List(tasks.iter().map(|t| Value::from(t.name.as_str())).collect()),
    );
    let task_list = tasks
        .iter()
        .map(|t| {
            let status = statuses.get(&t.id);
            let mut tm = Map::with_capacity(5);
            tm.insert("id", t.id.as_str());
            tm.insert("name", t.name.as_str());
            let interrupts = Value::List(
                status
                    .map(|s| s.interrupts.iter().map(interrupt_dict).collect())
                    .unwrap_or_default(),
            );
            match status {
                Some(s) if s.error.is_some() => {
                    tm.insert("error", s.error.clone().unwrap_or_default());
                }
                Some(s) if s.finished() => {
                    tm.insert("result", Value::Map(result_map(&s.output, output_keys)));
                    tm.insert("interrupts", interrupts);
                }
                _ => {
                    tm.insert("interrupts", interrupts);
                }
            }
            tm.insert("state", Value::Nil);
            Value::Map(tm)
        })
        .collect();
    m.insert("tasks", Value::List(task_list));
    Value::Map(m)
}

/// `asdict(Interrupt)`: `{value, id}`.
pub fn interrupt_dict(i: &crate::types::Interrupt) -> Value {
    let mut m = Map::with_capacity(2);
    m.insert("value", i.value.clone());
    m.insert("id", i.id.as_str());
    Value::Map(m)
}

/// The interrupts recorded in `__interrupt__` writes (each a list, or a single value).
fn interrupt_items(writes: &[(String, Value)]) -> impl Iterator<Item = &Value> {
    writes
        .iter()
        .filter(|(c, _)| c == "__interrupt__")
        .flat_map(|(_, v)| match v {
            Value::List(items) => items.as_slice(),
            other => std::slice::from_ref(other),
        })
}

/// The payload of a task-start event.
pub fn task_start_payload(t: &Task) -> Value {
    let mut m = Map::with_capacity(4);
    m.insert("id", t.id.as_str());
    m.insert("name", t.name.as_str());
    m.insert("input", t.input.clone());
    m.insert(
        "triggers",
        Value::List(t.triggers.iter().map(|s| Value::from(s.as_str())).collect()),
    );
    Value::Map(m)
}

/// The payload of a task-result event.
pub fn task_result_payload(t: &Task, writes: &[(String, Value)], output_keys: &[String]) -> Value {
    let mut m = Map::with_capacity(5);
    m.insert("id", t.id.as_str());
    m.insert("name", t.name.as_str());
    m.insert(
        "error",
        writes
            .iter()
            .find(|(c, _)| c == "__error__")
            .map(|(_, v)| v.clone())
            .unwrap_or_default(),
    );
    // A called task's result is its `__return__` write.
    let mut keys = output_keys.to_vec();
    keys.push("__return__".to_owned());
    m.insert("result", Value::Map(result_map(writes, &keys)));
    let interrupts: Vec<Value> = interrupt_items(writes)
        .filter_map(crate::types::Interrupt::from_value)
        .map(|i| interrupt_dict(&i))
        .collect();
    m.insert("interrupts", Value::List(interrupts.into()));
    Value::Map(m)
}

/// The `updates` payload of one task: `{node: {channel: value}}`, `{node: None}` when it
/// wrote no output channel, a list when it wrote a channel twice.
pub fn updates_payload(
    t: &Task,
    writes: &[(String, Value)],
    output_keys: &[String],
    cached: bool,
) -> Option<Value> {
    let out: Vec<&(String, Value)> = writes
        .iter()
        .filter(|(c, _)| output_keys.contains(c))
        .collect();
    let repeated = out
        .iter()
        .enumerate()
        .any(|(i, (c, _))| out[..i].iter().any(|(d, _)| d == c));
    let value = if out.is_empty() {
        Value::Nil
    } else if repeated {
        Value::List(
            out.iter()
                .map(|(c, v)| {
                    let mut m = Map::new();
                    m.insert(c.as_str(), v.clone());
                    Value::Map(m)
                })
                .collect(),
        )
    } else {
        Value::Map(
            out.iter()
                .map(|(c, v)| (Value::from(c), v.clone()))
                .collect(),
        )
    };
    let mut m = Map::with_capacity(2);
    m.insert(t.name.as_str(), value);
    if cached {
        let mut md = Map::new();
        md.insert("cached", true);
        m.insert("__metadata__", md);
    }
    Some(Value::Map(m))
}

/// The `updates` payload of one task of a graph whose output is one channel's value (a
/// functional-API graph): `{node: value}`, the value being a called task's `__return__`
/// write, else what it wrote to the output channel (`None` when nothing).
pub fn single_output_updates_payload(
    t: &Task,
    writes: &[(String, Value)],
    output_keys: &[String],
    cached: bool,
) -> Value {
    let value = writes
        .iter()
        .find(|(c, _)| c == "__return__")
        .or_else(|| writes.iter().find(|(c, _)| output_keys.contains(c)))
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let mut m = Map::with_capacity(2);
    m.insert(t.name.as_str(), value);
    if cached {
        let mut md = Map::new();
        md.insert("cached", true);
        m.insert("__metadata__", md);
    }
    Value::Map(m)
}

/// The `updates` payload of an interrupt: `{"__interrupt__": [Interrupt, ...]}`.
pub fn interrupt_update(writes: &[(String, Value)]) -> Value {
    let items: Vec<Value> = interrupt_items(writes).cloned().collect();
    let mut m = Map::new();
    m.insert("__interrupt__", Value::List(items.into()));
    Value::Map(m)
}
