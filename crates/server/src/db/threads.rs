//! The threads table: create, read, search, update, copy and delete a thread's row.

use deadpool_postgres::Pool;
use serde_json::{json, Value as Json};
use uuid::Uuid;

use crate::error::{Result, ServerError};

const THREAD_COLS: &str = "thread_id, to_json(created_at)#>>'{}', to_json(updated_at)#>>'{}', \
                           metadata, status, values, interrupts";

/// A thread row as the SDK's `Thread`.
fn thread_json(row: &tokio_postgres::Row) -> Json {
    let id: Uuid = row.get(0);
    let created: String = row.get(1);
    let updated: String = row.get(2);
    let metadata: Json = row.get(3);
    let status: String = row.get(4);
    let values: Option<Json> = row.get(5);
    let interrupts: Json = row.get(6);
    json!({
        "thread_id": id.to_string(),
        "created_at": created,
        "updated_at": updated,
        "metadata": metadata,
        "status": status,
        "config": {},
        "values": values,
        "interrupts": interrupts,
    })
}

/// Inserts a thread; `if_exists = "do_nothing"` returns the existing one, otherwise an
/// existing id is a conflict.
pub async fn create_thread(
    pool: &Pool,
    id: Uuid,
    metadata: &Json,
    do_nothing: bool,
) -> Result<Json> {
    let client = pool.get().await?;
    // A new row is the columns' defaults but for its id and metadata: only its time comes
    // back (not the metadata through jsonb and a parse).
    let inserted = client
        .query_opt(
            &client
                .prepare_cached(
                    "INSERT INTO threads (thread_id, metadata) VALUES ($1, $2)
                 ON CONFLICT (thread_id) DO NOTHING RETURNING to_json(created_at)#>>'{}'",
                )
                .await?,
            &[&id, metadata],
        )
        .await?;
    match inserted {
        Some(row) => {
            let created: &str = row.get(0);
            Ok(json!({
                "thread_id": id.to_string(),
                "created_at": created,
                "updated_at": created,
                "metadata": metadata,
                "status": "idle",
                "config": {},
                "values": Json::Null,
                "interrupts": {},
            }))
        }
        None if do_nothing => get_thread(pool, id).await,
        None => Err(ServerError::Conflict(format!("thread {id} already exists"))),
    }
}

/// A thread, or 404.
pub async fn get_thread(pool: &Pool, id: Uuid) -> Result<Json> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(&format!(
                    "SELECT {THREAD_COLS} FROM threads WHERE thread_id = $1"
                ))
                .await?,
            &[&id],
        )
        .await?;
    row.map(|r| thread_json(&r))
        .ok_or_else(|| ServerError::NotFound(format!("thread {id} not found")))
}

/// Threads whose metadata contains `metadata` and whose status is `status` (when given),
/// newest first.
pub async fn search_threads(
    pool: &Pool,
    metadata: &Json,
    status: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<Vec<Json>> {
    let client = pool.get().await?;
    let rows = client
        .query(
            &client
                .prepare_cached(&format!(
                    "SELECT {THREAD_COLS} FROM threads WHERE metadata @> $1
                 AND ($2::text IS NULL OR status = $2)
                 ORDER BY created_at DESC LIMIT $3 OFFSET $4"
                ))
                .await?,
            &[metadata, &status, &limit, &offset],
        )
        .await?;
    Ok(rows.iter().map(thread_json).collect())
}

/// Deletes a thread row and its runs; false when there was none.
pub async fn delete_thread(pool: &Pool, id: Uuid) -> Result<bool> {
    let client = pool.get().await?;
    client
        .execute(
            &client
                .prepare_cached("DELETE FROM runs WHERE thread_id = $1")
                .await?,
            &[&id],
        )
        .await?;
    let n = client
        .execute(
            &client
                .prepare_cached("DELETE FROM threads WHERE thread_id = $1")
                .await?,
            &[&id],
        )
        .await?;
    Ok(n > 0)
}

/// Records a thread's values and status after a run or `update_state`.
pub async fn set_thread_state(
    pool: &Pool,
    id: Uuid,
    status: Option<&str>,
    values: &Json,
    interrupts: &Json,
) -> Result<()> {
    let client = pool.get().await?;
    client
        .execute(
            &client.prepare_cached("UPDATE threads SET values = $2, interrupts = $3, status = coalesce($4, status),
             updated_at = now() WHERE thread_id = $1").await?,
            &[&id, values, interrupts, &status],
        )
        .await?;
    Ok(())
}

/// Deletes a thread row only (its runs stay as a record): a stateless run's thread.
pub async fn delete_thread_row(pool: &Pool, id: Uuid) -> Result<()> {
    let client = pool.get().await?;
    client
        .execute(
            &client
                .prepare_cached("DELETE FROM threads WHERE thread_id = $1")
                .await?,
            &[&id],
        )
        .await?;
    Ok(())
}

/// Merges `metadata` into a thread's metadata; 404 when there is no such thread.
pub async fn patch_thread(pool: &Pool, id: Uuid, metadata: &Json) -> Result<Json> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(&format!(
                    "UPDATE threads SET metadata = metadata || $2, updated_at = now()
                 WHERE thread_id = $1 RETURNING {THREAD_COLS}"
                ))
                .await?,
            &[&id, metadata],
        )
        .await?;
    row.map(|r| thread_json(&r))
        .ok_or_else(|| ServerError::NotFound(format!("thread {id} not found")))
}

/// A new thread with the metadata, values and status of `source` (not its runs).
pub async fn copy_thread_row(pool: &Pool, source: Uuid, target: Uuid) -> Result<Json> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(&format!(
                    "INSERT INTO threads (thread_id, metadata, status, values, interrupts)
                 SELECT $2, metadata, CASE WHEN status = 'busy' THEN 'idle' ELSE status END,
                 values, interrupts FROM threads WHERE thread_id = $1
                 RETURNING {THREAD_COLS}"
                ))
                .await?,
            &[&source, &target],
        )
        .await?;
    row.map(|r| thread_json(&r))
        .ok_or_else(|| ServerError::NotFound(format!("thread {source} not found")))
}
