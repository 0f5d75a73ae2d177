//! The raw entry points of [`PostgresSaver`]: encoded parts in, stored bytes out.
//!
//! For a caller that encodes values itself (see [`stategraph_checkpoint::raw`]), as
//! LangGraph's own `PostgresSaver.put` splits a checkpoint: the caller sends the checkpoint
//! with its primitive channel values inline (nil, booleans, numbers, strings; a DeltaChannel
//! snapshot replaced by `true`) and the pair of each other value whose channel is in
//! `new_versions`. The inline part goes through the same [layout](crate::layout) rules as
//! a trait put (long strings, NaN and strings with NUL become blobs, the carried long
//! strings of unchanged channels), and the caller's pairs become blob rows as they are;
//! the statement, the fence and the rows are those of the trait's put. Writes are stored
//! as given.
//!
//! Reads return the row as stored: the checkpoint document as JSON text, the joined blobs
//! as pairs, the metadata as JSON text, the writes as pairs; nothing is decoded. A format
//! ≤ 3 checkpoint is returned unmigrated (its parent's sends are not added): a caller that
//! finds one reads it through the trait's `get_tuple`, which migrates it.

use stategraph_checkpoint::config::{validate_config, validate_key};
use stategraph_checkpoint::raw::{RawMetadata, RawState, RawTuple, RawWrite};
use stategraph_checkpoint::serde::{Typed, TAG_EMPTY};
use stategraph_checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, Error, ListOptions, Result,
};
use tokio_postgres::Row;

use crate::error::col;
use crate::error::pg;
use crate::layout::{split, BlobRow};
use crate::query::{list_query, some_id};
use crate::sql::SELECT;
use crate::{write, PostgresSaver};

impl PostgresSaver {
    /// Stores a checkpoint from its encoded parts: `plain` is the checkpoint with only its
    /// inline channel values (see the module docs), `values` the pair of each other value
    /// whose channel is in `new_versions` (a pair for a channel outside `new_versions` is
    /// not stored: its blob is already there, as in the trait's put). The metadata is
    /// stored as the trait's put stores it.
    pub async fn put_raw(
        &self,
        config: &CheckpointConfig,
        plain: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
        values: Vec<(String, Typed)>,
    ) -> Result<CheckpointConfig> {
        validate_config(config).and(validate_key("checkpoint id", &plain.id))?;
        let mut split = split(plain, new_versions, self.serde.as_ref())?;
        for (channel, typed) in values {
            if let Some(version) = new_versions.get(&channel) {
                split.blobs.push(BlobRow {
                    channel,
                    version: version.as_text(),
                    tag: typed.tag.into_owned(),
                    bytes: typed.bytes,
                });
            }
        }
        let metadata = write::metadata_json(config, metadata)?;
        let client = self.conn.get_writer("put").await?;
        let fenced = self.fencing && !stategraph_checkpoint::starts_branch(config);
        let put = write::put_split(&client, fenced, config, &plain.id, &split, &metadata);
        let done = self.conn.within(put).await;
        self.conn.finish("put", client, done)?;
        Ok(CheckpointConfig::for_checkpoint(
            &config.thread_id,
            config.ns(),
            &plain.id,
        ))
    }

