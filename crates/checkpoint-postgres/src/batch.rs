//! Group commit: [`CheckpointSaver::put_batch`] stores the queued saves of a run in one
//! transaction.
//!
//! Under durability `async` the engine queues a run's puts and task writes and hands them
//! to `put_batch` in order (several at once when the saver is slower than the run). One
//! call per op costs a transaction each: a commit, a WAL flush, and on a busy server most
//! of the CPU a run spends in Postgres. Here the batch is one transaction.
//!
//! **The chained way** (a fenced saver, the Agent Server's case): when each
//! `(thread, namespace)` of the batch is a chain of new checkpoints with the writes of its
//! tasks, one statement per `(thread, namespace)` checks the fence once for all its ops and
//! inserts all their rows ([`crate::chain`], which says when it applies):
//!
//! ```text
//! BEGIN ISOLATION LEVEL READ COMMITTED
//! SELECT pg_advisory_xact_lock(…)     -- once per (thread, namespace), sorted
//! CHAINED                             -- once per (thread, namespace): verdict, inserts
//! COMMIT                              -- same round trip for one (thread, namespace)
//! ```
//!
//! When a verdict is "no" (the statement stored nothing) or the batch is no such chain,
//! **the general way** stores it:
//!
//! ```text
//! BEGIN ISOLATION LEVEL READ COMMITTED
//! SELECT pg_advisory_xact_lock(…)     -- once per fenced (thread, namespace), sorted
//! <the put or put_writes statement of each op, in order, fenced as its own call would be>
//! COMMIT                              -- second round trip, once every fence said yes
//! ```
//!
//! Its statements are those of [`crate::write`] and [`crate::fence`], so the stored rows
//! are the same as with one call per op; a later op of the batch sees what the earlier
//! ones wrote (same transaction). The locks are taken first, in a fixed order, so two
//! batches never wait for each other in a cycle.
//!
//! **When the fence refuses an op** the transaction is rolled back and the ops are stored
//! again one call each, which stores the ops before the refused one and returns its
//! [`stategraph_checkpoint::Error::Conflict`], as the provided `put_batch` does.
//! **When an op is invalid** (a config the trait refuses, a value that cannot be
//! serialized) the ops before it are stored as a batch and its error returned. **Any
//! other failure** (a database error, the statement timeout) stores nothing of the batch.

use std::sync::Arc;

use deadpool_postgres::Client;
use futures::future::try_join_all;
use indexmap::IndexMap;
use stategraph_checkpoint::config::{validate_config, validate_key};
use stategraph_checkpoint::serde::msgpack::DecodeMemo;
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{
    starts_branch, write_index, CheckpointSaver, Error, Result, SaveOp, Value,
};
use tokio_postgres::types::ToSql;

use crate::blob_cache::BlobCache;
use crate::chain;
use crate::conn::Connections;
use crate::error::pg;
use crate::fence;
use crate::filter::some_id;
use crate::layout::{split, BlobRow};
use crate::read::col;
use crate::write;
use crate::write::{metadata_json, PUT, PUT_WRITES};

/// One op, validated and serialized, with the parameters of its statement.
pub(crate) enum Prepared {
    /// A put: the parameters of [`PUT`] / [`fence::FENCED_PUT`].
    Put {
        /// Whether the fence checks it.
        fenced: bool,
        thread: String,
        ns: String,
        id: String,
        parent: Option<String>,
        checkpoint: String,
        metadata: String,
        channels: Vec<String>,
        versions: Vec<String>,
        tags: Vec<String>,
        bytes: Vec<Vec<u8>>,
        carried: Vec<String>,
        carried_versions: Vec<String>,
    },
    /// A task's writes: the parameters of [`PUT_WRITES`] / [`fence::FENCED_WRITES`].
    Writes {
        /// Whether the fence checks it.
        fenced: bool,
        thread: String,
        ns: String,
        checkpoint_id: String,
        task_id: String,
        task_path: String,
        idxs: Vec<i32>,
        channels: Vec<String>,
        tags: Vec<String>,
        blobs: Vec<Vec<u8>>,
    },
}

impl Prepared {
    fn fenced(&self) -> bool {
        match self {
            Prepared::Put { fenced, .. } | Prepared::Writes { fenced, .. } => *fenced,
        }
    }

    /// Its thread and namespace.
    pub(crate) fn key(&self) -> (&str, &str) {
        match self {
            Prepared::Put { thread, ns, .. } | Prepared::Writes { thread, ns, .. } => {
                (thread.as_str(), ns.as_str())
            }
        }
    }

    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        match self {
            Prepared::Put {
                thread,
                ns,
                id,
                parent,
                checkpoint,
                metadata,
                channels,
                versions,
                tags,
                bytes,
                carried,
                carried_versions,
                ..
            } => vec![
                thread,
                ns,
                id,
                parent,
                checkpoint,
                metadata,
                channels,
                versions,
                tags,
                bytes,
                carried,
                carried_versions,
            ],
            Prepared::Writes {
                thread,
                ns,
                checkpoint_id,
                task_id,
                task_path,
                idxs,
                channels,
                tags,
                blobs,
                ..
            } => vec![
                thread,
                ns,
                checkpoint_id,
                task_id,
                task_path,
                idxs,
                channels,
                tags,
                blobs,
            ],
        }
    }
}

