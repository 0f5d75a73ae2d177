//! The rows and ops a [`SqliteSaver`](crate::SqliteSaver) writes: a `put` or `put_writes`
//! validated and serialized before the writer connection is locked, then run by
//! [`crate::write`] inside its transaction (and checked there by [`crate::fence`]).

use stategraph_checkpoint::config::{validate_config, validate_key};
use stategraph_checkpoint::serde::Typed;
use stategraph_checkpoint::{CheckpointConfig, Error, Result};

/// A checkpoint row ready to be stored.
#[derive(Debug)]
pub(crate) struct NewCheckpoint {
    pub(crate) thread_id: String,
    pub(crate) checkpoint_ns: String,
    pub(crate) checkpoint_id: String,
    /// `config.checkpoint_id` of the `put`, stored as given (NULL when absent).
    pub(crate) parent: Option<String>,
    /// The whole checkpoint, `channel_values` included.
    pub(crate) checkpoint: Typed,
    /// The metadata as UTF-8 JSON text.
    pub(crate) metadata: Vec<u8>,
}

/// One write ready to be stored.
#[derive(Debug)]
pub(crate) struct NewWrite {
    pub(crate) idx: i64,
    pub(crate) channel: String,
    pub(crate) value: Typed,
}

/// Where a task's writes go.
#[derive(Debug)]
pub(crate) struct WriteTarget {
    pub(crate) thread_id: String,
    pub(crate) checkpoint_ns: String,
    pub(crate) checkpoint_id: String,
    pub(crate) task_id: String,
    pub(crate) task_path: String,
}

impl WriteTarget {
    /// The target of a `put_writes` of `task_id` on `config` (which must name its
    /// checkpoint), after checking the config and the task id.
    pub(crate) fn of(config: &CheckpointConfig, task_id: &str, task_path: &str) -> Result<Self> {
        validate_config(config).and(validate_key("task id", task_id))?;
        let checkpoint_id = config
            .checkpoint_id
            .clone()
            .ok_or_else(|| Error::InvalidConfig("put_writes needs a checkpoint_id".into()))?;
        Ok(WriteTarget {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.ns().to_owned(),
            checkpoint_id,
            task_id: task_id.to_owned(),
            task_path: task_path.to_owned(),
        })
    }
}

/// One `put` or `put_writes`, serialized and ready to run inside a write transaction.
#[derive(Debug)]
pub(crate) enum Op {
    /// A checkpoint row and the config of its `put` (for the fence).
    Put {
        config: CheckpointConfig,
        row: NewCheckpoint,
    },
    /// One task's write rows and the config of their `put_writes` (for the fence).
    Writes {
        config: CheckpointConfig,
        target: WriteTarget,
        rows: Vec<NewWrite>,
    },
}

impl Op {
    /// The serialized bytes it holds (its blobs and metadata).
    pub(crate) fn len(&self) -> usize {
        match self {
            Op::Put { row, .. } => row.checkpoint.bytes.len() + row.metadata.len(),
            Op::Writes { rows, .. } => rows.iter().map(|w| w.value.bytes.len()).sum(),
        }
    }
}
