//! Reading a [`SqliteSaver`](crate::SqliteSaver): `get_tuple` and `list`, decoding rows.
//!
//! Every read runs inside one read transaction (see [`crate::pool`]), so a checkpoint and
//! its pending writes come from the same snapshot.

use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::{params, params_from_iter, Connection, Row};
use stategraph_checkpoint::list_cursor::{ListCursor, RowKey};
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple, Error, ListOptions,
    PendingWrite, Result,
};

use crate::cache::{Answer, DecodedCache, RowId};
use crate::error::SqlResultExt;
use crate::json;
use crate::pool::Stamp;
use crate::query::{list_query, some_id, ListPage};
use crate::sql;

/// One checkpoint row, still encoded.
struct CheckpointRow {
    thread_id: String,
    checkpoint_ns: String,
    checkpoint_id: String,
    parent: Option<String>,
    tag: Option<String>,
    /// The encoded checkpoint; empty when `cached` holds it decoded.
    checkpoint: Vec<u8>,
    /// The length of the encoded checkpoint.
    encoded_len: usize,
    /// The checkpoint, when the cache held it for exactly these bytes.
    cached: Option<Arc<Checkpoint>>,
    metadata: Option<Vec<u8>>,
}

impl CheckpointRow {
    /// Reads the columns of `checkpoint_columns!` (in `sql.rs`); the checkpoint comes from `cache` when
    /// it holds this row with the same bytes (which are then not copied).
    fn from_row(row: &Row<'_>, cache: &DecodedCache) -> rusqlite::Result<CheckpointRow> {
        let id = RowId {
            thread_id: row.get(0)?,
            checkpoint_ns: row.get(1)?,
            checkpoint_id: row.get(2)?,
        };
        let tag: Option<String> = row.get(4)?;
        let encoded = match row.get_ref(5)? {
            ValueRef::Blob(b) | ValueRef::Text(b) => b,
            _ => &[],
        };
        let cached = tag.as_deref().and_then(|t| cache.get(&id, t, encoded));
        let checkpoint = match cached {
            Some(_) => Vec::new(),
            None => encoded.to_vec(),
        };
        Ok(CheckpointRow {
            encoded_len: encoded.len(),
            cached,
            checkpoint,
            thread_id: id.thread_id,
            checkpoint_ns: id.checkpoint_ns,
            checkpoint_id: id.checkpoint_id,
            parent: row.get(3)?,
            tag,
            metadata: bytes(row.get_ref(6)?),
        })
    }

    /// The checkpoint: the cached one, or decoded from the row (reusing the lists `cache`
    /// remembers) and then kept in `cache` when `fill`.
    fn shared_checkpoint(
        &mut self,
        serde: &dyn Serializer,
        cache: &DecodedCache,
        fill: bool,
    ) -> Result<Arc<Checkpoint>> {
        if let Some(checkpoint) = self.cached.take() {
            return Ok(checkpoint);
        }
        let tag = self
            .tag
            .as_deref()
            .ok_or_else(|| Error::InvalidData("checkpoint row has no type".into()))?;
        let checkpoint = Checkpoint::from_value(cache.decode(serde, tag, &self.checkpoint)?)?;
        let shared = Arc::new(checkpoint);
        if fill && cache.keeps(self.checkpoint.len()) {
            let id = RowId {
                thread_id: self.thread_id.clone(),
                checkpoint_ns: self.checkpoint_ns.clone(),
                checkpoint_id: self.checkpoint_id.clone(),
            };
            let encoded = std::mem::take(&mut self.checkpoint);
            cache.insert_owned(id, tag, encoded, Arc::clone(&shared));
        }
        Ok(shared)
    }

    /// The decoded metadata: `json.loads` of the column, `{}` when it is NULL.
    fn metadata(&self) -> Result<CheckpointMetadata> {
        match &self.metadata {
            Some(text) => CheckpointMetadata::from_value(json::from_json(text)?),
            None => Ok(CheckpointMetadata::default()),
        }
    }

