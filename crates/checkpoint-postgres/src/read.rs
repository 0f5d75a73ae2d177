//! Reading: `get_tuple` and `list`, each one query that brings the blobs and writes along.
//!
//! The query of docs/format.md#postgres joins every checkpoint row with the blobs of its own
//! `channel_versions` and with its writes. Python aggregates each into one
//! two-dimensional array; the driver here reads one-dimensional arrays only, so each
//! column is aggregated on its own, in the same pass (the arrays of one lateral subquery
//! are built from the same rows in the same order). Writes are sorted here by
//! `(task_path, task_id, idx)`. A checkpoint of format 3 or older gets its parent's
//! `__pregel_tasks` writes as a `__pregel_tasks` channel value, as Python's reader does.
//! `get_tuple` runs the variant of [`crate::cache`], which leaves out the bytes of the
//! blobs the saver's cache holds ([`crate::cache`]); a listing reads every blob.
//!
//! Decoding (JSONB text, blobs, writes) is CPU work proportional to the row: it runs on
//! tokio's blocking pool ([`off_runtime`]), never on an async worker, so that reading a
//! wide row does not stall the other tasks of the runtime.

use std::sync::Arc;

use deadpool_postgres::Client;
use stategraph_checkpoint::list_cursor::{ListCursor, RowKey};
use stategraph_checkpoint::serde::msgpack::DecodeMemo;
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::version_gen::VersionGenerator;
use stategraph_checkpoint::{
    CheckpointConfig, CheckpointMetadata, CheckpointTuple, Error, ListOptions, PendingWrite,
    Result, Value, CHECKPOINT_FORMAT,
};
use tokio_postgres::Row;

use crate::cache::{self, BlobCache};
use crate::error::{col, pg};
use crate::json;
use crate::layout::{decode_blobs, rebuild, JoinedBlob};
use crate::query::{list_query, some_id, ListPage};
use crate::sql::{self, PENDING_SENDS, SELECT};

/// The channel format ≤ 3 checkpoints get their parent's sends in.
const TASKS: &str = "__pregel_tasks";

/// What a reader needs besides the connection.
pub(crate) struct Reader<'a> {
    pub(crate) client: &'a Client,
    pub(crate) serde: &'a Arc<dyn Serializer>,
    /// The saver's memo of recently decoded long lists ("Decode once", docs/design.md).
    pub(crate) memo: &'a Arc<DecodeMemo>,
    /// The saver's decoded-blob cache ([`crate::cache`]).
    pub(crate) cache: &'a BlobCache,
    pub(crate) versions: &'a VersionGenerator,
}

