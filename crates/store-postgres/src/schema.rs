//! The schema: LangGraph's `PostgresStore` migrations, applied in its order and tracked in
//! its `store_migrations` table, so either side may create the tables.

use crate::op::backend;
use crate::sql::{self, MIGRATIONS};
use deadpool_postgres::Client;
use stategraph_store::Result;

/// Creates the tables and applies missing migrations (each outside a transaction, as
/// `CREATE INDEX CONCURRENTLY` requires).
pub(crate) async fn migrate(client: &Client) -> Result<()> {
    client
        .batch_execute(sql::CREATE_MIGRATIONS)
        .await
        .map_err(|e| backend("setup", e))?;
    let row = client
        .query_opt(sql::SELECT_MIGRATION, &[])
        .await
        .map_err(|e| backend("setup", e))?;
    let start = row.map_or(0, |r| r.get::<_, i32>(0) + 1);
    for (v, stmt) in MIGRATIONS.iter().enumerate().skip(start.max(0) as usize) {
        client
            .batch_execute(stmt)
            .await
            .map_err(|e| backend(&format!("migration {v}"), e))?;
        client
            .execute(sql::INSERT_MIGRATION, &[&(v as i32)])
            .await
            .map_err(|e| backend("setup", e))?;
    }
    Ok(())
}
