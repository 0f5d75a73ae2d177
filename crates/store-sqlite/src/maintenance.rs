//! Upkeep: the TTL sweep, which deletes expired items (and their vectors) in one write
//! transaction.

use crate::error::Result;
use crate::sql;
use rusqlite::{params, Connection};
use stategraph_store::Timestamp;

/// Deletes every item expired at `now`; returns how many.
pub(crate) fn sweep_expired(
    conn: &mut Connection,
    vectors_table: bool,
    now: Timestamp,
) -> Result<usize> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut expired = Vec::new();
    {
        let mut stmt = tx.prepare(sql::SELECT_EXPIRING)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let t: String = r.get(2)?;
            if Timestamp::parse(&t).is_some_and(|t| t <= now) {
                expired.push((r.get::<_, String>(0)?, r.get::<_, String>(1)?));
            }
        }
    }
    for (prefix, key) in &expired {
        tx.execute(sql::DELETE_ITEM, params![prefix, key])?;
        if vectors_table {
            tx.execute(sql::DELETE_VECTORS, params![prefix, key])?;
        }
    }
    tx.commit()?;
    Ok(expired.len())
}
