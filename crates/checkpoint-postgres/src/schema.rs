//! The schema: LangGraph's numbered migrations, applied by `setup` exactly as Python does.
//!
//! The position of a migration in [`MIGRATIONS`] is its version, recorded in
//! `checkpoint_migrations (v)` once applied, so a database set up by either
//! implementation is recognized by the other. Version 5 is a placeholder that keeps the
//! numbers aligned with databases made by older LangGraph releases; versions 6 to 8 build
//! their indexes `CONCURRENTLY`, which is why every migration runs on its own, outside a
//! transaction.

use deadpool_postgres::Client;
use stategraph_checkpoint::Result;

use crate::error::pg;
use crate::sql;

/// The migrations of `langgraph-checkpoint-postgres` 3.2.0, in order; index = version.
pub const MIGRATIONS: [&str; 10] = [
    // 0: the table recording which migrations ran.
    "CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY);",
    // 1: one row per checkpoint; primitive channel values inline in the JSONB.
    "CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint JSONB NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);",
    // 2: every other channel value, once per version.
    "CREATE TABLE IF NOT EXISTS checkpoint_blobs (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);",
    // 3: the pending writes of tasks.
    "CREATE TABLE IF NOT EXISTS checkpoint_writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    blob BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);",
    // 4: blobs may be NULL (tables made by old releases had NOT NULL).
    "ALTER TABLE checkpoint_blobs ALTER COLUMN blob DROP not null;",
    // 5: placeholder, keeps version numbers aligned.
    "SELECT 1;",
    // 6-8: per-thread indexes, built without locking writers out.
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_idx ON checkpoints(thread_id);",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_blobs_thread_id_idx ON checkpoint_blobs(thread_id);",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_writes_thread_id_idx ON checkpoint_writes(thread_id);",
    // 9: the task path of each write, sorted on when reading.
    "ALTER TABLE checkpoint_writes ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';",
]; // the last index is the schema version this crate expects

/// The newest migration version this crate knows.
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32 - 1;

/// Applies the migrations newer than the latest recorded one, each as its own statement
/// in autocommit mode, recording each version after it ran.
///
/// Running it again is a no-op. Two processes running it at once both apply the missing
/// migrations (every one is idempotent) and the second record of a version is ignored,
/// where Python's setup would fail on the duplicate key.
pub(crate) async fn setup(client: &Client) -> Result<()> {
    client.batch_execute(MIGRATIONS[0]).await.map_err(pg)?;
    let current = applied_version(client).await?;
    let record = client.prepare(sql::RECORD_MIGRATION).await.map_err(pg)?;
    // As in Python, a fresh database runs (and records) migration 0 a second time.
    for (v, migration) in MIGRATIONS.iter().enumerate() {
        let v = v as i32;
        if v <= current {
            continue;
        }
        client.batch_execute(migration).await.map_err(pg)?;
        client.execute(&record, &[&v]).await.map_err(pg)?;
    }
    Ok(())
}

/// The latest recorded migration version, `-1` when none is (or the table is missing).
pub(crate) async fn applied_version(client: &Client) -> Result<i32> {
    let exists = client
        .query_one(sql::HAS_MIGRATIONS, &[])
        .await
        .map_err(pg)?;
    if !exists.get::<_, bool>(0) {
        return Ok(-1);
    }
    let row = client
        .query_opt(sql::LATEST_MIGRATION, &[])
        .await
        .map_err(pg)?;
    Ok(row.map_or(-1, |r| r.get::<_, i32>(0)))
}
