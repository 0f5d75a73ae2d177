//! The raw entry points of [`SqliteSaver`]: encoded parts in, stored bytes out.
//!
//! For a caller that encodes values itself (see [`stategraph_checkpoint::raw`]): the pair
//! of the whole checkpoint and the pair of each write are stored as given, and read back as
//! stored ([`RawState::Whole`], the metadata as its JSON text), so no channel value is
//! decoded or encoded here. The rows, the validation, the fence and the transactions are
//! those of the trait methods ([`crate::write::apply`]).
//!
//! These methods block the calling thread on SQLite (the trait methods hop to tokio's
//! blocking pool instead): call them from a thread that may block.

use rusqlite::types::ValueRef;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, Row};
use stategraph_checkpoint::config::{validate_config, validate_key};
use stategraph_checkpoint::raw::{RawMetadata, RawState, RawTuple, RawWrite};
use stategraph_checkpoint::serde::Typed;
use stategraph_checkpoint::{
    write_index, CheckpointConfig, CheckpointMetadata, Error, ListOptions, Result,
};

use crate::error::{Scope, SqlResultExt};
use crate::op::{NewCheckpoint, NewWrite, Op, WriteTarget};
use crate::query::{list_query, some_id};
use crate::sql;
use crate::{json, write, SqliteSaver};

impl SqliteSaver {
    /// Stores a checkpoint from the pair of the whole checkpoint (`channel_values`
    /// included; its id is `checkpoint_id`), as
    /// [`CheckpointSaver::put`](stategraph_checkpoint::CheckpointSaver::put) stores it:
    /// metadata as JSON text, parent `config.checkpoint_id`, fenced when the fence is on.
    pub fn put_raw(
        &self,
        config: &CheckpointConfig,
        checkpoint_id: &str,
        checkpoint: Typed,
        metadata: &CheckpointMetadata,
    ) -> Result<CheckpointConfig> {
        validate_config(config).and(validate_key("checkpoint id", checkpoint_id))?;
        let row = NewCheckpoint {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.ns().to_owned(),
            checkpoint_id: checkpoint_id.to_owned(),
            parent: config.checkpoint_id.clone(),
            checkpoint,
            metadata: json::to_json(&metadata.for_put(config).to_value())?.into_bytes(),
        };
        let scope = || Scope::thread("put_raw", "checkpoints", &config.thread_id);
        self.run_raw(
            Op::Put {
                config: config.clone(),
                row,
            },
            scope,
        )?;
        Ok(CheckpointConfig::for_checkpoint(
            config.thread_id.as_str(),
            config.ns(),
            checkpoint_id,
        ))
    }

    /// Stores one task's writes, each `(channel, value pair)`, by the rule and the fence of
    /// [`CheckpointSaver::put_writes`](stategraph_checkpoint::CheckpointSaver::put_writes).
    pub fn put_writes_raw(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, Typed)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        let target = WriteTarget::of(config, task_id, task_path)?;
        let rows = writes
            .into_iter()
            .enumerate()
            .map(|(i, (channel, value))| NewWrite {
                idx: write_index(&channel, i),
                channel,
                value,
            })
            .collect();
        let scope = || Scope::thread("put_writes_raw", "writes", &config.thread_id);
        self.run_raw(
            Op::Writes {
                config: config.clone(),
                target,
                rows,
            },
            scope,
        )
    }

    /// The tuple [`CheckpointSaver::get_tuple`](stategraph_checkpoint::CheckpointSaver::get_tuple)
    /// reads, as stored: one snapshot holds the checkpoint row and its writes.
    pub fn get_tuple_raw(&self, config: &CheckpointConfig) -> Result<Option<RawTuple>> {
        validate_config(config)?;
        let scope = || Scope::thread("get_tuple_raw", "checkpoints, writes", &config.thread_id);
        let read = self.pool.read(|conn| {
            let ns = config.ns();
            let found = match some_id(config.checkpoint_id.as_ref()) {
                Some(id) => conn
                    .prepare_cached(sql::GET_BY_ID)
                    .backend()?
                    .query_row(params![config.thread_id, ns, id], raw_row)
                    .optional()
                    .backend()?,
                None => conn
                    .prepare_cached(sql::GET_LATEST)
                    .backend()?
                    .query_row(params![config.thread_id, ns], raw_row)
                    .optional()
                    .backend()?,
            };
            found.map(|row| row.into_tuple(conn)).transpose()
        });
        read.map_err(|e| self.name_error(e, scope()))
    }

    /// The tuples [`CheckpointSaver::list`](stategraph_checkpoint::CheckpointSaver::list)
    /// reads, in its order, as stored, from one query in one snapshot. The metadata is
    /// decoded only to check a filter.
    pub fn list_raw(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<RawTuple>> {
        config.map_or(Ok(()), validate_config)?;
        let mut remaining = options.limit.unwrap_or(usize::MAX);
        if remaining == 0 {
            return Ok(Vec::new());
        }
        let scope = || match config {
            Some(config) => Scope::thread("list_raw", "checkpoints, writes", &config.thread_id),
            None => Scope::every_thread("list_raw", "checkpoints, writes"),
        };
        let read = self.pool.read(|conn| {
            let query = list_query(config, options, None);
            let mut stmt = conn.prepare_cached(&query.sql).backend()?;
            let mut rows = stmt
                .query(params_from_iter(query.params.iter()))
                .backend()?;
            let mut out = Vec::new();
            while let Some(row) = rows.next().backend()? {
                let row = raw_row(row).backend()?;
                if query.check_in_rust && !options.matches(&row.decoded_metadata()?) {
                    continue;
                }
                out.push(row.into_tuple(conn)?);
                remaining -= 1;
                if remaining == 0 {
                    break;
                }
            }
            Ok(out)
        });
        read.map_err(|e| self.name_error(e, scope()))
    }

    /// Runs one serialized op in its own write transaction, fenced when the fence is on; a
    /// failure names `scope`.
    fn run_raw(&self, op: Op, scope: impl FnOnce() -> Scope) -> Result<()> {
        let refused = self
            .pool
            .write(|tx| write::apply(tx, std::slice::from_ref(&op), self.fencing, &*self.serde))
            .map_err(|e| self.name_error(e, scope()))?;
        refused.map_or(Ok(()), Err)
    }
}

