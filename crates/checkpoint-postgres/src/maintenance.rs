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

/// Deletes every row of one thread, in every namespace, in one statement.
const DELETE_THREAD: &str = "WITH a AS (DELETE FROM checkpoints WHERE thread_id = $1), \
b AS (DELETE FROM checkpoint_blobs WHERE thread_id = $1) \
DELETE FROM checkpoint_writes WHERE thread_id = $1";

/// Deletes the checkpoints of the runs `$1` (a JSON string `run_id` in their metadata)
/// with their writes; returns each deleted checkpoint with the versions it referenced.
const DELETE_RUNS: &str = "WITH gone AS ( \
    DELETE FROM checkpoints \
    WHERE jsonb_typeof(metadata -> 'run_id') = 'string' AND metadata ->> 'run_id' = ANY($1) \
    RETURNING thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions \
), writes AS ( \
    DELETE FROM checkpoint_writes w USING gone g \
    WHERE w.thread_id = g.thread_id AND w.checkpoint_ns = g.checkpoint_ns \
      AND w.checkpoint_id = g.checkpoint_id \
) \
SELECT g.thread_id, g.checkpoint_ns, g.checkpoint_id, v.key, v.value \
FROM gone g LEFT JOIN LATERAL jsonb_each_text(g.versions) AS v ON true";

/// Clears the parent of the checkpoints whose parent is one of the deleted ones.
const ORPHAN_PARENTS: &str = "UPDATE checkpoints c SET parent_checkpoint_id = NULL \
FROM unnest($1::text[], $2::text[], $3::text[]) AS d(thread_id, checkpoint_ns, checkpoint_id) \
WHERE c.thread_id = d.thread_id AND c.checkpoint_ns = d.checkpoint_ns \
  AND c.parent_checkpoint_id = d.checkpoint_id";

/// Deletes the freed blobs `(thread, ns, channel, version)` no stored checkpoint of their
/// namespace references any more.
pub(crate) const GARBAGE_BLOBS: &str = "DELETE FROM checkpoint_blobs b \
USING unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS f(thread_id, checkpoint_ns, channel, version) \
WHERE b.thread_id = f.thread_id AND b.checkpoint_ns = f.checkpoint_ns \
  AND b.channel = f.channel AND b.version = f.version \
  AND NOT EXISTS ( \
    SELECT 1 FROM checkpoints c \
    WHERE c.thread_id = f.thread_id AND c.checkpoint_ns = f.checkpoint_ns \
      AND c.checkpoint -> 'channel_versions' ->> f.channel = f.version)";

/// Copies every checkpoint, blob and write of thread `$1` to thread `$2`; a row already
/// in the target under the same key is replaced.
const COPY_THREAD: &str = "WITH cps AS ( \
    INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
    SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
    FROM checkpoints WHERE thread_id = $1 \
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET \
        parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type, \
        checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata \
), blobs AS ( \
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
    SELECT $2, checkpoint_ns, channel, version, type, blob \
    FROM checkpoint_blobs WHERE thread_id = $1 \
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET \
        type = EXCLUDED.type, blob = EXCLUDED.blob \
) \
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob) \
SELECT $2, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob \
FROM checkpoint_writes WHERE thread_id = $1 \
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET \
    task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, type = EXCLUDED.type, \
    blob = EXCLUDED.blob";

/// Removes every checkpoint, blob and write of a thread.
pub(crate) async fn delete_thread(client: &Client, thread_id: &str) -> Result<()> {
    let stmt = client.prepare_cached(DELETE_THREAD).await.map_err(pg)?;
    client.execute(&stmt, &[&thread_id]).await.map_err(pg)?;
    Ok(())
}