impl Reader<'_> {
    /// `get_tuple`: the addressed checkpoint, else the greatest id of `(thread, ns)`;
    /// the blobs the saver's cache holds are not moved ([`crate::cache`]).
    pub(crate) async fn get_tuple(
        &self,
        config: &CheckpointConfig,
    ) -> Result<Option<CheckpointTuple>> {
        let (thread, ns) = (config.thread_id.as_str(), config.ns());
        let held = self.cache.held(thread, ns);
        let id = some_id(config.checkpoint_id.as_ref());
        let sql = sql::get_sql(id.is_some());
        let stmt = self.client.prepare_cached(sql).await.map_err(pg)?;
        let (c, v, i) = (&held.channels, &held.versions, &held.idents);
        let row = match id {
            Some(id) => {
                self.client
                    .query_opt(&stmt, &[c, v, i, &thread, &ns, &id])
                    .await
            }
            None => self.client.query_opt(&stmt, &[c, v, i, &thread, &ns]).await,
        }
        .map_err(pg)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (serde, memo) = (Arc::clone(self.serde), Arc::clone(self.memo));
        let fill = !self.cache.is_off();
        let read = off_runtime(move || {
            let read = cache::decode(&row, serde.as_ref(), &memo, &held, fill)?;
            let tuple = tuple_of(&row, serde.as_ref(), read.values)?;
            Ok((tuple, read.hits, read.fills))
        })
        .await?;
        let (tuple, hits, fills) = read;
        let hits: Vec<(&str, &str)> = hits.iter().map(|(c, v)| (c.as_str(), v.as_str())).collect();
        self.cache.record(thread, ns, &hits, fills);
        Ok(Some(self.migrate(tuple).await?))
    }

    /// `list`: newest first, filtered and limited in SQL, in one query.
    pub(crate) async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        let mut cursor = ListCursor::new(config.cloned(), options.clone());
        let mut out = Vec::new();
        while !cursor.is_done() {
            out.extend(self.list_page(&mut cursor, None).await?);
        }
        Ok(out)
    }

    /// The next page of a listing, continuing after the last row `cursor` read: at most
    /// `rows` tuples (at least one), or all that are left when `rows` is `None`.
    pub(crate) async fn list_page(
        &self,
        cursor: &mut ListCursor,
        rows: Option<usize>,
    ) -> Result<Vec<CheckpointTuple>> {
        if cursor.done {
            return Ok(Vec::new());
        }
        let page = rows.map(|rows| ListPage {
            after: cursor.after.as_ref(),
            rows: rows.clamp(1, cursor.remaining),
        });
        let Some(query) = list_query(SELECT, cursor.config.as_ref(), &cursor.options, page) else {
            cursor.done = true;
            return Ok(Vec::new());
        };
        let stmt = self.client.prepare_cached(&query.sql).await.map_err(pg)?;
        let found = self
            .client
            .query(&stmt, &query.param_refs())
            .await
            .map_err(pg)?;
        let (serde, memo) = (Arc::clone(self.serde), Arc::clone(self.memo));
        let tuples = off_runtime(move || {
            found
                .iter()
                .map(|row| decode_row(row, serde.as_ref(), &memo))
                .collect::<Result<Vec<_>>>()
        })
        .await?;
        let mut out = Vec::with_capacity(tuples.len());
        for tuple in tuples {
            out.push(self.migrate(tuple).await?);
        }
        cursor.remaining = cursor.remaining.saturating_sub(out.len());
        match (page, out.last()) {
            (Some(page), Some(last)) if out.len() >= page.rows && cursor.remaining > 0 => {
                cursor.after = Some(RowKey {
                    checkpoint_id: last.config.checkpoint_id.clone().unwrap_or_default(),
                    thread_id: last.config.thread_id.clone(),
                    checkpoint_ns: last.config.ns().to_owned(),
                });
            }
            _ => cursor.done = true,
        }
        Ok(out)
    }

    /// A decoded row, with the sends of an old-format checkpoint migrated in.
    async fn migrate(&self, mut tuple: CheckpointTuple) -> Result<CheckpointTuple> {
        if tuple.checkpoint.v < CHECKPOINT_FORMAT {
            let parent = tuple
                .parent_config
                .as_ref()
                .and_then(|p| p.checkpoint_id.clone());
            if let Some(parent) = parent {
                let (thread, ns) = (tuple.config.thread_id.clone(), tuple.config.ns().to_owned());
                self.migrate_sends(&thread, &ns, &parent, &mut tuple.checkpoint)
                    .await?;
            }
        }
        Ok(tuple)
    }

    /// docs/format.md#older-checkpoint-formats: a format ≤ 3 checkpoint reads its parent's sends as
    /// `__pregel_tasks`, at
    /// the greatest of its versions (or a first version when it has none).
    async fn migrate_sends(
        &self,
        thread: &str,
        ns: &str,
        parent: &str,
        checkpoint: &mut stategraph_checkpoint::Checkpoint,
    ) -> Result<()> {
        let stmt = self
            .client
            .prepare_cached(PENDING_SENDS)
            .await
            .map_err(pg)?;
        let row = self
            .client
            .query_one(&stmt, &[&thread, &ns, &parent])
            .await
            .map_err(pg)?;
        let types: Vec<Option<String>> = col::<Option<_>>(&row, 0)?.unwrap_or_default();
        let blobs: Vec<Vec<u8>> = col::<Option<_>>(&row, 1)?.unwrap_or_default();
        if types.is_empty() {
            return Ok(());
        }
        let serde = Arc::clone(self.serde);
        let sends = off_runtime(move || {
            types
                .iter()
                .zip(&blobs)
                .map(|(t, b)| serde.loads_typed(t.as_deref().unwrap_or_default(), b))
                .collect::<Result<Vec<_>>>()
        })
        .await?;
        checkpoint
            .channel_values
            .insert(TASKS.to_owned(), Value::List(sends.into()));
        let version = match checkpoint.channel_versions.values().max() {
            Some(v) => v.clone(),
            None => self.versions.next(None),
        };
        checkpoint
            .channel_versions
            .insert(TASKS.to_owned(), version);
        Ok(())
    }
}

