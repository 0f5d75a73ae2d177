//! What the stored writes say about each task: finished, failed, interrupted
//! (docs/runtime.md#running-tasks).

use indexmap::IndexMap;
use stategraph_checkpoint::{Value, NULL_TASK_ID};

use crate::types::Interrupt;

/// Writes that record control flow rather than output.
pub const CONTROL_WRITES: [&str; 4] = [
    "__error__",
    "__error_source_node__",
    "__interrupt__",
    "__resume__",
];

/// The recorded state of one task.
#[derive(Clone, Debug, Default)]
pub struct TaskStatus {
    /// Its output writes (channel writes, `__no_writes__`, `__return__`).
    pub output: Vec<(String, Value)>,
    /// The interrupts it raised.
    pub interrupts: Vec<Interrupt>,
    /// Its error, as stored.
    pub error: Option<Value>,
}

impl TaskStatus {
    /// A task is finished when it recorded any output.
    pub fn finished(&self) -> bool {
        !self.output.is_empty()
    }
}

/// The status of every task that recorded writes (client writes excluded).
pub fn read_task_statuses<'a, I>(writes: I) -> IndexMap<String, TaskStatus>
where
    I: IntoIterator<Item = (&'a str, &'a str, &'a Value)>,
{
    let mut out: IndexMap<String, TaskStatus> = IndexMap::new();
    for (task_id, channel, value) in writes {
        if task_id == NULL_TASK_ID {
            continue;
        }
        let status = out.entry(task_id.to_owned()).or_default();
        match channel {
            "__interrupt__" => match value {
                Value::List(items) => status
                    .interrupts
                    .extend(items.iter().filter_map(Interrupt::from_value)),
                other => status.interrupts.extend(Interrupt::from_value(other)),
            },
            "__error__" => {
                if status.error.is_none() {
                    status.error = Some(value.clone());
                }
            }
            c if CONTROL_WRITES.contains(&c) => {}
            c => status.output.push((c.to_owned(), value.clone())),
        }
    }
    out
}
