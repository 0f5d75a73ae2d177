//! Writing: `put` (a checkpoint with its blobs) and `put_writes`, one round trip each.
//!
//! Python's saver sends a put as an `executemany` of blob inserts plus a checkpoint
//! upsert in one pipeline. Here the unfenced put is a single statement: a data-modifying
//! CTE inserts the blob rows from arrays (`unnest`) and the main statement upserts the
//! checkpoint, so both commit together or not at all. The fenced put is the same statement
//! behind the fence's lock, in a pipelined transaction (see [`crate::fence`]).
//!
//! A put also *carries* the long strings of unchanged channels (see [`crate::layout`]):
//! for each, a third part of the statement copies the string from the parent checkpoint's
//! inline value into a msgpack blob of the same version, unless that blob exists. Only the
//! channel and version travel; the string does not. Both puts run the same SQL for it,
//! `carry_sql!` in [`crate::sql`].
//!
//! `put_writes` is one `INSERT … SELECT FROM unnest(…)` statement, hence one transaction,
//! with the repeated-key rule of the trait: `ON CONFLICT DO UPDATE … WHERE idx < 0`, so a
//! reserved index is replaced (last wins) and a normal one kept (first wins), also in a
//! batch that mixes both. Python's saver replaces only when *every* write of the batch is
//! reserved, so in a mixed batch it keeps the first reserved value; this saver, like the
//! in-memory ones, keeps the last. Within one batch the last write of a reserved index is
//! the one sent (Postgres refuses to update one row twice in a statement).

use std::sync::Arc;

use deadpool_postgres::Client;
use indexmap::IndexMap;
use stategraph_checkpoint::serde::msgpack::DecodeMemo;
use stategraph_checkpoint::serde::{Serializer, Typed};
use stategraph_checkpoint::{
    write_index, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, Error, Result,
    Value,
};

use tokio_postgres::Row;

use crate::cache::{BlobCache, Fill};
use crate::error::col;
use crate::error::pg;
use crate::fence;
use crate::json;
use crate::layout::{split, BlobRow, Split};
use crate::query::some_id;
use crate::read::off_runtime;
use crate::sql;

/// The metadata document a put stores: `get_checkpoint_metadata` (docs/format.md#metadata) without
/// the
/// legacy `writes` key, as JSON text.
pub(crate) fn metadata_json(
    config: &CheckpointConfig,
    metadata: &CheckpointMetadata,
) -> Result<String> {
    let mut md = metadata.for_put(config);
    md.extra.shift_remove("writes");
    json::encode(&md.to_value(), "metadata")
}

/// Stores a checkpoint; with `fencing`, only if its parent is still the head. The blobs
/// it inserted go to `cache`, decoded from their bytes through `memo`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn put(
    client: &Client,
    serde: &Arc<dyn Serializer>,
    (cache, memo): (&BlobCache, &Arc<DecodeMemo>),
    fencing: bool,
    config: &CheckpointConfig,
    checkpoint: &Checkpoint,
    metadata: &CheckpointMetadata,
    new_versions: &ChannelVersions,
) -> Result<CheckpointConfig> {
    let split = split(checkpoint, new_versions, serde.as_ref())?;
    let metadata = metadata_json(config, metadata)?;
    let written = put_split(client, fencing, config, &checkpoint.id, &split, &metadata).await?;
    let (thread, ns) = (config.thread_id.as_str(), config.ns());
    fill_cache(serde, (cache, memo), thread, ns, split.blobs, written).await?;
    Ok(CheckpointConfig::for_checkpoint(thread, ns, &checkpoint.id))
}