/// Decodes one row of [`SELECT`] (blocking work: run it through [`off_runtime`]); the
/// sends of an old-format checkpoint are migrated in afterwards ([`Reader::migrate`]).
fn decode_row(row: &Row, serde: &dyn Serializer, memo: &DecodeMemo) -> Result<CheckpointTuple> {
    let blobs = zip3(col(row, 6)?, col(row, 7)?, col(row, 8)?, "blob")?;
    let values = decode_blobs(blobs, serde, memo)?;
    tuple_of(row, serde, values)
}

/// The tuple of a row of [`select_columns!`] whose blob values are `values`.
pub(crate) fn tuple_of(
    row: &Row,
    serde: &dyn Serializer,
    values: Vec<(String, Value)>,
) -> Result<CheckpointTuple> {
    let thread: String = col(row, 0)?;
    let ns: String = col(row, 1)?;
    let id: String = col(row, 2)?;
    let parent: Option<String> = col(row, 3)?;
    let doc = json::parse(&col::<String>(row, 4)?)?;
    let metadata = CheckpointMetadata::from_value(json::parse(&col::<String>(row, 5)?)?)?;
    let checkpoint = rebuild(doc, values)?;
    let parent = parent.filter(|p| !p.is_empty());
    let pending_writes = writes(row, serde)?;
    Ok(CheckpointTuple {
        config: CheckpointConfig::for_checkpoint(thread.as_str(), ns.as_str(), id),
        parent_config: parent
            .map(|p| CheckpointConfig::for_checkpoint(thread.as_str(), ns.as_str(), p)),
        checkpoint,
        metadata,
        pending_writes,
    })
}

/// The writes of a row, decoded and sorted by `(task_path, task_id, idx)`.
fn writes(row: &Row, serde: &dyn Serializer) -> Result<Vec<PendingWrite>> {
    let task_ids: Vec<String> = col::<Option<_>>(row, 9)?.unwrap_or_default();
    let channels: Vec<String> = col::<Option<_>>(row, 10)?.unwrap_or_default();
    let types: Vec<Option<String>> = col::<Option<_>>(row, 11)?.unwrap_or_default();
    let blobs: Vec<Vec<u8>> = col::<Option<_>>(row, 12)?.unwrap_or_default();
    let paths: Vec<String> = col::<Option<_>>(row, 13)?.unwrap_or_default();
    let idxs: Vec<i32> = col::<Option<_>>(row, 14)?.unwrap_or_default();
    let n = task_ids.len();
    if [
        channels.len(),
        types.len(),
        blobs.len(),
        paths.len(),
        idxs.len(),
    ] != [n; 5]
    {
        return Err(Error::InvalidData("write arrays of unequal length".into()));
    }
    let mut rows: Vec<_> = (0..n).collect();
    rows.sort_by(|&a, &b| {
        (paths[a].as_str(), task_ids[a].as_str(), idxs[a]).cmp(&(
            paths[b].as_str(),
            task_ids[b].as_str(),
            idxs[b],
        ))
    });
    rows.into_iter()
        .map(|i| {
            let tag = types[i].as_deref().unwrap_or_default();
            Ok(PendingWrite {
                task_id: task_ids[i].clone(),
                channel: channels[i].clone(),
                value: serde.loads_typed(tag, &blobs[i])?,
            })
        })
        .collect()
}

/// Runs CPU-bound decoding on tokio's blocking pool (inline outside a runtime), so that an
/// async worker thread never spends a wide row's decoding time.
pub(crate) async fn off_runtime<T, F>(f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(f)
            .await
            .map_err(|e| Error::Backend(Box::new(e)))?,
        Err(_) => f(),
    }
}

/// Zips the three blob arrays of a row (all NULL when nothing joined).
fn zip3(
    channels: Option<Vec<String>>,
    types: Option<Vec<String>>,
    blobs: Option<Vec<Option<Vec<u8>>>>,
    what: &str,
) -> Result<Vec<JoinedBlob>> {
    let (channels, types, blobs) = (
        channels.unwrap_or_default(),
        types.unwrap_or_default(),
        blobs.unwrap_or_default(),
    );
    if channels.len() != types.len() || channels.len() != blobs.len() {
        return Err(Error::InvalidData(format!(
            "{what} arrays of unequal length"
        )));
    }
    Ok(channels
        .into_iter()
        .zip(types)
        .zip(blobs)
        .map(|((c, t), b)| (c, t, b))
        .collect())
}
