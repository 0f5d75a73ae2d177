//! Upkeep of whole threads and runs, the same set of jobs in every saver: `delete_thread`,
//! `delete_for_runs`, `copy_thread` (each in one transaction) and `prune`.
//!
//! Python's saver has `delete_thread` only; the other two follow the rules the in-memory
//! saver and the conformance suite state. Like `prune`, `delete_for_runs` deletes the
//! writes of the checkpoints it deletes and the blobs they referenced that no remaining
//! checkpoint of their namespace references, and leaves a remaining checkpoint whose
//! parent it deleted without a parent.
//!
//! **`prune`** thins threads as Python's `PostgresSaver.prune` does.
//!
//! `Delete` removes every row of the listed threads in one transaction. `KeepLatest`
//! keeps, in each namespace, the latest checkpoint (and, for a checkpoint of format 3 or
//! older, the parent holding the `__pregel_tasks` writes it reads its sends from), with
//! their writes and the blobs they reference. It deletes every other checkpoint with its
//! writes and the blobs that only deleted checkpoints referenced, and leaves a kept
//! checkpoint whose parent it deleted without a parent. A subgraph call's namespace (one
//! with a `:`) goes entirely once the root checkpoint the call started from is saved and
//! not kept. Each thread is pruned in its own repeatable-read transaction, on one snapshot:
//! a run appending to the thread meanwhile is neither seen nor deleted, and a concurrent
//! change to a row being deleted fails the thread with a serialization error (see
//! [`crate::db_error`]); the threads before it stay pruned and retrying is safe.
//!
//! `KeepLatest` refuses, before pruning anything, threads that use a DeltaChannel, whose
//! latest value is rebuilt from older checkpoints; a thread that starts using one while the
//! batch runs is refused at its turn.

use std::collections::{BTreeMap, BTreeSet};

use deadpool_postgres::{Client, Transaction};
use stategraph_checkpoint::{Error, PruneStrategy, Result};
use tokio_postgres::IsolationLevel;

use crate::error::col;
use crate::error::pg;
use crate::sql;

/// Removes every checkpoint, blob and write of a thread.
pub(crate) async fn delete_thread(client: &Client, thread_id: &str) -> Result<()> {
    let stmt = client
        .prepare_cached(sql::DELETE_THREAD)
        .await
        .map_err(pg)?;
    client.execute(&stmt, &[&thread_id]).await.map_err(pg)?;
    Ok(())
}

/// Deletes the checkpoints of the listed runs, their writes and the blobs only they used.
pub(crate) async fn delete_for_runs(client: &mut Client, run_ids: &[String]) -> Result<()> {
    if run_ids.is_empty() {
        return Ok(());
    }
    let tx = client.transaction().await.map_err(pg)?;
    let rows = tx.query(sql::DELETE_RUNS, &[&run_ids]).await.map_err(pg)?;
    let mut deleted: BTreeSet<[String; 3]> = BTreeSet::new();
    let mut freed: Vec<[String; 4]> = Vec::new();
    for row in &rows {
        let (thread, ns, id): (String, String, String) = (col(row, 0)?, col(row, 1)?, col(row, 2)?);
        let channel: Option<String> = col(row, 3)?;
        let version: Option<String> = col(row, 4)?;
        if let (Some(channel), Some(version)) = (channel, version) {
            freed.push([thread.clone(), ns.clone(), channel, version]);
        }
        deleted.insert([thread, ns, id]);
    }
    if !deleted.is_empty() {
        let deleted: Vec<[String; 3]> = deleted.into_iter().collect();
        let [t, n, i] = columns(&deleted);
        tx.execute(sql::ORPHAN_PARENTS, &[&t, &n, &i])
            .await
            .map_err(pg)?;
    }
    if !freed.is_empty() {
        let [t, n, c, v] = columns(&freed);
        tx.execute(sql::GARBAGE_BLOBS, &[&t, &n, &c, &v])
            .await
            .map_err(pg)?;
    }
    tx.commit().await.map_err(pg)
}

/// Copies thread `source` to `target` (nothing when they are the same thread).
pub(crate) async fn copy_thread(client: &Client, source: &str, target: &str) -> Result<()> {
    if source == target {
        return Ok(());
    }
    let stmt = client.prepare_cached(sql::COPY_THREAD).await.map_err(pg)?;
    client
        .execute(&stmt, &[&source, &target])
        .await
        .map_err(pg)?;
    Ok(())
}

