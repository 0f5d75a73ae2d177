//! The worker's side of the queue: claim a run under a lease, keep the lease, hand the
//! run back, record its end.

use std::time::Duration;

use deadpool_postgres::Pool;
use serde_json::Value as Json;
use uuid::Uuid;

use super::schema::{RUNS_CHANNEL, RUN_END_CHANNEL};
use crate::error::Result;

/// A claim statement around `$pick` (a `SELECT run_id, thread_id ... FOR UPDATE SKIP
/// LOCKED`): marks the run running under worker `$1`'s lease (`$2` seconds) and its
/// thread busy, and returns what [`Claimed`] holds.
macro_rules! claim_sql {
    ($pick:literal) => {
        concat!(
            "WITH c AS (",
            $pick,
            "),
             u AS (UPDATE runs SET status = 'running', attempt = runs.attempt + 1, worker = $1,
                   announce = true,
                   lease_until = now() + make_interval(secs => $2),
                   updated_at = clock_timestamp()
                   FROM c WHERE runs.run_id = c.run_id
                   RETURNING runs.run_id, runs.thread_id, runs.graph_id, runs.kwargs,
                   runs.stateless, runs.attempt, runs.cancel),
             t AS (UPDATE threads SET status = 'busy', updated_at = now()
                   FROM c WHERE threads.thread_id = c.thread_id)
             SELECT run_id, thread_id, graph_id, kwargs, stateless, attempt, cancel,
               h.id, (SELECT count(*) FROM checkpoint_writes w
                 WHERE w.thread_id = u.thread_id::text AND w.checkpoint_ns = ''
                 AND w.checkpoint_id = h.id)
             FROM u LEFT JOIN LATERAL (SELECT checkpoint_id AS id FROM checkpoints
                 WHERE thread_id = u.thread_id::text AND checkpoint_ns = ''
                 ORDER BY checkpoint_id DESC LIMIT 1) h ON true"
        )
    };
}

/// A claimed run, as a worker needs it.
pub struct Claimed {
    /// Its id.
    pub run_id: Uuid,
    /// Its thread.
    pub thread_id: Uuid,
    /// The graph to run.
    pub graph_id: String,
    /// The request body.
    pub kwargs: Json,
    /// Whether to delete the thread afterwards.
    pub stateless: bool,
    /// 1 for the first claim; more when the run was taken over from a worker whose lease
    /// ran out.
    pub attempt: i32,
    /// The worker holding the lease.
    pub worker: String,
    /// How the run was asked to stop before this claim (`interrupt` or `rollback`), if it
    /// was (a run taken over after a cancel).
    pub cancel: Option<String>,
    /// The thread's head when the run was claimed (`None`: no checkpoint), to tell
    /// whether this process's cached head is still it ([`crate::head_cache`]).
    pub head: Option<StoredHead>,
    /// The run's `announce` was set by its claim (a claim from the queue): its events need
    /// no look at it (see the module docs).
    pub announced: bool,
}

impl Claimed {
    /// The thread had no checkpoint in the root namespace when the run was claimed (a
    /// first run may start without reading it: `RunConfig::assume_new_thread`).
    pub fn fresh(&self) -> bool {
        self.head.is_none()
    }
}

/// A thread's head as the claim saw it: the greatest checkpoint id of its root namespace
/// and how many writes are stored against that checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredHead {
    /// The head checkpoint's id.
    pub checkpoint_id: String,
    /// The rows of `checkpoint_writes` against it.
    pub writes: i64,
}

/// The [`StoredHead`] in columns `at` (id, `NULL` without a checkpoint) and `at + 1`
/// (the count of writes) of a claim's row.
pub(super) fn stored_head(row: &tokio_postgres::Row, at: usize) -> Option<StoredHead> {
    let id: Option<String> = row.get(at);
    id.map(|checkpoint_id| StoredHead {
        checkpoint_id,
        writes: row.get(at + 1),
    })
}

/// Claims the oldest run that is pending on a thread without a running run and, with
/// `reap`, else the oldest running under a lease that ran out (its worker died: the
/// reaper's case, looked for on the workers' timed poll only), marks it running under
/// `worker`'s lease and its thread busy, in one transaction; `None` when there is nothing
/// to do. Only runs of `graphs` (the graphs compiled into the worker's process) are
/// claimed, so processes with different graphs share one database.
pub async fn claim(
    pool: &Pool,
    worker: &str,
    lease: Duration,
    graphs: &[String],
    reap: bool,
) -> Result<Option<Claimed>> {
    let client = pool.get().await?;
    // One statement per kind of claimable run, each on its partial index (`runs_pending`,
    // `runs_leased`; with an `OR` the planner scans every run ever queued, at every
    // claim), each one round trip: it picks, marks the run and its thread, and returns.
    let lease = lease.as_secs_f64();
    let picks: &[&str] = if reap { &CLAIMS } else { &CLAIMS[..1] };
    for sql in picks {
        let row = client
            .query_opt(
                &client.prepare_cached(sql).await?,
                &[&worker, &lease, &graphs],
            )
            .await?;
        if let Some(row) = row {
            return Ok(Some(Claimed {
                run_id: row.get(0),
                thread_id: row.get(1),
                graph_id: row.get(2),
                kwargs: row.get(3),
                stateless: row.get(4),
                attempt: row.get(5),
                worker: worker.to_owned(),
                cancel: row.get(6),
                head: stored_head(&row, 7),
                announced: true,
            }));
        }
    }
    Ok(None)
}