/// Deletes the checkpoints of the listed runs, their writes and the blobs only they used.
pub(crate) async fn delete_for_runs(client: &mut Client, run_ids: &[String]) -> Result<()> {
    if run_ids.is_empty() {
        return Ok(());
    }
    let tx = client.transaction().await.map_err(pg)?;
    let rows = tx.query(DELETE_RUNS, &[&run_ids]).await.map_err(pg)?;
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
        tx.execute(ORPHAN_PARENTS, &[&t, &n, &i])
            .await
            .map_err(pg)?;
    }
    if !freed.is_empty() {
        let [t, n, c, v] = columns(&freed);
        tx.execute(GARBAGE_BLOBS, &[&t, &n, &c, &v])
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
    let stmt = client.prepare_cached(COPY_THREAD).await.map_err(pg)?;
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

/// Deletes every row of the threads `$1`.
const DELETE_THREADS: &str = "WITH a AS (DELETE FROM checkpoints WHERE thread_id = ANY($1)), \
b AS (DELETE FROM checkpoint_blobs WHERE thread_id = ANY($1)) \
DELETE FROM checkpoint_writes WHERE thread_id = ANY($1)";

/// The threads of `$1` that use a DeltaChannel: update counters in their metadata, or an
/// inline `true` with a blob behind it (a snapshot; a plain `true` has no blob).
const DELTA_THREADS: &str = "SELECT thread_id FROM checkpoints \
WHERE thread_id = ANY($1) \
  AND (metadata ? 'counters_since_delta_snapshot' OR metadata ? 'delta_writes_versioned') \
UNION \
SELECT c.thread_id FROM checkpoints c \
CROSS JOIN LATERAL jsonb_each(c.checkpoint -> 'channel_values') AS v \
WHERE c.thread_id = ANY($1) AND v.value = 'true'::jsonb AND EXISTS ( \
    SELECT 1 FROM checkpoint_blobs b \
    WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns \
      AND b.channel = v.key AND b.version = c.checkpoint -> 'channel_versions' ->> v.key)";

/// Per namespace of thread `$1`: the latest checkpoint, the parent it reads its sends
/// from (format ≤ 3 only), the root checkpoint its call started from, whether that is saved.
const HEADS: &str = "SELECT h.checkpoint_ns, h.checkpoint_id, \
    CASE WHEN (c.checkpoint ->> 'v')::int < 4 AND EXISTS ( \
        SELECT 1 FROM checkpoint_writes w \
        WHERE w.thread_id = $1 AND w.checkpoint_ns = h.checkpoint_ns \
          AND w.checkpoint_id = c.parent_checkpoint_id AND w.channel = '__pregel_tasks' \
    ) THEN c.parent_checkpoint_id END, \
    c.metadata -> 'parents' ->> '', \
    EXISTS ( \
        SELECT 1 FROM checkpoints r \
        WHERE r.thread_id = $1 AND r.checkpoint_ns = '' \
          AND r.checkpoint_id = c.metadata -> 'parents' ->> '') \
FROM ( \
    SELECT DISTINCT ON (checkpoint_ns) checkpoint_ns, checkpoint_id FROM checkpoints \
    WHERE thread_id = $1 ORDER BY checkpoint_ns, checkpoint_id DESC \
) AS h \
JOIN checkpoints c ON c.thread_id = $1 AND c.checkpoint_ns = h.checkpoint_ns \
  AND c.checkpoint_id = h.checkpoint_id";

/// Deletes the subgraph-call namespaces `$2` of thread `$1`.
const DELETE_NAMESPACES: &str = "WITH a AS ( \
    DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = ANY($2)), \
b AS (DELETE FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = ANY($2)) \
DELETE FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = ANY($2)";

/// Deletes the checkpoints of `($1, $2)` not in `$3` with their writes; returns the
/// `(channel, version)` pairs they referenced.
const DELETE_UNKEPT: &str = "WITH gone AS ( \
    DELETE FROM checkpoints \
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id <> ALL($3) \
    RETURNING checkpoint_id, checkpoint -> 'channel_versions' AS versions \
), writes AS ( \
    DELETE FROM checkpoint_writes \
    WHERE thread_id = $1 AND checkpoint_ns = $2 \
      AND checkpoint_id IN (SELECT checkpoint_id FROM gone) \
) \
SELECT DISTINCT v.key, v.value FROM gone CROSS JOIN LATERAL jsonb_each_text(gone.versions) AS v";

/// Clears the parent of kept checkpoints `$3` whose parent is not kept.
const PRUNE_ORPHAN_PARENTS: &str = "UPDATE checkpoints SET parent_checkpoint_id = NULL \
WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ANY($3) \
  AND parent_checkpoint_id <> ALL($3)";

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
            tx.execute(DELETE_THREADS, &[&thread_ids])
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
        .query(DELTA_THREADS, &[&thread_ids])
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

/// One namespace head as [`HEADS`] returns it.
struct Head {
    ns: String,
    kept: Vec<String>,
    root: Option<String>,
    root_saved: bool,
}

/// The statements of one thread's `KeepLatest`, inside its transaction.
async fn keep_latest(tx: &Transaction<'_>, thread: &str) -> Result<()> {
    let rows = tx.query(HEADS, &[&thread]).await.map_err(pg)?;
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
        tx.execute(DELETE_NAMESPACES, &[&thread, &calls])
            .await
            .map_err(pg)?;
    }
    for (ns, ids) in kept {
        if calls.contains(&ns) {
            continue;
        }
        let freed = tx
            .query(DELETE_UNKEPT, &[&thread, &ns, &ids])
            .await
            .map_err(pg)?;
        tx.execute(PRUNE_ORPHAN_PARENTS, &[&thread, &ns, &ids])
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
        tx.execute(GARBAGE_BLOBS, &[&t, &n, &c, &v])
            .await
            .map_err(pg)?;
    }
    Ok(())
}
