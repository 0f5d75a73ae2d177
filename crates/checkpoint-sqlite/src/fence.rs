//! The fence on SQLite: one writer per thread, checked inside the write transaction.
//!
//! The rule is the one every fenced stategraph saver applies ([`stategraph_checkpoint::fence`]):
//! a `put` whose parent is no longer the head of its `(thread, namespace)` is refused with
//! [`stategraph_checkpoint::Error::Conflict`] (unless it starts a deliberate branch or
//! re-puts the same checkpoint), and so is a `put_writes` against a checkpoint another
//! run has moved past, or one that would store a different result for a task whose
//! result is already stored.
//!
//! # How
//!
//! Every write runs in one `BEGIN IMMEDIATE` transaction ([`crate::pool::Pool::write`]),
//! which takes SQLite's write lock before its first statement: from that moment no other
//! connection, in this process or another, can commit anything to the file until this
//! transaction ends. The checks below read the rows inside that transaction, so what they
//! see is what the insert that follows them lands on; and they run before any insert of
//! the call, so a refused call stores nothing. Each check is an index lookup on the
//! primary keys of LangGraph's tables (the child lookup scans only the ids after the
//! checkpoint, since children have greater ids); no table, column or index is added, so
//! the file stays exactly what Python's saver makes and reads, and a fenced saver, an
//! unfenced one and Python's can share it (only fenced writers are refused, checked
//! against every row).

use rusqlite::{params, OptionalExtension, Transaction};
use stategraph_checkpoint::fence::{self, PutState, StoredWrite};
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{CheckpointConfig, Result};

use crate::error::SqlResultExt;
use crate::op::{NewCheckpoint, NewWrite, WriteTarget};
use crate::sql;

/// Decides a fenced put inside its transaction; `Err(Conflict)` stores nothing.
pub(crate) fn check_put(
    tx: &Transaction<'_>,
    config: &CheckpointConfig,
    cp: &NewCheckpoint,
) -> Result<()> {
    if stategraph_checkpoint::starts_branch(config) {
        return Ok(());
    }
    let head: Option<String> = tx
        .prepare_cached(sql::HEAD)
        .backend()?
        .query_row(params![cp.thread_id, cp.checkpoint_ns], |row| row.get(0))
        .backend()?;
    if head == cp.parent {
        return Ok(());
    }
    let existing: Option<Option<String>> = tx
        .prepare_cached(sql::STORED_PARENT)
        .backend()?
        .query_row(
            params![cp.thread_id, cp.checkpoint_ns, cp.checkpoint_id],
            |row| row.get(0),
        )
        .optional()
        .backend()?;
    let state = PutState {
        head: head.as_deref(),
        existing_parent: existing.as_ref().map(Option::as_deref),
    };
    fence::check_put(config, &cp.checkpoint_id, state)
}

/// Decides a fenced `put_writes` inside its transaction, before any of its rows is
/// inserted; `Err(Conflict)` stores nothing of the call.
pub(crate) fn check_writes(
    tx: &Transaction<'_>,
    config: &CheckpointConfig,
    target: &WriteTarget,
    writes: &[NewWrite],
    serde: &dyn Serializer,
) -> Result<()> {
    let has_child: bool = tx
        .prepare_cached(sql::HAS_CHILD)
        .backend()?
        .query_row(
            params![target.thread_id, target.checkpoint_ns, target.checkpoint_id],
            |row| row.get(0),
        )
        .backend()?;
    fence::check_writes_target(config, has_child)?;
    let mut stored = tx.prepare_cached(sql::STORED_WRITE).backend()?;
    for w in writes.iter().filter(|w| w.idx >= 0) {
        let row: Option<(String, Option<String>, Option<Vec<u8>>)> = stored
            .query_row(
                params![
                    target.thread_id,
                    target.checkpoint_ns,
                    target.checkpoint_id,
                    target.task_id,
                    w.idx
                ],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()
            .backend()?;
        if let Some((channel, tag, bytes)) = row {
            let old = StoredWrite {
                channel: &channel,
                tag: tag.as_deref().unwrap_or(""),
                bytes: bytes.as_deref().unwrap_or(&[]),
            };
            fence::check_repeated_write(
                config,
                &target.task_id,
                w.idx,
                (&w.channel, &w.value),
                old,
                serde,
            )?;
        }
    }
    Ok(())
}
