//! What the `stategraph` command reads of a store before it opens one read-only: whether
//! the database holds the `store` table. The statement is in `sql.rs`; the error is the
//! driver's, for the command to word.

use crate::sql;
use deadpool_postgres::Client;

/// Whether the database holds LangGraph's `store` table.
pub async fn has_store_table(client: &Client) -> Result<bool, tokio_postgres::Error> {
    Ok(client.query_one(sql::HAS_STORE_TABLE, &[]).await?.get(0))
}