/// Stores a checkpoint already split into its row and blob rows (see [`put`]), with its
/// metadata as JSON text; with `fencing`, only if its parent is still the head. Returns the
/// blobs it inserted as `(channel, version, row identity)` ([`crate::cache`]).
pub(crate) async fn put_split(
    client: &Client,
    fencing: bool,
    config: &CheckpointConfig,
    id: &str,
    split: &Split,
    metadata: &str,
) -> Result<Vec<(String, String, String)>> {
    let (thread, ns) = (config.thread_id.as_str(), config.ns());
    let parent = some_id(config.checkpoint_id.as_ref());
    let channels: Vec<&str> = split.blobs.iter().map(|b| b.channel.as_str()).collect();
    let versions: Vec<&str> = split.blobs.iter().map(|b| b.version.as_str()).collect();
    let tags: Vec<&str> = split.blobs.iter().map(|b| b.tag.as_str()).collect();
    let bytes: Vec<&[u8]> = split.blobs.iter().map(|b| b.bytes.as_slice()).collect();
    let carried: Vec<&str> = split.carried.iter().map(|c| c.channel.as_str()).collect();
    let carried_versions: Vec<&str> = split.carried.iter().map(|c| c.version.as_str()).collect();
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 12] = [
        &thread,
        &ns,
        &id,
        &parent,
        &split.checkpoint,
        &metadata,
        &channels,
        &versions,
        &tags,
        &bytes,
        &carried,
        &carried_versions,
    ];
    let written = if fencing {
        let lock = client.prepare_cached(sql::LOCK).await.map_err(pg)?;
        let stmt = client.prepare_cached(sql::FENCED_PUT).await.map_err(pg)?;
        let lock_params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&thread, &ns];
        // All four are sent when first polled, in order, before any reply: one round trip.
        let result = futures::future::try_join4(
            client.batch_execute(sql::BEGIN),
            client.execute(&lock, &lock_params),
            client.query_one(&stmt, &params),
            client.batch_execute(sql::COMMIT),
        )
        .await;
        // After an error the transaction may still be open (a statement failed before
        // it was sent): the saver closes the connection after any driver error.
        let (_, _, row, _) = result.map_err(pg)?;
        let ok: bool = col(&row, 0)?;
        if !ok {
            let head: Option<String> = col(&row, 1)?;
            return Err(fence::conflict(thread, ns, parent, head.as_deref()));
        }
        written_blobs(&row, 2)?
    } else {
        let stmt = client.prepare_cached(sql::PUT).await.map_err(pg)?;
        let row = client.query_one(&stmt, &params).await.map_err(pg)?;
        written_blobs(&row, 0)?
    };
    Ok(written)
}

/// Keeps in `cache` the blobs a put inserted (`written`, as [`written_blobs`] reads them),
/// decoded from the bytes it sent (`blobs`) through `memo`: the next read of the thread
/// finds them without moving them again.
pub(crate) async fn fill_cache(
    serde: &Arc<dyn Serializer>,
    (cache, memo): (&BlobCache, &Arc<DecodeMemo>),
    thread: &str,
    ns: &str,
    blobs: Vec<BlobRow>,
    written: Vec<(String, String, String)>,
) -> Result<()> {
    if cache.is_off() {
        return Ok(());
    }
    let (serde, memo) = (Arc::clone(serde), Arc::clone(memo));
    let wanted: Vec<_> = written
        .into_iter()
        .filter_map(|(channel, version, ident)| {
            let i = blobs
                .iter()
                .position(|b| b.channel == channel && b.version == version)?;
            cache.wants(blobs[i].bytes.len()).then_some((i, ident))
        })
        .collect();
    if !wanted.is_empty() {
        let fills = off_runtime(move || {
            let mut blobs: Vec<Option<BlobRow>> = blobs.into_iter().map(Some).collect();
            wanted
                .into_iter()
                .filter_map(|(i, ident)| blobs[i].take().map(|b| (b, ident)))
                .map(|(b, ident)| {
                    let value = serde.loads_typed_with_memo(&b.tag, &b.bytes, &memo)?;
                    Ok(Fill {
                        bytes: b.bytes.len(),
                        channel: b.channel,
                        version: b.version,
                        ident,
                        tag: b.tag,
                        value,
                    })
                })
                .collect::<Result<Vec<_>>>()
        })
        .await?;
        cache.record(thread, ns, &[], fills);
    }
    Ok(())
}

