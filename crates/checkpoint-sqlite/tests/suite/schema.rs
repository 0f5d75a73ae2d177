//! The file format: LangGraph's tables and column types, WAL mode, the `task_path`
//! migration, and reads that never need the write lock.

use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource,
    ListOptions, Value,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

use super::support::{TempPath, TempSaver};

/// `(name, type, notnull, default, pk)` of every column of a table.
fn columns(
    conn: &rusqlite::Connection,
    table: &str,
) -> Vec<(String, String, i64, Option<String>, i64)> {
    let mut stmt = conn
        .prepare("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1) ORDER BY cid")
        .expect("prepare");
    let rows = stmt
        .query_map([table], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .expect("query");
    rows.map(|r| r.expect("column")).collect()
}

fn col(
    name: &str,
    ty: &str,
    notnull: i64,
    default: Option<&str>,
    pk: i64,
) -> (String, String, i64, Option<String>, i64) {
    (
        name.to_owned(),
        ty.to_owned(),
        notnull,
        default.map(str::to_owned),
        pk,
    )
}

#[test]
fn tables_are_langgraphs_column_for_column() {
    let saver = TempSaver::new("ddl");
    let raw = saver.file.raw();
    assert_eq!(
        columns(&raw, "checkpoints"),
        vec![
            col("thread_id", "TEXT", 1, None, 1),
            col("checkpoint_ns", "TEXT", 1, Some("''"), 2),
            col("checkpoint_id", "TEXT", 1, None, 3),
            col("parent_checkpoint_id", "TEXT", 0, None, 0),
            col("type", "TEXT", 0, None, 0),
            col("checkpoint", "BLOB", 0, None, 0),
            col("metadata", "BLOB", 0, None, 0),
        ]
    );
    assert_eq!(
        columns(&raw, "writes"),
        vec![
            col("thread_id", "TEXT", 1, None, 1),
            col("checkpoint_ns", "TEXT", 1, Some("''"), 2),
            col("checkpoint_id", "TEXT", 1, None, 3),
            col("task_id", "TEXT", 1, None, 4),
            col("task_path", "TEXT", 1, Some("''"), 0),
            col("idx", "INTEGER", 1, None, 5),
            col("channel", "TEXT", 1, None, 0),
            col("type", "TEXT", 0, None, 0),
            col("value", "BLOB", 0, None, 0),
        ]
    );
    let mode: String = raw
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("journal mode");
    assert_eq!(mode, "wal");
}

async fn put_one(saver: &dyn CheckpointSaver, thread: &str, id: &str) -> CheckpointConfig {
    let mut cp = Checkpoint::empty(id, "2025-01-01T00:00:00+00:00");
    cp.channel_values.insert("x".into(), Value::from(id));
    saver
        .put(
            &CheckpointConfig::thread(thread),
            &cp,
            &CheckpointMetadata::new(CheckpointSource::Input, -1),
            &Default::default(),
        )
        .await
        .expect("put")
}

#[tokio::test]
async fn reopening_keeps_everything() {
    let file = TempPath::new("reopen");
    {
        let saver = SqliteSaver::open(file.path()).expect("open");
        let stored = put_one(&saver, "t", "1").await;
        saver
            .put_writes(&stored, &[("ch".into(), Value::from(1))], "task", "p")
            .await
            .expect("put_writes");
    }
    let saver = SqliteSaver::open(file.path()).expect("reopen");
    let tuple = saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(
        tuple.checkpoint.channel_values.get("x"),
        Some(&Value::from("1"))
    );
    assert_eq!(tuple.pending_writes.len(), 1);
}

#[tokio::test]
async fn a_database_from_before_task_path_is_migrated() {
    let file = TempPath::new("old");
    {
        let raw = file.raw();
        raw.execute_batch(
            "CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL \
             DEFAULT '', checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, \
             checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
             CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', \
             checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, \
             channel TEXT NOT NULL, type TEXT, value BLOB, \
             PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
             INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, \
             type, value) VALUES ('t', '', '1', 'old-task', 0, 'ch', 'msgpack', X'01');",
        )
        .expect("old schema");
    }
    let saver = SqliteSaver::open(file.path()).expect("open old file");
    put_one(&saver, "t", "1").await;
    let tuple = saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(tuple.pending_writes.len(), 1);
    assert_eq!(tuple.pending_writes[0].task_id, "old-task");
    assert_eq!(tuple.pending_writes[0].value, Value::Int(1));
    let path: String = file
        .raw()
        .query_row("SELECT task_path FROM writes", [], |r| r.get(0))
        .expect("task_path column");
    assert_eq!(path, "");
}

#[tokio::test]
async fn reads_succeed_while_another_connection_holds_the_write_lock() {
    let saver = TempSaver::new("locked");
    put_one(&*saver, "t", "1").await;
    let other = saver.file.raw();
    other
        .execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    // A read that needed the write lock would wait for it and then fail with SQLITE_BUSY.
    let listed = saver
        .list(None, &ListOptions::default())
        .await
        .expect("list while locked");
    assert_eq!(listed.len(), 1);
    assert!(saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get while locked")
        .is_some());
    other.execute_batch("ROLLBACK").expect("release");
}

#[tokio::test]
async fn writes_succeed_while_another_connection_is_reading() {
    let saver = TempSaver::unfenced("reading");
    put_one(&*saver, "t", "1").await;
    let other = saver.file.raw();
    other.execute_batch("BEGIN").expect("begin");
    let seen: i64 = other
        .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
        .expect("read snapshot");
    put_one(&*saver, "t", "2").await;
    // The open snapshot still sees one row; the saver already sees two.
    let still: i64 = other
        .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
        .expect("same snapshot");
    assert_eq!((seen, still), (1, 1));
    other.execute_batch("COMMIT").expect("end");
    let listed = saver
        .list(None, &ListOptions::default())
        .await
        .expect("list");
    assert_eq!(listed.len(), 2);
}

#[test]
fn works_without_a_tokio_runtime() {
    let saver = SqliteSaver::in_memory().expect("open");
    let got = block_on_inline(saver.get_tuple(&CheckpointConfig::thread("t")));
    assert!(got.expect("get").is_none());
}

/// Polls a future to completion on this thread (the saver runs inline without a runtime).
fn block_on_inline<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}
