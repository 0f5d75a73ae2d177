//! Writing a [`SqliteSaver`](crate::SqliteSaver): `put`, `put_writes`, `delete_thread`.
//!
//! Values are serialized by the caller before the writer connection is locked; each
//! function here runs inside the one transaction [`crate::pool::Pool::write`] opened.

use rusqlite::{params, Transaction};
use stategraph_checkpoint::serde::{Serializer, Typed};
use stategraph_checkpoint::{CheckpointConfig, Error, Result};

use crate::error::SqlResultExt;

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

/// Runs `ops` in order inside the caller's transaction, each fenced when `fencing`.
///
/// Returns `Ok(None)` when every op was stored, `Ok(Some(conflict))` when the fence
/// refused an op: the ops before it are stored (the caller commits them), nothing of the
/// refused op nor of the ops after it is. Any other error is returned as `Err` (the caller
/// rolls the whole transaction back).
pub(crate) fn apply(
    tx: &Transaction<'_>,
    ops: &[Op],
    fencing: bool,
    serde: &dyn Serializer,
) -> Result<Option<Error>> {
    for op in ops {
        let checked = match op {
            Op::Put { config, row } => {
                let checked = if fencing {
                    crate::fence::check_put(tx, config, row)
                } else {
                    Ok(())
                };
                checked.and_then(|()| put(tx, row))
            }
            Op::Writes {
                config,
                target,
                rows,
            } => {
                let checked = if fencing {
                    crate::fence::check_writes(tx, config, target, rows, serde)
                } else {
                    Ok(())
                };
                checked.and_then(|()| put_writes(tx, target, rows))
            }
        };
        match checked {
            Ok(()) => {}
            Err(conflict @ Error::Conflict(_)) => return Ok(Some(conflict)),
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// `INSERT OR REPLACE`, as LangGraph's `put`: re-putting an id replaces the row.
pub(crate) fn put(tx: &Transaction<'_>, cp: &NewCheckpoint) -> Result<()> {
    let mut stmt = tx
        .prepare_cached(
            "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
             parent_checkpoint_id, type, checkpoint, metadata) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .backend()?;
    stmt.execute(params![
        cp.thread_id,
        cp.checkpoint_ns,
        cp.checkpoint_id,
        cp.parent,
        cp.checkpoint.tag.as_ref(),
        cp.checkpoint.bytes,
        cp.metadata,
    ])
    .backend()?;
    Ok(())
}

/// Stores one task's writes by the rule of the trait, write by write: a reserved
/// (negative) index replaces the stored row (`INSERT OR REPLACE`), a normal index keeps it
/// (`INSERT OR IGNORE`).
pub(crate) fn put_writes(
    tx: &Transaction<'_>,
    target: &WriteTarget,
    writes: &[NewWrite],
) -> Result<()> {
    const COLUMNS: &str = "INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, \
         task_path, idx, channel, type, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    let mut replace = tx
        .prepare_cached(&format!("INSERT OR REPLACE {COLUMNS}"))
        .backend()?;
    let mut ignore = tx
        .prepare_cached(&format!("INSERT OR IGNORE {COLUMNS}"))
        .backend()?;
    for w in writes {
        let stmt = if w.idx < 0 { &mut replace } else { &mut ignore };
        stmt.execute(params![
            target.thread_id,
            target.checkpoint_ns,
            target.checkpoint_id,
            target.task_id,
            target.task_path,
            w.idx,
            w.channel,
            w.value.tag.as_ref(),
            w.value.bytes,
        ])
        .backend()?;
    }
    Ok(())
}

/// Removes every checkpoint and write of a thread, in every namespace.
pub(crate) fn delete_thread(tx: &Transaction<'_>, thread_id: &str) -> Result<()> {
    for table in ["checkpoints", "writes"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE thread_id = ?1"),
            [thread_id],
        )
        .backend()?;
    }
    Ok(())
}
