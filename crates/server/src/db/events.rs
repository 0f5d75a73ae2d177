//! A run's event log: append (and announce) an event, read the events after one, prune
//! the logs of finished runs.

use std::time::Duration;

use deadpool_postgres::Pool;
use uuid::Uuid;

use super::claim::Claimed;
use super::schema::EVENTS_CHANNEL;
use crate::error::Result;

/// The last event number in a run's log (0 when empty).
pub async fn last_event(pool: &Pool, run_id: Uuid) -> Result<i64> {
    let client = pool.get().await?;
    let row = client
        .query_one(
            &client
                .prepare_cached("SELECT coalesce(max(seq), 0) FROM run_events WHERE run_id = $1")
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(row.get(0))
}

/// Appends event `seq` of a run to its log and announces it on [`EVENTS_CHANNEL`] when
/// the run's `announce` says so (see the module docs; `process` is the worker's process).
pub async fn append_event(
    pool: &Pool,
    process: &str,
    run: &Claimed,
    seq: i64,
    event: &str,
    data: &str,
) -> Result<()> {
    let client = pool.get().await?;
    // `announce` never goes back to false: what the claim set needs no lock.
    let sql = if run.announced {
        "WITH ins AS (INSERT INTO run_events (run_id, seq, event, data)
         VALUES ($1, $2, $3, $4)) SELECT pg_notify($5, $1::text || ' ' || $6)"
    } else {
        "WITH ins AS (INSERT INTO run_events (run_id, seq, event, data)
         VALUES ($1, $2, $3, $4)),
         r AS (SELECT announce FROM runs WHERE run_id = $1 FOR SHARE)
         SELECT CASE WHEN r.announce THEN pg_notify($5, $1::text || ' ' || $6) END FROM r"
    };
    client
        .execute(
            &client.prepare_cached(sql).await?,
            &[&run.run_id, &seq, &event, &data, &EVENTS_CHANNEL, &process],
        )
        .await?;
    Ok(())
}

/// The events of a run after `seq`, in order: `(seq, event, data)`.
pub async fn events_after(
    pool: &Pool,
    run_id: Uuid,
    seq: i64,
) -> Result<Vec<(i64, String, String)>> {
    let client = pool.get().await?;
    let rows = client
        .query(
            &client
                .prepare_cached(
                    "SELECT seq, event, data FROM run_events WHERE run_id = $1 AND seq > $2
             ORDER BY seq LIMIT 1000",
                )
                .await?,
            &[&run_id, &seq],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// The `values` and `updates` events a run published, in order: `(event, data)` (what a
/// worker taking the run over must not publish again).
pub async fn published_states(pool: &Pool, run_id: Uuid) -> Result<Vec<(String, String)>> {
    let client = pool.get().await?;
    let rows = client
        .query(
            &client
                .prepare_cached(
                    "SELECT event, data FROM run_events WHERE run_id = $1
             AND (event LIKE 'values%' OR event LIKE 'updates%') ORDER BY seq",
                )
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Deletes the events of the runs that finished more than `age` ago; how many.
pub async fn prune_events(pool: &Pool, age: Duration) -> Result<u64> {
    let client = pool.get().await?;
    let n = client
        .execute(
            &client
                .prepare_cached(
                    "DELETE FROM run_events WHERE run_id IN (SELECT run_id FROM runs
             WHERE status NOT IN ('pending', 'running')
             AND updated_at < now() - make_interval(secs => $1))",
                )
                .await?,
            &[&age.as_secs_f64()],
        )
        .await?;
    Ok(n)
}