    /// Stores one task's writes, each `(channel, value pair)`, by the rule and the fence of
    /// [`CheckpointSaver::put_writes`](stategraph_checkpoint::CheckpointSaver::put_writes).
    pub async fn put_writes_raw(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, Typed)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        validate_config(config).and(validate_key("task id", task_id))?;
        let client = self.conn.get_writer("put_writes").await?;
        let fenced = self.fencing && !stategraph_checkpoint::starts_branch(config);
        let (channels, values): (Vec<String>, Vec<Typed>) = writes.into_iter().unzip();
        let writes = channels.iter().map(String::as_str).zip(values).collect();
        let put = write::put_encoded_writes(&client, fenced, config, writes, task_id, task_path);
        let done = self.conn.within(put).await;
        self.conn.finish("put_writes", client, done)
    }

    /// The tuple [`CheckpointSaver::get_tuple`](stategraph_checkpoint::CheckpointSaver::get_tuple)
    /// reads, as stored ([`RawState::Json`]), from the same one query.
    pub async fn get_tuple_raw(&self, config: &CheckpointConfig) -> Result<Option<RawTuple>> {
        validate_config(config)?;
        let client = self.conn.get("get_tuple").await?;
        let read = async {
            let (thread, ns) = (&config.thread_id, config.ns());
            let row = match some_id(config.checkpoint_id.as_ref()) {
                Some(id) => {
                    let sql = format!(
                        "{SELECT} WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 \
                         AND c.checkpoint_id = $3"
                    );
                    let stmt = client.prepare_cached(&sql).await.map_err(pg)?;
                    client.query_opt(&stmt, &[thread, &ns, &id]).await
                }
                None => {
                    let sql = format!(
                        "{SELECT} WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 \
                         ORDER BY c.checkpoint_id DESC LIMIT 1"
                    );
                    let stmt = client.prepare_cached(&sql).await.map_err(pg)?;
                    client.query_opt(&stmt, &[thread, &ns]).await
                }
            }
            .map_err(pg)?;
            row.as_ref().map(raw_row).transpose()
        };
        let done = self.conn.within(read).await;
        self.conn.finish("get_tuple", client, done)
    }

    /// The tuples [`CheckpointSaver::list`](stategraph_checkpoint::CheckpointSaver::list)
    /// reads, in its order, as stored, from the same one query.
    pub async fn list_raw(
        &self,
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Vec<RawTuple>> {
        config.map_or(Ok(()), validate_config)?;
        if options.limit == Some(0) {
            return Ok(Vec::new());
        }
        let Some(query) = list_query(SELECT, config, options, None) else {
            return Ok(Vec::new());
        };
        let client = self.conn.get("list").await?;
        let read = async {
            let stmt = client.prepare_cached(&query.sql).await.map_err(pg)?;
            let rows = client.query(&stmt, &query.param_refs()).await.map_err(pg)?;
            rows.iter().map(raw_row).collect::<Result<Vec<_>>>()
        };
        let done = self.conn.within(read).await;
        self.conn.finish("list", client, done)
    }
}

/// One row of [`SELECT`] as stored; writes sorted by `(task_path, task_id, idx)`.
fn raw_row(row: &Row) -> Result<RawTuple> {
    let channels: Vec<String> = col::<Option<_>>(row, 6)?.unwrap_or_default();
    let types: Vec<String> = col::<Option<_>>(row, 7)?.unwrap_or_default();
    let blobs: Vec<Option<Vec<u8>>> = col::<Option<_>>(row, 8)?.unwrap_or_default();
    if channels.len() != types.len() || channels.len() != blobs.len() {
        return Err(Error::InvalidData("blob arrays of unequal length".into()));
    }
    let values = channels
        .into_iter()
        .zip(types)
        .zip(blobs)
        .filter(|((_, tag), _)| tag != TAG_EMPTY)
        .map(|((channel, tag), bytes)| (channel, Typed::new(tag, bytes.unwrap_or_default())))
        .collect();
    let parent: Option<String> = col(row, 3)?;
    Ok(RawTuple {
        thread_id: col(row, 0)?,
        checkpoint_ns: col(row, 1)?,
        checkpoint_id: col(row, 2)?,
        parent_checkpoint_id: parent.filter(|p| !p.is_empty()),
        state: RawState::Json {
            checkpoint: col(row, 4)?,
            values,
        },
        metadata: RawMetadata::Json(Some(col::<String>(row, 5)?.into_bytes())),
        pending_writes: writes(row)?,
    })
}

/// The writes of a row as stored, sorted by `(task_path, task_id, idx)`.
fn writes(row: &Row) -> Result<Vec<RawWrite>> {
    let task_ids: Vec<String> = col::<Option<_>>(row, 9)?.unwrap_or_default();
    let channels: Vec<String> = col::<Option<_>>(row, 10)?.unwrap_or_default();
    let types: Vec<Option<String>> = col::<Option<_>>(row, 11)?.unwrap_or_default();
    let blobs: Vec<Vec<u8>> = col::<Option<_>>(row, 12)?.unwrap_or_default();
    let paths: Vec<String> = col::<Option<_>>(row, 13)?.unwrap_or_default();
    let idxs: Vec<i32> = col::<Option<_>>(row, 14)?.unwrap_or_default();
    let n = task_ids.len();
    let lengths = [
        channels.len(),
        types.len(),
        blobs.len(),
        paths.len(),
        idxs.len(),
    ];
    if lengths != [n; 5] {
        return Err(Error::InvalidData("write arrays of unequal length".into()));
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        (paths[a].as_str(), task_ids[a].as_str(), idxs[a]).cmp(&(
            paths[b].as_str(),
            task_ids[b].as_str(),
            idxs[b],
        ))
    });
    Ok(order
        .into_iter()
        .map(|i| RawWrite {
            task_id: task_ids[i].clone(),
            channel: channels[i].clone(),
            value: Typed::new(types[i].clone().unwrap_or_default(), blobs[i].clone()),
        })
        .collect())
}
