//! The extended operations: `delete_for_runs`, `copy_thread` and `prune`.
//!
//! They follow [`MemorySaver`](stategraph_checkpoint::MemorySaver): removed checkpoints
//! take their writes with them, and a remaining checkpoint whose parent was removed gets
//! no parent (`parent_checkpoint_id = NULL`), so no tuple points at a checkpoint that is
//! gone. There are no blobs to collect: values live inside the checkpoint rows. Each
//! operation runs in the one write transaction the caller opened, so it applies fully or
//! not at all.

use rusqlite::{params, Transaction};
use stategraph_checkpoint::{PruneStrategy, Result, Value};

use crate::error::SqlResultExt;
use crate::json;
use crate::read::bytes;
use crate::sql;

/// Deletes every checkpoint, in any thread and namespace, whose metadata `run_id` is one
/// of `run_ids`, with its writes.
///
/// SQL narrows the rows to those with a string `run_id` in the list (bound as one JSON
/// array); each candidate's metadata is then decoded to confirm it, as `json.loads` reads
/// it (the last of repeated keys wins).
pub(crate) fn delete_for_runs(tx: &Transaction<'_>, run_ids: &[String]) -> Result<()> {
    if run_ids.is_empty() {
        return Ok(());
    }
    let wanted = json::to_json(&Value::List(
        run_ids.iter().map(|r| Value::from(r.as_str())).collect(),
    ))?;
    let mut targets: Vec<(String, String, String)> = Vec::new();
    {
        let mut stmt = tx.prepare(sql::RUN_CANDIDATES).backend()?;
        let mut rows = stmt.query([&wanted]).backend()?;
        while let Some(row) = rows.next().backend()? {
            let metadata = bytes(row.get_ref(3).backend()?).unwrap_or_default();
            let run = json::from_json(&metadata)?
                .get("run_id")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if run.is_some_and(|r| run_ids.contains(&r)) {
                targets.push((
                    row.get(0).backend()?,
                    row.get(1).backend()?,
                    row.get(2).backend()?,
                ));
            }
        }
    }
    let mut orphan = tx.prepare_cached(sql::ORPHAN_CHILDREN).backend()?;
    let mut drop_writes = tx.prepare_cached(sql::DELETE_CHECKPOINT_WRITES).backend()?;
    let mut drop_checkpoint = tx.prepare_cached(sql::DELETE_CHECKPOINT).backend()?;
    for (thread, ns, id) in &targets {
        let key = params![thread, ns, id];
        orphan.execute(key).backend()?;
        drop_writes.execute(key).backend()?;
        drop_checkpoint.execute(key).backend()?;
    }
    Ok(())
}

/// Copies every checkpoint and write of `source` (all namespaces) to `target`, keeping
/// ids; rows already in `target` under the same keys are replaced. An unknown source
/// copies nothing.
pub(crate) fn copy_thread(tx: &Transaction<'_>, source: &str, target: &str) -> Result<()> {
    if source == target {
        return Ok(());
    }
    tx.execute(sql::COPY_CHECKPOINTS, [source, target])
        .backend()?;
    tx.execute(sql::COPY_WRITES, [source, target]).backend()?;
    Ok(())
}

/// Removes every checkpoint and write of a thread, in every namespace.
pub(crate) fn delete_thread(tx: &Transaction<'_>, thread_id: &str) -> Result<()> {
    for stmt in [sql::DELETE_THREAD_CHECKPOINTS, sql::DELETE_THREAD_WRITES] {
        tx.execute(stmt, [thread_id]).backend()?;
    }
    Ok(())
}

/// Thins the listed threads: `KeepLatest` keeps, per namespace, the newest checkpoint with
/// its writes (and, on a thread with DeltaChannels, the ancestors its delta channels are
/// rebuilt from, see [`prune_keeping`]) (and drops writes whose checkpoint is not stored); `Delete` removes the
/// threads.
pub(crate) fn prune(
    tx: &Transaction<'_>,
    serde: &dyn stategraph_checkpoint::serde::Serializer,
    thread_ids: &[String],
    strategy: PruneStrategy,
) -> Result<()> {
    for thread in thread_ids {
        if strategy == PruneStrategy::Delete {
            delete_thread(tx, thread)?;
            continue;
        }
        let chain = crate::delta::chain_needed(tx, serde, thread)?;
        if !chain.is_empty() {
            prune_keeping(tx, thread, &chain)?;
            continue;
        }
        // First unlink each kept checkpoint from a parent that is about to go.
        tx.execute(sql::PRUNE_UNLINK_KEPT, [thread]).backend()?;
        tx.execute(sql::PRUNE_OLDER, [thread]).backend()?;
        tx.execute(sql::DELETE_ORPHAN_WRITES, [thread]).backend()?;
    }
    Ok(())
}

/// `KeepLatest` on a thread whose latest checkpoints need ancestors (`chain`, as
/// `(namespace, id)`) for their DeltaChannels: every other checkpoint goes, with its writes;
/// a kept checkpoint whose parent went loses its parent link.
fn prune_keeping(tx: &Transaction<'_>, thread: &str, chain: &[(String, String)]) -> Result<()> {
    let keys: Vec<String> = chain
        .iter()
        .map(|(ns, id)| format!("{ns}\u{0}{id}"))
        .collect();
    let list = (0..keys.len())
        .map(|i| format!("?{}", i + 2))
        .collect::<Vec<_>>()
        .join(", ");
    let mut params: Vec<String> = vec![thread.to_owned()];
    params.extend(keys);
    tx.execute(
        &sql::prune_older_except(&list),
        rusqlite::params_from_iter(params.iter()),
    )
    .backend()?;
    tx.execute(sql::UNLINK_MISSING_PARENTS, [thread])
        .backend()?;
    tx.execute(sql::DELETE_ORPHAN_WRITES, [thread]).backend()?;
    Ok(())
}
