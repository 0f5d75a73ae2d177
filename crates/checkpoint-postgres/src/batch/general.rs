//! The general way of group commit, and the choice between it and the chained way:
//! [`CheckpointSaver::put_batch`] stores the queued saves of a run in one transaction.
//!
//! Under durability `async` the engine queues a run's puts and task writes and hands them
//! to `put_batch` in order (several at once when the saver is slower than the run). One
//! call per op costs a transaction each: a commit, a WAL flush, and on a busy server most
//! of the CPU a run spends in Postgres. Here the batch is one transaction.
//!
//! **The chained way** (a fenced saver, the Agent Server's case): when each
//! `(thread, namespace)` of the batch is a chain of new checkpoints with the writes of its
//! tasks, one statement per `(thread, namespace)` checks the fence once for all its ops and
//! inserts all their rows ([`crate::batch::chain`], which says when it applies):
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
use stategraph_checkpoint::serde::msgpack::DecodeMemo;
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{CheckpointSaver, Error, Result, SaveOp};
use tokio_postgres::types::ToSql;

use crate::batch::chain;
use crate::cache::BlobCache;
use crate::error::col;
use crate::error::pg;
use crate::op::{prepare, Prepared};
use crate::pool::Connections;
use crate::sql::{self, PUT, PUT_WRITES};
use crate::write;

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
        let Prepared::Put(put) = p else {
            continue;
        };
        let Some(row) = rows.first() else { continue };
        let written = write::written_blobs(row, if put.fenced { 2 } else { 0 })?;
        let (thread, ns) = (put.thread.clone(), put.ns.clone());
        let blobs = put.into_blob_rows();
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
    let lock = client.prepare_cached(sql::LOCK).await.map_err(pg)?;
    let mut statements = Vec::with_capacity(prepared.len());
    for p in prepared {
        let sql = match (p, p.fenced()) {
            (Prepared::Put(_), true) => sql::FENCED_PUT,
            (Prepared::Put(_), false) => PUT,
            (Prepared::Writes(_), true) => sql::FENCED_WRITES,
            (Prepared::Writes(_), false) => PUT_WRITES,
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
        client.batch_execute(sql::BEGIN),
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
    client.batch_execute(sql::COMMIT).await.map_err(pg)?;
    Ok(Outcome::Committed(rows))
}
