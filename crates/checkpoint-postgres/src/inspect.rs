//! What the `stategraph` command reads below the [`CheckpointSaver`] API, as typed
//! functions on a connection (the command's pools run every transaction read-only):
//! whether the tables are there, per-namespace counts and sizes, stored writes with their
//! index and task path, and every encoded value. The statements are in `sql.rs` beside
//! the saver's own; errors are the driver's, for the command to word.
//!
//! [`CheckpointSaver`]: stategraph_checkpoint::CheckpointSaver

use deadpool_postgres::Client;
use futures::{pin_mut, TryStreamExt};
use stategraph_checkpoint::inspect::{NsRow, RawValue, RawWrite};
use tokio_postgres::Error;

use crate::sql;

/// Whether the database holds LangGraph's three checkpoint tables (in the current schema).
pub async fn has_tables(client: &Client) -> Result<bool, Error> {
    let n: i64 = client.query_one(sql::INSPECT_TABLES, &[]).await?.get(0);
    Ok(n == 3)
}

/// Every (thread, namespace) with its checkpoint count, latest id and row bytes, by
/// thread and namespace.
pub async fn namespaces(client: &Client) -> Result<Vec<NsRow>, Error> {
    let rows = client.query(sql::INSPECT_NAMESPACES, &[]).await?;
    Ok(rows
        .iter()
        .map(|r| NsRow {
            thread_id: r.get(0),
            ns: r.get(1),
            checkpoints: r.get(2),
            latest: r.get(3),
            bytes: r.get(4),
        })
        .collect())
}

/// How many checkpoints `(thread, ns)` has.
pub async fn count_checkpoints(client: &Client, thread: &str, ns: &str) -> Result<u64, Error> {
    let n: i64 = client
        .query_one(sql::INSPECT_COUNT, &[&thread, &ns])
        .await?
        .get(0);
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Bytes of blobs and writes per thread.
pub async fn blob_and_write_bytes(client: &Client) -> Result<Vec<(String, i64)>, Error> {
    let rows = client.query(sql::INSPECT_OTHER_BYTES, &[]).await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Bytes of each checkpoint row of `thread` (checkpoint and metadata columns), by
/// namespace and id.
pub async fn checkpoint_bytes(
    client: &Client,
    thread: &str,
) -> Result<Vec<(String, String, i64)>, Error> {
    let rows = client
        .query(sql::INSPECT_CHECKPOINT_BYTES, &[&thread])
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// The stored writes of one checkpoint, with their task path and index, in the savers'
/// order (task path, task id, index).
pub async fn raw_writes(
    client: &Client,
    thread: &str,
    ns: &str,
    id: &str,
) -> Result<Vec<RawWrite>, Error> {
    let rows = client
        .query(sql::INSPECT_WRITES, &[&thread, &ns, &id])
        .await?;
    Ok(rows
        .iter()
        .map(|r| RawWrite {
            task_id: r.get(0),
            task_path: r.get(1),
            idx: r.get(2),
            channel: r.get(3),
            tag: r.get(4),
            bytes: r.get(5),
        })
        .collect())
}

/// Calls `f` on every encoded value of the three tables, one row at a time (memory stays
/// bounded whatever the database's size); `total` is called first with the row count. A
/// checkpoint's JSONB columns come as their text, tagged `json`.
pub async fn raw_values(
    client: &Client,
    total: impl FnOnce(u64),
    mut f: impl FnMut(RawValue),
) -> Result<(), Error> {
    let n: i64 = client
        .query_one(sql::INSPECT_VALUE_COUNT, &[])
        .await?
        .get(0);
    total(u64::try_from(n).unwrap_or(0));
    let queries: [(&str, &str); 3] = [
        (sql::INSPECT_ALL_CHECKPOINTS, "checkpoint"),
        (sql::INSPECT_ALL_BLOBS, ""),
        (sql::INSPECT_ALL_WRITES, ""),
    ];
    for (query, first) in queries {
        let stream = client.query_raw(query, std::iter::empty::<&str>()).await?;
        pin_mut!(stream);
        while let Some(r) = stream.try_next().await? {
            let key: String = r.get(0);
            let meta: Option<Vec<u8>> = r.get(3);
            let location = if first.is_empty() {
                key.clone()
            } else {
                format!("{key}.{first}")
            };
            f(RawValue {
                location,
                tag: r.get(1),
                bytes: r.get(2),
            });
            if let Some(meta) = meta {
                f(RawValue {
                    location: format!("{key}.metadata"),
                    tag: "json".into(),
                    bytes: meta,
                });
            }
        }
    }
    Ok(())
}