/// The blobs a put inserted, from the columns of [`written_blobs_sql!`](crate::sql::written_blobs_sql) starting at
/// `first`: `(channel, version, identity)`.
pub(crate) fn written_blobs(row: &Row, first: usize) -> Result<Vec<(String, String, String)>> {
    let channels: Vec<String> = col::<Option<_>>(row, first)?.unwrap_or_default();
    let versions: Vec<String> = col::<Option<_>>(row, first + 1)?.unwrap_or_default();
    let idents: Vec<String> = col::<Option<_>>(row, first + 2)?.unwrap_or_default();
    if versions.len() != channels.len() || idents.len() != channels.len() {
        return Err(Error::InvalidData(
            "written blob arrays of unequal length".into(),
        ));
    }
    Ok(channels
        .into_iter()
        .zip(versions)
        .zip(idents)
        .map(|((c, v), i)| (c, v, i))
        .collect())
}

/// Stores the writes of one task against `config.checkpoint_id`; with `fencing`, only if
/// no other run moved past that checkpoint or stored a different write of the task.
pub(crate) async fn put_writes(
    client: &Client,
    serde: &dyn Serializer,
    fencing: bool,
    config: &CheckpointConfig,
    writes: &[(String, Value)],
    task_id: &str,
    task_path: &str,
) -> Result<()> {
    let encoded = writes
        .iter()
        .map(|(channel, value)| Ok((channel.as_str(), serde.dumps_typed(value)?)))
        .collect::<Result<Vec<_>>>()?;
    put_encoded_writes(client, fencing, config, encoded, task_id, task_path).await
}

/// Stores one task's writes already encoded, `(channel, pair)` in call order (see
/// [`put_writes`]).
pub(crate) async fn put_encoded_writes(
    client: &Client,
    fencing: bool,
    config: &CheckpointConfig,
    writes: Vec<(&str, Typed)>,
    task_id: &str,
    task_path: &str,
) -> Result<()> {
    let checkpoint_id = config
        .checkpoint_id
        .as_deref()
        .ok_or_else(|| Error::InvalidConfig("put_writes needs a checkpoint_id".into()))?;
    if writes.is_empty() {
        return Ok(());
    }
    // By index: a repeated reserved index keeps its last write (normal ones cannot repeat).
    let mut rows: IndexMap<i32, (&str, Typed)> = IndexMap::new();
    for (position, (channel, value)) in writes.into_iter().enumerate() {
        let idx = i32::try_from(write_index(channel, position))
            .map_err(|_| Error::InvalidData("too many writes for an INTEGER index".into()))?;
        rows.insert(idx, (channel, value));
    }
    let idxs: Vec<i32> = rows.keys().copied().collect();
    let channels: Vec<&str> = rows.values().map(|(c, _)| *c).collect();
    let tags: Vec<&str> = rows.values().map(|(_, t)| t.tag.as_ref()).collect();
    let blobs: Vec<&[u8]> = rows.values().map(|(_, t)| t.bytes.as_slice()).collect();
    let (thread, ns) = (config.thread_id.as_str(), config.ns());
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
        &thread,
        &ns,
        &checkpoint_id,
        &task_id,
        &task_path,
        &idxs,
        &channels,
        &tags,
        &blobs,
    ];
    if fencing {
        let lock = client.prepare_cached(sql::LOCK).await.map_err(pg)?;
        let stmt = client
            .prepare_cached(sql::FENCED_WRITES)
            .await
            .map_err(pg)?;
        let lock_params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&thread, &ns];
        // One round trip, as the fenced put.
        let (_, _, row, _) = futures::future::try_join4(
            client.batch_execute(sql::BEGIN),
            client.execute(&lock, &lock_params),
            client.query_one(&stmt, &params),
            client.batch_execute(sql::COMMIT),
        )
        .await
        .map_err(pg)?;
        let ok: bool = col(&row, 0)?;
        if !ok {
            let child: Option<String> = col(&row, 1)?;
            let idx: Option<i32> = col(&row, 2)?;
            return Err(fence::writes_conflict(
                thread,
                ns,
                checkpoint_id,
                task_id,
                child.as_deref(),
                idx,
            ));
        }
    } else {
        let stmt = client.prepare_cached(sql::PUT_WRITES).await.map_err(pg)?;
        client.execute(&stmt, &params).await.map_err(pg)?;
    }
    Ok(())
}
