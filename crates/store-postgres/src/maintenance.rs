//! Upkeep: the TTL sweep.

use crate::op::backend;
use crate::sql;
use deadpool_postgres::Client;
use stategraph_store::Result;

/// Deletes every expired item; returns how many.
pub(crate) async fn sweep_expired(client: &Client) -> Result<usize> {
    let n = client
        .execute(sql::SWEEP, &[])
        .await
        .map_err(|e| backend("sweep", e))?;
    Ok(n as usize)
}