/// The claim statements of [`claim`]: a pending run, a run whose lease ran out.
const CLAIMS: [&str; 2] = [
    claim_sql!(
        "SELECT r.run_id, r.thread_id FROM runs r JOIN threads t ON t.thread_id = r.thread_id
         WHERE r.status = 'pending' AND t.status <> 'busy' AND r.graph_id = ANY($3)
         ORDER BY r.created_at LIMIT 1 FOR UPDATE OF r, t SKIP LOCKED"
    ),
    claim_sql!(
        "SELECT r.run_id, r.thread_id FROM runs r JOIN threads t ON t.thread_id = r.thread_id
         WHERE r.status = 'running' AND r.lease_until < now() AND r.graph_id = ANY($3)
         ORDER BY r.lease_until LIMIT 1 FOR UPDATE OF r, t SKIP LOCKED"
    ),
];

/// Puts a running run back in the queue (its worker is stopping) and frees its thread;
/// the next claim continues it from its last checkpoint.
pub async fn hand_back(pool: &Pool, run: &Claimed, process: &str) -> Result<()> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let mine = tx
        .execute(
            &tx.prepare_cached(
                "UPDATE runs SET status = 'pending', worker = NULL, lease_until = NULL,
             updated_at = clock_timestamp() WHERE run_id = $1 AND worker = $2
             AND status = 'running'",
            )
            .await?,
            &[&run.run_id, &run.worker],
        )
        .await?;
    if mine == 0 {
        return Ok(());
    }
    tx.execute(
        &tx.prepare_cached(
            "UPDATE threads SET status = 'idle', updated_at = now() WHERE thread_id = $1",
        )
        .await?,
        &[&run.thread_id],
    )
    .await?;
    tx.execute(
        &tx.prepare_cached("SELECT pg_notify($1, $2)").await?,
        &[&RUNS_CHANNEL, &process],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Extends a run's lease and tells whether the run was asked to stop (its `cancel`:
/// a cancel whose `NOTIFY` was lost still stops it); `None` when the worker no longer
/// holds it (it ran out and another worker took the run, or the run ended).
pub async fn heartbeat(
    pool: &Pool,
    run: &Claimed,
    lease: Duration,
) -> Result<Option<Option<String>>> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(
                    "UPDATE runs SET lease_until = now() + make_interval(secs => $3)
             WHERE run_id = $1 AND worker = $2 AND status = 'running' RETURNING cancel",
                )
                .await?,
            &[&run.run_id, &run.worker, &lease.as_secs_f64()],
        )
        .await?;
    Ok(row.map(|r| r.get(0)))
}

/// Records a run's end, frees its thread (`thread_status`) and, when given, records the
/// thread's `(values, interrupts)`, then wakes the run's readers (by `NOTIFY` when its
/// `announce` says so: see the module docs) and, when runs are queued
/// behind it on its thread, the workers of other processes (`process` is this one; runs
/// of other threads were announced when queued, and the finishing worker looks at the
/// queue again itself); does nothing when `run.worker` no longer holds the run. One
/// statement.
pub async fn finish_run(
    pool: &Pool,
    run: &Claimed,
    process: &str,
    status: &str,
    output: &Json,
    error: &Json,
    thread: (&str, Option<(&Json, &Json)>),
) -> Result<Finished> {
    let (thread_status, values) = thread;
    let (set_values, values, interrupts) = match values {
        Some((v, i)) => (true, v, i),
        None => (false, &Json::Null, &Json::Null),
    };
    // Values equal to the output (a run that did not pause) are sent once: `$8` null
    // stands for `$3`.
    let values = (!set_values || values != output).then_some(values);
    let client = pool.get().await?;
    // Nothing comes back when another worker took the run over (or it was deleted): not
    // ours to record.
    let row = client
        .query_opt(
            &client
                .prepare_cached(
                    "WITH r AS (UPDATE runs SET status = $2, output = $3, error = $4,
                       lease_until = NULL, updated_at = clock_timestamp()
                       WHERE run_id = $1 AND worker = $5 RETURNING thread_id, announce),
                     t AS (UPDATE threads SET status = $6, updated_at = now(),
                       values = CASE WHEN $7 THEN coalesce($8::jsonb, $3::jsonb) ELSE values END,
                       interrupts = CASE WHEN $7 THEN $9::jsonb ELSE interrupts END
                       WHERE thread_id IN (SELECT thread_id FROM r))
                     SELECT b.behind,
                       CASE WHEN r.announce THEN pg_notify($11, $1::text || ' ' || $12) END,
                       CASE WHEN b.behind THEN pg_notify($10, $12) END
                     FROM r, LATERAL (SELECT EXISTS (SELECT 1 FROM runs q
                       WHERE q.thread_id = r.thread_id AND q.status = 'pending'
                       AND q.run_id <> $1) AS behind) b",
                )
                .await?,
            &[
                &run.run_id,
                &status,
                output,
                error,
                &run.worker,
                &thread_status,
                &set_values,
                &values,
                interrupts,
                &RUNS_CHANNEL,
                &RUN_END_CHANNEL,
                &process,
            ],
        )
        .await?;
    Ok(Finished {
        recorded: row.is_some(),
        queued_behind: row.is_some_and(|r| r.get(0)),
    })
}

/// What [`finish_run`] did.
#[derive(Clone, Copy, Debug)]
pub struct Finished {
    /// The end was recorded (the worker still held the run).
    pub recorded: bool,
    /// Runs are pending on the run's thread, claimable now that it is free.
    pub queued_behind: bool,
}
