//! The op that writes: a put (or a delete, a put without a value), with its vectors,
//! inside the batch's transaction.

use crate::op::{backend, VectorBackend};
use crate::sql;
use deadpool_postgres::GenericClient;
use stategraph_store::{PutOp, Result};

/// Stores (or deletes) one item; `embedded` are its fields' vectors, stored when the store
/// has a vector table (`vectors`), whose old vectors of the item are replaced.
pub(crate) async fn put<C: GenericClient + Sync>(
    tx: &C,
    op: PutOp,
    embedded: Vec<(String, Vec<f32>)>,
    vectors: Option<VectorBackend>,
) -> Result<()> {
    let db = |e: tokio_postgres::Error| backend("query", e);
    let prefix = op.namespace.to_text();
    if let Some(kind) = vectors {
        // A re-put replaces the item's vectors (no stale fields survive).
        tx.execute(&sql::delete_vectors(kind), &[&prefix, &op.key])
            .await
            .map_err(db)?;
    }
    let Some(value) = op.value else {
        tx.execute(sql::DELETE_ITEM, &[&prefix, &op.key])
            .await
            .map_err(db)?;
        return Ok(());
    };
    let text = serde_json::to_string(&value).map_err(|e| backend("json", e))?;
    let interval = op.ttl.map(|t| format!("{} seconds", t * 60.0));
    tx.execute(
        sql::UPSERT_ITEM,
        &[&prefix, &op.key, &text, &interval, &op.ttl],
    )
    .await
    .map_err(db)?;
    if let Some(kind) = vectors {
        let stmt = sql::insert_vector(kind);
        for (field, v) in embedded {
            tx.execute(&stmt, &[&prefix, &op.key, &field, &kind.literal(&v)])
                .await
                .map_err(db)?;
        }
    }
    Ok(())
}