/// Validates and serializes one op as its own call would; `None` for writes that store
/// nothing (an empty list).
fn prepare(op: &SaveOp, serde: &dyn Serializer, fencing: bool) -> Result<Option<Prepared>> {
    match op {
        SaveOp::Put {
            config,
            checkpoint,
            metadata,
            new_versions,
        } => {
            validate_config(config).and(validate_key("checkpoint id", &checkpoint.id))?;
            let split = split(checkpoint, new_versions, serde)?;
            let metadata = metadata_json(config, metadata)?;
            let (channels, versions, tags, bytes) = split.blobs.into_iter().fold(
                (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
                |(mut c, mut v, mut t, mut b), row| {
                    c.push(row.channel);
                    v.push(row.version);
                    t.push(row.tag);
                    b.push(row.bytes);
                    (c, v, t, b)
                },
            );
            let (carried, carried_versions) = split
                .carried
                .into_iter()
                .map(|c| (c.channel, c.version))
                .unzip();
            Ok(Some(Prepared::Put {
                fenced: fencing && !starts_branch(config),
                thread: config.thread_id.clone(),
                ns: config.ns().to_owned(),
                id: checkpoint.id.clone(),
                parent: some_id(config.checkpoint_id.as_ref()).map(str::to_owned),
                checkpoint: split.checkpoint,
                metadata,
                channels,
                versions,
                tags,
                bytes,
                carried,
                carried_versions,
            }))
        }
        SaveOp::PutWrites {
            config,
            writes,
            task_id,
            task_path,
        } => {
            validate_config(config).and(validate_key("task id", task_id))?;
            let checkpoint_id = config
                .checkpoint_id
                .clone()
                .ok_or_else(|| Error::InvalidConfig("put_writes needs a checkpoint_id".into()))?;
            if writes.is_empty() {
                return Ok(None);
            }
            let rows = write_rows(writes, serde)?;
            let mut prepared = Prepared::Writes {
                fenced: fencing && !starts_branch(config),
                thread: config.thread_id.clone(),
                ns: config.ns().to_owned(),
                checkpoint_id,
                task_id: task_id.clone(),
                task_path: task_path.clone(),
                idxs: Vec::with_capacity(rows.len()),
                channels: Vec::with_capacity(rows.len()),
                tags: Vec::with_capacity(rows.len()),
                blobs: Vec::with_capacity(rows.len()),
            };
            if let Prepared::Writes {
                idxs,
                channels,
                tags,
                blobs,
                ..
            } = &mut prepared
            {
                for (idx, (channel, tag, blob)) in rows {
                    idxs.push(idx);
                    channels.push(channel);
                    tags.push(tag);
                    blobs.push(blob);
                }
            }
            Ok(Some(prepared))
        }
    }
}

/// One write row: channel, type tag, bytes.
type WriteRow = (String, String, Vec<u8>);

/// The rows of a task's writes by index, as `put_writes` stores them: a repeated reserved
/// index keeps its last write.
fn write_rows(
    writes: &[(String, Value)],
    serde: &dyn Serializer,
) -> Result<IndexMap<i32, WriteRow>> {
    let mut rows = IndexMap::new();
    for (position, (channel, value)) in writes.iter().enumerate() {
        let idx = i32::try_from(write_index(channel, position))
            .map_err(|_| Error::InvalidData("too many writes for an INTEGER index".into()))?;
        let typed = serde.dumps_typed(value)?;
        rows.insert(idx, (channel.clone(), typed.tag.to_string(), typed.bytes));
    }
    Ok(rows)
}

/// Whether the batch was committed or a fence refused one of its ops (nothing stored).
enum Outcome {
    /// Committed by one statement per `(thread, namespace)` ([`chain`]): the blobs each
    /// inserted, in group order.
    Chained(Vec<chain::Written>),
    /// Committed: the rows each statement returned, in op order.
    Committed(Vec<Vec<tokio_postgres::Row>>),
    /// A fence refused an op; nothing is stored.
    Refused,
}

/// `put_batch` of [`crate::PostgresSaver`]: see the module documentation.
pub(crate) async fn put_batch<S: CheckpointSaver + ?Sized>(
    saver: &S,
    conn: &Connections,
    serde: &Arc<dyn Serializer>,
    cache: (&BlobCache, &Arc<DecodeMemo>),
    fencing: bool,
    ops: &[SaveOp],
) -> Result<()> {
    if ops.len() < 2 {
        return stategraph_checkpoint::saver::put_each(saver, ops).await;
    }
    let mut prepared = Vec::with_capacity(ops.len());
    // The op that cannot be stored (its index and error): the ops before it are.
    let mut failed = None;
    for (i, op) in ops.iter().enumerate() {
        match prepare(op, serde.as_ref(), fencing) {
            Ok(Some(p)) => prepared.push(p),
            Ok(None) => {}
            Err(e) => {
                failed = Some((i, e));
                break;
            }
        }
    }
    if !prepared.is_empty() {
        let groups = if fencing {
            chain::plan(&prepared)
        } else {
            None
        };
        let client = conn.get_writer("put_batch").await?;
        let done = conn
            .within(async {
                if let Some(groups) = &groups {
                    if let Some(written) = chain::run(&client, groups).await? {
                        return Ok(Outcome::Chained(written));
                    }
                }
                run(&client, &prepared).await
            })
            .await;
        match conn.finish("put_batch", client, done)? {
            Outcome::Chained(written) => {
                if !cache.0.is_off() {
                    for (group, written) in groups.iter().flatten().zip(written) {
                        let (thread, ns) = group.key();
                        let blobs = group.blob_rows();
                        write::fill_cache(serde, cache, thread, ns, blobs, written).await?;
                    }
                }
            }
            Outcome::Refused => {
                // Rolled back: one call per op stores the ops before the refused one and
                // returns its conflict.
                let upto = failed.as_ref().map_or(ops.len(), |(i, _)| *i);
                stategraph_checkpoint::saver::put_each(saver, &ops[..upto]).await?;
            }
            Outcome::Committed(rows) => fill_cache(serde, cache, prepared, rows).await?,
        }
    }
    failed.map_or(Ok(()), |(_, e)| Err(e))
}

/// Keeps the blobs the committed puts inserted in the saver's blob cache, as a single put
/// does ([`write::fill_cache`]).
async fn fill_cache(
    serde: &Arc<dyn Serializer>,
    cache: (&BlobCache, &Arc<DecodeMemo>),
    prepared: Vec<Prepared>,
    rows: Vec<Vec<tokio_postgres::Row>>,
) -> Result<()> {
    if cache.0.is_off() {
        return Ok(());
    }
    for (p, rows) in prepared.into_iter().zip(rows) {
        let Prepared::Put {
            fenced,
            thread,
            ns,
            channels,
            versions,
            tags,
            bytes,
            ..
        } = p
        else {
            continue;
        };
        let Some(row) = rows.first() else { continue };
        let written = write::written_blobs(row, if fenced { 2 } else { 0 })?;
        let blobs = channels
            .into_iter()
            .zip(versions)
            .zip(tags)
            .zip(bytes)
            .map(|(((channel, version), tag), bytes)| BlobRow {
                channel,
                version,
                tag,
                bytes,
            })
            .collect();
        write::fill_cache(serde, cache, &thread, &ns, blobs, written).await?;
    }
    Ok(())
}

/// The transaction: `BEGIN`, the locks and the statements in one round trip, then `COMMIT`
/// (or `ROLLBACK` when a fence refused).
async fn run(client: &Client, prepared: &[Prepared]) -> Result<Outcome> {
    let mut keys: Vec<(&str, &str)> = prepared
        .iter()
        .filter(|p| p.fenced())
        .map(Prepared::key)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let lock = client.prepare_cached(fence::LOCK).await.map_err(pg)?;
    let mut statements = Vec::with_capacity(prepared.len());
    for p in prepared {
        let sql = match (p, p.fenced()) {
            (Prepared::Put { .. }, true) => fence::FENCED_PUT,
            (Prepared::Put { .. }, false) => PUT,
            (Prepared::Writes { .. }, true) => fence::FENCED_WRITES,
            (Prepared::Writes { .. }, false) => PUT_WRITES,
        };
        statements.push(client.prepare_cached(sql).await.map_err(pg)?);
    }
    let lock_params: Vec<[&(dyn ToSql + Sync); 2]> = keys
        .iter()
        .map(|(thread, ns)| [thread as &(dyn ToSql + Sync), ns as &(dyn ToSql + Sync)])
        .collect();
    let params: Vec<Vec<&(dyn ToSql + Sync)>> = prepared.iter().map(Prepared::params).collect();
    // Each request is sent when first polled, in order, before any reply: one round trip.
    let (_, _, rows) = futures::future::try_join3(
        client.batch_execute(fence::BEGIN),
        try_join_all(lock_params.iter().map(|p| client.execute(&lock, p))),
        try_join_all(
            statements
                .iter()
                .zip(&params)
                .map(|(stmt, p)| client.query(stmt, p)),
        ),
    )
    .await
    .map_err(pg)?;
    // After a driver error the transaction may still be open: the saver closes the
    // connection after any driver error. After any other error it is rolled back here.
    let refused = prepared
        .iter()
        .zip(&rows)
        .try_fold(false, |refused, (p, rows)| {
            if refused || !p.fenced() {
                return Ok(refused);
            }
            let row = rows
                .first()
                .ok_or_else(|| Error::InvalidData("the fenced statement returned no row".into()))?;
            col::<bool>(row, 0).map(|ok| !ok)
        });
    match refused {
        Ok(false) => {}
        Ok(true) => {
            client.batch_execute("ROLLBACK").await.map_err(pg)?;
            return Ok(Outcome::Refused);
        }
        Err(e) => {
            client.batch_execute("ROLLBACK").await.map_err(pg)?;
            return Err(e);
        }
    }
    client.batch_execute(fence::COMMIT).await.map_err(pg)?;
    Ok(Outcome::Committed(rows))
}