    /// The tuple, with `config` as the caller sees it (a listing's: a decoded checkpoint
    /// is not kept in `cache`).
    fn into_tuple(
        mut self,
        conn: &Connection,
        serde: &dyn Serializer,
        config: CheckpointConfig,
        metadata: CheckpointMetadata,
        cache: &DecodedCache,
    ) -> Result<CheckpointTuple> {
        let checkpoint = Arc::unwrap_or_clone(self.shared_checkpoint(serde, cache, false)?);
        let (pending_writes, _) = pending_writes(
            conn,
            serde,
            &self.thread_id,
            &self.checkpoint_ns,
            &self.checkpoint_id,
        )?;
        let parent_config = self
            .parent
            .filter(|p| !p.is_empty())
            .map(|p| CheckpointConfig::for_checkpoint(self.thread_id, self.checkpoint_ns, p));
        Ok(CheckpointTuple {
            config,
            checkpoint,
            metadata,
            parent_config,
            pending_writes,
        })
    }
}

/// The bytes of a BLOB or TEXT column; `None` for NULL (and numbers, which no saver writes).
pub(crate) fn bytes(value: ValueRef<'_>) -> Option<Vec<u8>> {
    match value {
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
        _ => None,
    }
}

/// `get_tuple`: the addressed checkpoint, or the greatest id of `(thread, ns)`, in the
/// read transaction whose snapshot has `stamp`.
///
/// When an earlier read in a snapshot with the same stamp left its answer in `cache`, the
/// answer comes from there without a query (the database is provably the same). Otherwise
/// the row is read; its checkpoint comes from `cache` when it holds the row's bytes (and is
/// kept there when decoded), and the answer is left in `cache` for the next read.
pub(crate) fn get_tuple(
    conn: &Connection,
    serde: &dyn Serializer,
    cache: &DecodedCache,
    config: &CheckpointConfig,
    stamp: Stamp,
) -> Result<Option<CheckpointTuple>> {
    let ns = config.ns();
    let id = some_id(config.checkpoint_id.as_ref());
    let known = match id {
        Some(id) => Some(Some(id.to_owned())),
        None => cache.latest(&config.thread_id, ns, stamp),
    };
    match known {
        Some(None) => return Ok(None),
        Some(Some(checkpoint_id)) => {
            let row = RowId {
                thread_id: config.thread_id.clone(),
                checkpoint_ns: ns.to_owned(),
                checkpoint_id,
            };
            if let Some((checkpoint, answer)) = cache.answer(&row, stamp) {
                return Ok(Some(answered(config, row, &checkpoint, answer)));
            }
        }
        None => {}
    }
    let mut stmt;
    let mut rows = match id {
        Some(id) => {
            stmt = conn.prepare_cached(sql::GET_BY_ID).backend()?;
            stmt.query(params![config.thread_id, ns, id]).backend()?
        }
        None => {
            stmt = conn.prepare_cached(sql::GET_LATEST).backend()?;
            stmt.query(params![config.thread_id, ns]).backend()?
        }
    };
    let Some(row) = rows.next().backend()? else {
        if id.is_none() {
            cache.remember_latest(&config.thread_id, ns, stamp, None);
        }
        return Ok(None);
    };
    let mut row = CheckpointRow::from_row(row, cache).backend()?;
    let metadata = row.metadata()?;
    let metadata_len = row.metadata.as_ref().map_or(0, Vec::len);
    let checkpoint = row.shared_checkpoint(serde, cache, true)?;
    let (pending_writes, writes_len) = pending_writes(
        conn,
        serde,
        &row.thread_id,
        &row.checkpoint_ns,
        &row.checkpoint_id,
    )?;
    let id_of_row = RowId {
        thread_id: row.thread_id,
        checkpoint_ns: row.checkpoint_ns,
        checkpoint_id: row.checkpoint_id,
    };
    if id.is_none() {
        cache.remember_latest(
            &id_of_row.thread_id,
            &id_of_row.checkpoint_ns,
            stamp,
            Some(id_of_row.checkpoint_id.clone()),
        );
    }
    let answer = Answer {
        stamp,
        metadata,
        parent: row.parent,
        pending_writes,
        bytes: metadata_len + writes_len,
    };
    cache.remember_answer(&id_of_row, &checkpoint, answer.clone());
    Ok(Some(answered(config, id_of_row, &checkpoint, answer)))
}

