//! The migrations: LangGraph's `SqliteStore` tables, applied in its order and tracked in
//! its tables, so a file either side created is the other's too.

use crate::error::Result;
use crate::sql;
use rusqlite::{Connection, OptionalExtension};

/// Applies the migrations of `migrations` that `table` has not recorded yet.
pub(crate) fn migrate(conn: &Connection, table: &str, migrations: &[&str]) -> Result<()> {
    conn.execute_batch(&sql::create_migration_table(table))?;
    let current: Option<i64> = conn
        .query_row(&sql::select_migration(table), [], |r| r.get(0))
        .optional()?;
    let start = current.map_or(0, |v| v + 1);
    for (v, stmt) in migrations.iter().enumerate().skip(start.max(0) as usize) {
        conn.execute_batch(stmt)?;
        conn.execute(&sql::insert_migration(table), [v as i64])?;
    }
    Ok(())
}
