//! `StateSnapshot`: the state of a thread at one checkpoint, as `get_state` shows it.

use indexmap::IndexMap;
use stategraph_checkpoint::{CheckpointConfig, CheckpointMetadata, Value};

use super::task::TaskPath;
use crate::types::Interrupt;

/// A task of a snapshot: what ran (or will run) from this checkpoint, and how it went.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskInfo {
    /// The task id.
    pub id: String,
    /// The node.
    pub name: String,
    /// The task path.
    pub path: TaskPath,
    /// The stored error, if the task failed.
    pub error: Option<Value>,
    /// Its interrupts (in a live snapshot, only those still waiting for an answer).
    pub interrupts: Vec<Interrupt>,
    /// For a subgraph node: its namespace's config, or its whole state when asked for.
    pub state: Option<TaskState>,
    /// Its writes to output channels, when it finished.
    pub result: Option<Value>,
}

/// The state of a subgraph task in a snapshot.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskState {
    /// The config of the subgraph's namespace (thread and namespace).
    Config(Box<CheckpointConfig>),
    /// The subgraph's own snapshot (`get_state` with subgraphs).
    Snapshot(Box<StateSnapshot>),
}

/// The state of a thread at a checkpoint (LangGraph's `StateSnapshot`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StateSnapshot {
    /// The output channels' values.
    pub values: IndexMap<String, Value>,
    /// The nodes that run next.
    pub next: Vec<String>,
    /// The checkpoint's config (`None` for a thread without checkpoints).
    pub config: Option<CheckpointConfig>,
    /// Its metadata.
    pub metadata: Option<CheckpointMetadata>,
    /// Its timestamp.
    pub created_at: Option<String>,
    /// The parent checkpoint's config.
    pub parent_config: Option<CheckpointConfig>,
    /// The tasks of the step that starts here.
    pub tasks: Vec<TaskInfo>,
    /// All the tasks' interrupts.
    pub interrupts: Vec<Interrupt>,
}