/// One checkpoint row as stored.
struct RawRow {
    thread_id: String,
    checkpoint_ns: String,
    checkpoint_id: String,
    parent: Option<String>,
    tag: Option<String>,
    checkpoint: Vec<u8>,
    metadata: Option<Vec<u8>>,
}

impl RawRow {
    /// The metadata decoded (for a filter): `json.loads` of the column, `{}` when NULL.
    fn decoded_metadata(&self) -> Result<CheckpointMetadata> {
        match &self.metadata {
            Some(text) => CheckpointMetadata::from_value(json::from_json(text)?),
            None => Ok(CheckpointMetadata::default()),
        }
    }

    /// The tuple, with the row's writes read in the same snapshot.
    fn into_tuple(self, conn: &Connection) -> Result<RawTuple> {
        let tag = self
            .tag
            .ok_or_else(|| Error::InvalidData("checkpoint row has no type".into()))?;
        let mut stmt = conn.prepare_cached(sql::PENDING_WRITES).backend()?;
        let mut rows = stmt
            .query(params![
                self.thread_id,
                self.checkpoint_ns,
                self.checkpoint_id
            ])
            .backend()?;
        let mut pending_writes = Vec::new();
        while let Some(row) = rows.next().backend()? {
            let tag: Option<String> = row.get(2).backend()?;
            let tag = tag.ok_or_else(|| Error::InvalidData("write row has no type".into()))?;
            pending_writes.push(RawWrite {
                task_id: row.get(0).backend()?,
                channel: row.get(1).backend()?,
                value: Typed::new(tag, bytes(row.get_ref(3).backend()?).unwrap_or_default()),
            });
        }
        Ok(RawTuple {
            thread_id: self.thread_id,
            checkpoint_ns: self.checkpoint_ns,
            checkpoint_id: self.checkpoint_id,
            parent_checkpoint_id: self.parent.filter(|p| !p.is_empty()),
            state: RawState::Whole(Typed::new(tag, self.checkpoint)),
            metadata: RawMetadata::Json(self.metadata),
            pending_writes,
        })
    }
}

/// Reads the columns of `checkpoint_columns!` (in `sql.rs`).
fn raw_row(row: &Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        thread_id: row.get(0)?,
        checkpoint_ns: row.get(1)?,
        checkpoint_id: row.get(2)?,
        parent: row.get(3)?,
        tag: row.get(4)?,
        checkpoint: bytes(row.get_ref(5)?).unwrap_or_default(),
        metadata: bytes(row.get_ref(6)?),
    })
}

/// The bytes of a BLOB or TEXT column; `None` for NULL (and numbers, which no saver writes).
fn bytes(value: ValueRef<'_>) -> Option<Vec<u8>> {
    match value {
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
        _ => None,
    }
}
