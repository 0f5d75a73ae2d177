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
use crate::sql;

/// How long a connection waits for a lock before SQLite reports `SQLITE_BUSY`.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Sets the pragmas of the writing connection, then creates or migrates the tables.
///
/// `wal` is false for in-memory databases, which have no write-ahead log.
pub(crate) fn setup(conn: &Connection, wal: bool) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT).backend()?;
    if wal {
        // Persistent in the file: every later connection, ours or Python's, uses WAL.
        let mode: String = conn
            .query_row(sql::JOURNAL_WAL, [], |row| row.get(0))
            .backend()?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(crate::error::backend_msg(format!(
                "the database refused WAL mode (journal_mode is {mode:?})"
            )));
        }
    }
    conn.execute_batch(sql::CREATE_TABLES).backend()?;
    if !has_column(conn, "writes", "task_path")? {
        conn.execute_batch(sql::ADD_TASK_PATH).backend()?;
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
    conn.execute_batch(sql::QUERY_ONLY).backend()
}

/// Whether `table` has a column named `column`.
fn has_column(conn: &Connection, table: &str, column: &str) -> Result<bool> {
    let mut stmt = conn.prepare(sql::HAS_COLUMN).backend()?;
    stmt.exists([table, column]).backend()
}
