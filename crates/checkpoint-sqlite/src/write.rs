//! Writing a [`SqliteSaver`](crate::SqliteSaver): `put` and `put_writes`.
//!
//! Values are serialized by the caller before the writer connection is locked; each
//! function here runs inside the one transaction [`crate::pool::Pool::write`] opened.
//!
//! **Large values are written in place.** SQLite copies a bound blob (rusqlite binds with
//! `SQLITE_TRANSIENT`) and then copies it again into the row's record, so storing a
//! 200 MB encoding held three of it in memory at once. A row whose blobs reach
//! [`LARGE_BLOB`] is inserted with `zeroblob`s of the right lengths in their place (they
//! are the row's last columns, so SQLite writes them as zeroed pages without building
//! them in memory) and the bytes are then written into the stored row with incremental
//! blob I/O, page by page. The row is the same; only the memory differs.

use rusqlite::blob::ZeroBlob;
use rusqlite::types::ToSql;
use rusqlite::{params, Transaction, MAIN_DB};
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{Error, Result};

use crate::error::SqlResultExt;
use crate::op::{NewCheckpoint, NewWrite, Op, WriteTarget};
use crate::sql;

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
                // No writes store nothing and are not fenced, as on Postgres (and as
                // Python's savers, which skip an empty `put_writes`).
                let checked = if fencing && !rows.is_empty() {
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

/// From this many bytes in one row's blobs on, the row is written in place (see the
/// module docs): 1 MiB.
pub(crate) const LARGE_BLOB: usize = 1 << 20;

/// A blob to bind: its bytes, or a `zeroblob` of its length when the row is large.
///
/// The length converts to whatever `ZeroBlob` holds in the rusqlite in use (`i32` up to
/// 0.3x, `u64` later; the crate accepts both, see Cargo.toml); a blob too long for it is
/// refused before SQLite sees it (SQLite's own limit is lower still).
fn blob(bytes: &[u8], large: bool) -> Result<Box<dyn ToSql + '_>> {
    if !large {
        return Ok(Box::new(bytes));
    }
    let len = bytes.len().try_into().map_err(|_| {
        Error::Encode(format!(
            "a value of {} bytes is longer than a SQLite blob can be",
            bytes.len()
        ))
    })?;
    Ok(Box::new(ZeroBlob(len)))
}

/// Writes `bytes` into the `column` of the row `rowid` of `table` (stored with a
/// `zeroblob` of their length).
fn fill_blob(
    tx: &Transaction<'_>,
    table: &str,
    column: &str,
    rowid: i64,
    bytes: &[u8],
) -> Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    let mut blob = tx
        .blob_open(MAIN_DB, table, column, rowid, false)
        .backend()?;
    blob.write_at(bytes, 0).backend()
}

/// `INSERT OR REPLACE`, as LangGraph's `put`: re-putting an id replaces the row.
pub(crate) fn put(tx: &Transaction<'_>, cp: &NewCheckpoint) -> Result<()> {
    let mut stmt = tx.prepare_cached(sql::PUT).backend()?;
    let large = cp.checkpoint.bytes.len() + cp.metadata.len() >= LARGE_BLOB;
    stmt.execute(params![
        cp.thread_id,
        cp.checkpoint_ns,
        cp.checkpoint_id,
        cp.parent,
        cp.checkpoint.tag.as_ref(),
        blob(&cp.checkpoint.bytes, large)?,
        blob(&cp.metadata, large)?,
    ])
    .backend()?;
    if large {
        let rowid = tx.last_insert_rowid();
        fill_blob(tx, "checkpoints", "checkpoint", rowid, &cp.checkpoint.bytes)?;
        fill_blob(tx, "checkpoints", "metadata", rowid, &cp.metadata)?;
    }
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
    let mut replace = tx.prepare_cached(sql::REPLACE_WRITE).backend()?;
    let mut ignore = tx.prepare_cached(sql::IGNORE_WRITE).backend()?;
    for w in writes {
        let stmt = if w.idx < 0 { &mut replace } else { &mut ignore };
        let large = w.value.bytes.len() >= LARGE_BLOB;
        let stored = stmt
            .execute(params![
                target.thread_id,
                target.checkpoint_ns,
                target.checkpoint_id,
                target.task_id,
                target.task_path,
                w.idx,
                w.channel,
                w.value.tag.as_ref(),
                blob(&w.value.bytes, large)?,
            ])
            .backend()?;
        // An ignored write stored nothing (and set no rowid).
        if large && stored > 0 {
            let rowid = tx.last_insert_rowid();
            fill_blob(tx, "writes", "value", rowid, &w.value.bytes)?;
        }
    }
    Ok(())
}
