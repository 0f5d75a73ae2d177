//! The tables, exactly as LangGraph's `SqliteSaver.setup()` creates them, and the pragmas
//! every connection gets.
//!
//! The DDL is LangGraph's, column for column and type for type (docs/format.md#sqlite), so either
//! saver can create a file and the other one use it. It is idempotent: every open runs it.
//! Databases created before `writes.task_path` existed get the column added, as Python's
//! setup does. No version table is added: the schema has no other version to tell apart,
//! and a file must stay exactly what Python would have made.

use std::time::Duration;

use rusqlite::Connection;
use stategraph_checkpoint::Result;

use crate::error::SqlResultExt;

/// How long a connection waits for a lock before SQLite reports `SQLITE_BUSY`.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The two tables of LangGraph's SQLite saver.
pub(crate) const CREATE_TABLES: &str = "
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint BLOB,
    metadata BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
";

/// The migration of databases created before `task_path` existed.
const ADD_TASK_PATH: &str = "ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''";

/// Sets the pragmas of the writing connection, then creates or migrates the tables.
///
/// `wal` is false for in-memory databases, which have no write-ahead log.
pub(crate) fn setup(conn: &Connection, wal: bool) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT).backend()?;
    if wal {
        // Persistent in the file: every later connection, ours or Python's, uses WAL.
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
            .backend()?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(crate::error::backend_msg(format!(
                "the database refused WAL mode (journal_mode is {mode:?})"
            )));
        }
    }
    conn.execute_batch(CREATE_TABLES).backend()?;
    if !has_column(conn, "writes", "task_path")? {
        conn.execute_batch(ADD_TASK_PATH).backend()?;
    }
    Ok(())
}

/// Sets up a reading connection: it waits for locks and can never write, so a reader can
/// never take the write lock.
pub(crate) fn setup_reader(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT).backend()?;
    // Plans that do not depend on the bound values: otherwise SQLite (built with STAT4)
    // re-prepares a cached statement whenever a parameter it looked at is bound again,
    // which cost the delta-history walk three compilations per call. Our reads' plans are
    // key ranges whatever the values (see the plan tests in `read`).
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )
    .backend()?;
    conn.execute_batch("PRAGMA query_only = ON").backend()
}

/// Whether `table` has a column named `column`.
fn has_column(conn: &Connection, table: &str, column: &str) -> Result<bool> {
    let mut stmt = conn
        .prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2")
        .backend()?;
    stmt.exists([table, column]).backend()
}
