//! A run after it is queued: read it, list a thread's runs, ask it to stop, cancel or
//! delete it, and read the notices that announce it.

use deadpool_postgres::Pool;
use serde_json::{json, Value as Json};
use uuid::Uuid;

use super::schema::CANCEL_CHANNEL;
use crate::error::{Result, ServerError};

/// Asks the process running `run_id` to stop it (`action` is `interrupt` or `rollback`);
/// true when the run was running.
pub async fn request_cancel(pool: &Pool, run_id: Uuid, action: &str) -> Result<bool> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let n = tx
        .execute(
            &tx.prepare_cached(
                "UPDATE runs SET cancel = $2 WHERE run_id = $1 AND status = 'running'",
            )
            .await?,
            &[&run_id, &action],
        )
        .await?;
    if n > 0 {
        tx.execute(
            &tx.prepare_cached("SELECT pg_notify($1, $2)").await?,
            &[&CANCEL_CHANNEL, &run_id.to_string()],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(n > 0)
}

/// How a run was asked to stop, if it was.
pub async fn cancel_requested(pool: &Pool, run_id: Uuid) -> Result<Option<String>> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached("SELECT cancel FROM runs WHERE run_id = $1")
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(row.and_then(|r| r.get(0)))
}

/// Has a run's events and end announced by `NOTIFY` from now on (a reader that joins it
/// may be in another process than its worker; see the module docs).
pub async fn watch_run(pool: &Pool, run_id: Uuid) -> Result<()> {
    let client = pool.get().await?;
    client
        .execute(
            &client
                .prepare_cached(
                    "UPDATE runs SET announce = true WHERE run_id = $1 AND NOT announce",
                )
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(())
}

const RUN_COLS: &str = "run_id, thread_id, assistant_id, to_json(created_at)#>>'{}', \
                        to_json(updated_at)#>>'{}', status, metadata, kwargs, multitask_strategy";

/// A run row as the SDK's `Run`.
fn run_json(row: &tokio_postgres::Row) -> Json {
    let run_id: Uuid = row.get(0);
    let thread_id: Uuid = row.get(1);
    let assistant_id: Uuid = row.get(2);
    let created: String = row.get(3);
    let updated: String = row.get(4);
    let status: String = row.get(5);
    let metadata: Json = row.get(6);
    let kwargs: Json = row.get(7);
    let strategy: String = row.get(8);
    json!({
        "run_id": run_id.to_string(),
        "thread_id": thread_id.to_string(),
        "assistant_id": assistant_id.to_string(),
        "created_at": created,
        "updated_at": updated,
        "status": status,
        "metadata": metadata,
        "kwargs": kwargs,
        "multitask_strategy": strategy,
    })
}

/// A run of a thread, or 404.
pub async fn get_run(pool: &Pool, thread_id: Uuid, run_id: Uuid) -> Result<Json> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(&format!(
                    "SELECT {RUN_COLS} FROM runs WHERE run_id = $1 AND thread_id = $2"
                ))
                .await?,
            &[&run_id, &thread_id],
        )
        .await?;
    row.map(|r| run_json(&r))
        .ok_or_else(|| ServerError::NotFound(format!("run {run_id} not found")))
}

/// The runs of a thread, newest first.
pub async fn list_runs(
    pool: &Pool,
    thread_id: Uuid,
    status: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<Vec<Json>> {
    let client = pool.get().await?;
    let rows = client
        .query(
            &client
                .prepare_cached(&format!(
                    "SELECT {RUN_COLS} FROM runs WHERE thread_id = $1
                 AND ($2::text IS NULL OR status = $2)
                 ORDER BY created_at DESC LIMIT $3 OFFSET $4"
                ))
                .await?,
            &[&thread_id, &status, &limit, &offset],
        )
        .await?;
    Ok(rows.iter().map(run_json).collect())
}

/// A run's status and result: `(status, output, error)`; `None` when there is no such run.
pub async fn run_result(pool: &Pool, run_id: Uuid) -> Result<Option<(String, Json, Json)>> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(
                    "SELECT status, coalesce(output, 'null'), coalesce(error, 'null') FROM runs
             WHERE run_id = $1",
                )
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(row.map(|r| (r.get(0), r.get(1), r.get(2))))
}

/// A run's id and the sending process's id, from the payload of a `NOTIFY` on
/// [`EVENTS_CHANNEL`](super::EVENTS_CHANNEL) or [`RUN_END_CHANNEL`](super::RUN_END_CHANNEL)
/// (or a bare run id, as on [`CANCEL_CHANNEL`]).
pub fn run_notice(payload: &str) -> Option<(Uuid, Option<&str>)> {
    match payload.split_once(' ') {
        Some((id, process)) => Some((id.parse().ok()?, Some(process))),
        None => Some((payload.parse().ok()?, None)),
    }
}

/// Whether a status is final.
pub fn is_final(status: &str) -> bool {
    !matches!(status, "pending" | "running")
}

/// Marks a pending run cancelled (`interrupted`); true when it was pending.
pub async fn cancel_pending(pool: &Pool, run_id: Uuid) -> Result<bool> {
    let client = pool.get().await?;
    let n = client
        .execute(
            &client
                .prepare_cached(
                    "UPDATE runs SET status = 'interrupted', updated_at = clock_timestamp()
             WHERE run_id = $1 AND status = 'pending'",
                )
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(n > 0)
}

/// Deletes a run row.
pub async fn delete_run(pool: &Pool, run_id: Uuid) -> Result<()> {
    let client = pool.get().await?;
    client
        .execute(
            &client
                .prepare_cached("DELETE FROM runs WHERE run_id = $1")
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_notices_name_the_run_and_the_sender() {
        let id = Uuid::new_v4();
        assert_eq!(run_notice(&format!("{id} p-1")), Some((id, Some("p-1"))));
        assert_eq!(run_notice(&id.to_string()), Some((id, None)));
        assert_eq!(run_notice("not a run"), None);
        assert_eq!(run_notice("x p-1"), None);
    }
}
