//! Removing and copying whole threads or runs: `delete_thread`, `delete_for_runs`,
//! `copy_thread`. Each runs in one transaction.
//!
//! Python's saver has `delete_thread` only; the other two follow the rules the in-memory
//! saver and the conformance suite state. Like `prune`, `delete_for_runs` deletes the
//! writes of the checkpoints it deletes and the blobs they referenced that no remaining
//! checkpoint of their namespace references, and leaves a remaining checkpoint whose
//! parent it deleted without a parent.

use std::collections::BTreeSet;

use deadpool_postgres::Client;
use stategraph_checkpoint::Result;

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