/// Rows of `N` strings as `N` column arrays, for `unnest`.
pub(crate) fn columns<const N: usize>(rows: &[[String; N]]) -> [Vec<&str>; N] {
    std::array::from_fn(|c| rows.iter().map(|r| r[c].as_str()).collect())
}

/// Thins `thread_ids` by `strategy`.
pub(crate) async fn prune(
    client: &mut Client,
    thread_ids: &[String],
    strategy: PruneStrategy,
) -> Result<()> {
    if thread_ids.is_empty() {
        return Ok(());
    }
    match strategy {
        PruneStrategy::Delete => {
            let tx = client.transaction().await.map_err(pg)?;
            tx.execute(sql::DELETE_THREADS, &[&thread_ids])
                .await
                .map_err(pg)?;
            tx.commit().await.map_err(pg)
        }
        PruneStrategy::KeepLatest => {
            refuse_delta_threads(client, thread_ids).await?;
            for thread in thread_ids {
                let tx = client
                    .build_transaction()
                    .isolation_level(IsolationLevel::RepeatableRead)
                    .start()
                    .await
                    .map_err(pg)?;
                keep_latest(&tx, thread).await?;
                tx.commit().await.map_err(pg)?;
            }
            Ok(())
        }
    }
}

/// Fails if any of `thread_ids` uses a DeltaChannel.
async fn refuse_delta_threads(
    client: &impl deadpool_postgres::GenericClient,
    thread_ids: &[String],
) -> Result<()> {
    let rows = client
        .query(sql::DELTA_THREADS, &[&thread_ids])
        .await
        .map_err(pg)?;
    if rows.is_empty() {
        Ok(())
    } else {
        Err(Error::Unsupported(
            "prune(KeepLatest) of a thread that uses a DeltaChannel",
        ))
    }
}

/// One namespace head as [`sql::HEADS`] returns it.
struct Head {
    ns: String,
    kept: Vec<String>,
    root: Option<String>,
    root_saved: bool,
}

/// The statements of one thread's `KeepLatest`, inside its transaction.
async fn keep_latest(tx: &Transaction<'_>, thread: &str) -> Result<()> {
    let rows = tx.query(sql::HEADS, &[&thread]).await.map_err(pg)?;
    refuse_delta_threads(tx, std::slice::from_ref(&thread.to_owned())).await?;
    let mut heads = Vec::with_capacity(rows.len());
    for row in &rows {
        let head: String = col(row, 1)?;
        let sends_parent: Option<String> = col(row, 2)?;
        heads.push(Head {
            ns: col(row, 0)?,
            kept: std::iter::once(head).chain(sends_parent).collect(),
            root: col(row, 3)?,
            root_saved: col(row, 4)?,
        });
    }
    let kept: BTreeMap<&str, &[String]> = heads
        .iter()
        .map(|h| (h.ns.as_str(), h.kept.as_slice()))
        .collect();
    let root_kept = kept.get("").copied().unwrap_or_default();
    let calls: Vec<&str> = heads
        .iter()
        .filter(|h| {
            h.ns.contains(':')
                && h.root_saved
                && h.root.as_ref().is_none_or(|r| !root_kept.contains(r))
        })
        .map(|h| h.ns.as_str())
        .collect();
    if !calls.is_empty() {
        tx.execute(sql::DELETE_NAMESPACES, &[&thread, &calls])
            .await
            .map_err(pg)?;
    }
    for (ns, ids) in kept {
        if calls.contains(&ns) {
            continue;
        }
        let freed = tx
            .query(sql::DELETE_UNKEPT, &[&thread, &ns, &ids])
            .await
            .map_err(pg)?;
        tx.execute(sql::PRUNE_ORPHAN_PARENTS, &[&thread, &ns, &ids])
            .await
            .map_err(pg)?;
        if freed.is_empty() {
            continue;
        }
        let mut garbage: Vec<[String; 4]> = Vec::with_capacity(freed.len());
        for row in &freed {
            garbage.push([thread.to_owned(), ns.to_owned(), col(row, 0)?, col(row, 1)?]);
        }
        let [t, n, c, v] = columns(&garbage);
        tx.execute(sql::GARBAGE_BLOBS, &[&t, &n, &c, &v])
            .await
            .map_err(pg)?;
    }
    Ok(())
}
