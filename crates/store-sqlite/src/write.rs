//! The op that writes: a put (or a delete, a put without a value), with its vectors, inside
//! the batch's transaction.

use crate::error::Result;
use crate::op::encode_vector;
use crate::sql;
use rusqlite::{params, Transaction};
use stategraph_store::{PutOp, StoreError, Timestamp};

/// Stores (or deletes) one item; `vectors` are its fields' embeddings, and `vectors_table`
/// says whether the store has the vector table (its old vectors are replaced).
pub(crate) fn put(
    tx: &Transaction<'_>,
    op: PutOp,
    vectors: Vec<(String, Vec<f32>)>,
    vectors_table: bool,
    now: Timestamp,
) -> Result<()> {
    let prefix = op.namespace.to_text();
    if vectors_table {
        tx.prepare_cached(sql::DELETE_VECTORS)?
            .execute(params![prefix, op.key])?;
    }
    let Some(value) = op.value else {
        tx.prepare_cached(sql::DELETE_ITEM)?
            .execute(params![prefix, op.key])?;
        return Ok(());
    };
    // Bytes, as Python binds `orjson.dumps(value)`: a BLOB of compact JSON.
    let text = serde_json::to_vec(&value).map_err(|e| StoreError::Backend(e.to_string()))?;
    let expires = op.ttl.map(|t| now.plus_minutes(t).to_sqlite_micros());
    tx.prepare_cached(sql::UPSERT_ITEM)?
        .execute(params![prefix, op.key, text, expires, op.ttl])?;
    for (field, v) in vectors {
        tx.prepare_cached(sql::UPSERT_VECTOR)?.execute(params![
            prefix,
            op.key,
            field,
            encode_vector(&v)
        ])?;
    }
    Ok(())
}