/// The tuple `get_tuple` returns for row `id` with `config` as the caller gave it.
fn answered(
    config: &CheckpointConfig,
    id: RowId,
    checkpoint: &Arc<Checkpoint>,
    answer: Answer,
) -> CheckpointTuple {
    // As LangGraph does, an explicit id returns the caller's config as given.
    let own = match some_id(config.checkpoint_id.as_ref()) {
        Some(_) => config.clone(),
        None => CheckpointConfig::for_checkpoint(
            id.thread_id.as_str(),
            id.checkpoint_ns.as_str(),
            id.checkpoint_id.as_str(),
        ),
    };
    let parent_config = answer
        .parent
        .filter(|p| !p.is_empty())
        .map(|p| CheckpointConfig::for_checkpoint(id.thread_id, id.checkpoint_ns, p));
    CheckpointTuple {
        config: own,
        checkpoint: Checkpoint::clone(checkpoint),
        metadata: answer.metadata,
        parent_config,
        pending_writes: answer.pending_writes,
    }
}

/// How much one page of a listing reads at most.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PageSize {
    /// Rows scanned (matching the filter or not); at least 1.
    pub(crate) rows: usize,
    /// Encoded checkpoint bytes: the page ends after the row that reaches this.
    pub(crate) bytes: usize,
}

impl PageSize {
    /// No bound: the whole listing in one page (one query).
    pub(crate) const ALL: PageSize = PageSize {
        rows: usize::MAX,
        bytes: usize::MAX,
    };
}

/// `list`: every tuple at once, from one query; see [`crate::query`] for how the filter
/// and limit apply.
pub(crate) fn list(
    conn: &Connection,
    serde: &dyn Serializer,
    cache: &DecodedCache,
    config: Option<&CheckpointConfig>,
    options: &ListOptions,
) -> Result<Vec<CheckpointTuple>> {
    let mut cursor = ListCursor::new(config.cloned(), options.clone());
    let mut out = Vec::new();
    while !cursor.is_done() {
        out.extend(list_page(conn, serde, cache, &mut cursor, PageSize::ALL)?);
    }
    Ok(out)
}

/// The next page of a listing, continuing after the last row `cursor` scanned: newest
/// first, at most `size` rows scanned (at least one), with their pending writes. Rows are
/// looked up in `cache`, not added to it.
pub(crate) fn list_page(
    conn: &Connection,
    serde: &dyn Serializer,
    cache: &DecodedCache,
    cursor: &mut ListCursor,
    size: PageSize,
) -> Result<Vec<CheckpointTuple>> {
    let mut out = Vec::new();
    if cursor.done {
        return Ok(out);
    }
    let bounded = size.rows != usize::MAX;
    let page = bounded.then(|| ListPage {
        after: cursor.after.as_ref(),
        rows: size.rows.clamp(1, cursor.remaining),
    });
    let query = list_query(cursor.config.as_ref(), &cursor.options, page);
    let mut stmt = conn.prepare_cached(&query.sql).backend()?;
    let mut rows = stmt
        .query(params_from_iter(query.params.iter()))
        .backend()?;
    let (mut scanned, mut bytes) = (0usize, 0usize);
    let mut last: Option<RowKey> = None;
    while let Some(row) = rows.next().backend()? {
        let row = CheckpointRow::from_row(row, cache).backend()?;
        scanned += 1;
        bytes = bytes.saturating_add(row.encoded_len);
        if bounded {
            last = Some(RowKey {
                checkpoint_id: row.checkpoint_id.clone(),
                thread_id: row.thread_id.clone(),
                checkpoint_ns: row.checkpoint_ns.clone(),
            });
        }
        let metadata = row.metadata()?;
        if !query.check_in_rust || cursor.options.matches(&metadata) {
            let own = CheckpointConfig::for_checkpoint(
                row.thread_id.as_str(),
                row.checkpoint_ns.as_str(),
                row.checkpoint_id.as_str(),
            );
            out.push(row.into_tuple(conn, serde, own, metadata, cache)?);
            cursor.remaining -= 1;
            if cursor.remaining == 0 {
                cursor.done = true;
                return Ok(out);
            }
        }
        if bounded && (scanned >= size.rows || bytes >= size.bytes) {
            break;
        }
    }
    // A page that stopped short of its row bound only because of its byte bound goes on;
    // one that got fewer rows than it asked for was the last.
    let full = scanned >= size.rows || (bounded && bytes >= size.bytes);
    match last {
        Some(key) if full => cursor.after = Some(key),
        _ => cursor.done = true,
    }
    Ok(out)
}

/// The writes stored against one checkpoint, decoded, in read order, and their encoded
/// bytes.
fn pending_writes(
    conn: &Connection,
    serde: &dyn Serializer,
    thread_id: &str,
    ns: &str,
    checkpoint_id: &str,
) -> Result<(Vec<PendingWrite>, usize)> {
    let mut stmt = conn.prepare_cached(sql::PENDING_WRITES).backend()?;
    let mut rows = stmt
        .query(params![thread_id, ns, checkpoint_id])
        .backend()?;
    let (mut out, mut len) = (Vec::new(), 0);
    while let Some(row) = rows.next().backend()? {
        let task_id: String = row.get(0).backend()?;
        let channel: String = row.get(1).backend()?;
        let tag: Option<String> = row.get(2).backend()?;
        let tag = tag.ok_or_else(|| Error::InvalidData("write row has no type".into()))?;
        let value = match row.get_ref(3).backend()? {
            ValueRef::Blob(b) | ValueRef::Text(b) => b,
            _ => &[],
        };
        len += task_id.len() + channel.len() + value.len();
        out.push(PendingWrite {
            task_id,
            channel,
            value: serde.loads_typed(&tag, value)?,
        });
    }
    Ok((out, len))
}

#[cfg(test)]
mod tests {
    //! Query plans: the reads whose cost must not grow with the thread's length.

    use rusqlite::types::Value as Sql;
    use stategraph_checkpoint::{CheckpointConfig, ListOptions};

    use super::*;
    use crate::sql::CREATE_TABLES;

    /// `EXPLAIN QUERY PLAN` of `sql` with `n` NULL parameters, one line per step.
    fn plan(sql: &str, n: usize) -> String {
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch(CREATE_TABLES).expect("tables");
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect("explain");
        let params = vec![Sql::Null; n];
        let rows = stmt
            .query_map(params_from_iter(params.iter()), |r| r.get::<_, String>(3))
            .expect("plan");
        rows.map(|r| r.expect("plan row"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_latest_checkpoint_is_the_end_of_a_primary_key_range() {
        let plan = plan(sql::GET_LATEST, 2);
        assert!(
            plan.contains(
                "USING INDEX sqlite_autoindex_checkpoints_1 (thread_id=? AND checkpoint_ns=?)"
            ),
            "{plan}"
        );
        // No sort: the index gives the order, so LIMIT 1 reads one entry.
        assert!(
            !plan.contains("TEMP B-TREE") && !plan.contains("SCAN"),
            "{plan}"
        );
    }

    #[test]
    fn a_page_of_one_namespace_starts_at_its_key_in_the_primary_key() {
        let key = RowKey {
            checkpoint_id: "c".into(),
            thread_id: "t".into(),
            checkpoint_ns: String::new(),
        };
        let page = ListPage {
            after: Some(&key),
            rows: 16,
        };
        let filtered = ListOptions::default().filter("step", 1).limit(3);
        for options in [ListOptions::default(), filtered] {
            let q = list_query(
                Some(&CheckpointConfig::thread("t")),
                &options,
                Some(page.clone()),
            );
            let plan = plan(&q.sql, q.params.len());
            assert!(
                plan.contains("(thread_id=? AND checkpoint_ns=? AND checkpoint_id<?)"),
                "{plan}"
            );
            assert!(!plan.contains("TEMP B-TREE"), "{plan}");
        }
    }

    #[test]
    fn pending_writes_are_a_primary_key_range() {
        let plan = plan(sql::PENDING_WRITES, 3);
        assert!(
            plan.contains("(thread_id=? AND checkpoint_ns=? AND checkpoint_id=?)"),
            "{plan}"
        );
    }
}
