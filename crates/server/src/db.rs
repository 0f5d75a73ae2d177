//! The server's tables beside the checkpoints: threads and runs (the queue).
//!
//! A run is `pending` until a worker claims it (`FOR UPDATE SKIP LOCKED` on the run and
//! its thread, so one thread has one running run), then `running`, then one of
//! `success`, `error`, `interrupted` (paused at an interrupt, or cancelled) or
//! `timeout`. Inserting a run sends `NOTIFY` on [`RUNS_CHANNEL`], which wakes idle
//! workers in any process; unless the inserting process has an idle worker: then the
//! insert claims the run for it at once when the thread is free (see [`NewRun::claim_for`]).
//! The payload of a runs `NOTIFY` is the id of the process that sent it (its own listener
//! ignores it: that process wakes its workers itself).
//!
//! A run's events and end are announced by `NOTIFY` ([`EVENTS_CHANNEL`],
//! [`RUN_END_CHANNEL`]) while its `announce` is true: a reader in another process may be
//! waiting. Only the insert that claims the run for a worker of its own process sets it
//! false (the run's reader there is woken in-process); a claim from the queue sets it true
//! (any process may have queued it), and so does a reader that joins the run
//! ([`watch_run`]). It never goes back to false. The worker of a run claimed at insert
//! reads it under a row lock (`FOR SHARE` beside an event; any worker in the end's
//! update): a joiner's update either comes first (and the worker announces) or waits for
//! the worker's statement (and the joiner's next read sees what it stored).

use std::time::Duration;

use deadpool_postgres::Pool;
use serde_json::{json, Value as Json};
use uuid::Uuid;

use crate::error::{Result, ServerError};

/// The `LISTEN/NOTIFY` channel that announces new (or unblocked) pending runs.
pub const RUNS_CHANNEL: &str = "stategraph_runs";

/// The `LISTEN/NOTIFY` channel that announces new events of a run (the payload is its id,
/// a space, and the id of the process whose worker stored them: that process wakes its
/// readers itself).
pub const EVENTS_CHANNEL: &str = "stategraph_events";

/// The `LISTEN/NOTIFY` channel that announces the end of a run (the payload as on
/// [`EVENTS_CHANNEL`]).
pub const RUN_END_CHANNEL: &str = "stategraph_run_end";

/// The `LISTEN/NOTIFY` channel that asks whichever process runs a run (the payload is its
/// id) to stop it; the run's `cancel` column says how (`interrupt` or `rollback`).
pub const CANCEL_CHANNEL: &str = "stategraph_cancel";

/// Creates the tables if they are missing.
pub async fn setup(pool: &Pool) -> Result<()> {
    let client = pool.get().await?;
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS threads (
                thread_id uuid PRIMARY KEY,
                created_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now(),
                metadata jsonb NOT NULL DEFAULT '{}',
                status text NOT NULL DEFAULT 'idle',
                values jsonb,
                interrupts jsonb NOT NULL DEFAULT '{}'
            );
            CREATE TABLE IF NOT EXISTS runs (
                run_id uuid PRIMARY KEY,
                thread_id uuid NOT NULL,
                assistant_id uuid NOT NULL,
                graph_id text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                status text NOT NULL DEFAULT 'pending',
                metadata jsonb NOT NULL DEFAULT '{}',
                kwargs jsonb NOT NULL,
                multitask_strategy text NOT NULL DEFAULT 'reject',
                stateless boolean NOT NULL DEFAULT false,
                output jsonb,
                error jsonb,
                cancel text,
                attempt integer NOT NULL DEFAULT 0,
                worker text,
                lease_until timestamptz,
                announce boolean NOT NULL DEFAULT true
            );
            ALTER TABLE runs ADD COLUMN IF NOT EXISTS announce boolean NOT NULL DEFAULT true;
            CREATE TABLE IF NOT EXISTS run_events (
                run_id uuid NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
                seq bigint NOT NULL,
                event text NOT NULL,
                data text NOT NULL,
                PRIMARY KEY (run_id, seq)
            );
            CREATE INDEX IF NOT EXISTS runs_pending ON runs (created_at) WHERE status = 'pending';
            CREATE INDEX IF NOT EXISTS runs_leased ON runs (lease_until) WHERE status = 'running';
            CREATE INDEX IF NOT EXISTS runs_thread ON runs (thread_id, created_at);
            -- A thread's pending or running run (the `reject` check of every insert): a
            -- probe, not a walk over every run the thread ever had.
            CREATE INDEX IF NOT EXISTS runs_active ON runs (thread_id)
              WHERE status IN ('pending', 'running');",
        )
        .await?;
    Ok(())
}

const THREAD_COLS: &str = "thread_id, to_json(created_at)#>>'{}', to_json(updated_at)#>>'{}', \
                           metadata, status, values, interrupts";

/// A thread row as the SDK's `Thread`.
fn thread_json(row: &tokio_postgres::Row) -> Json {
    let id: Uuid = row.get(0);
    let created: String = row.get(1);
    let updated: String = row.get(2);
    let metadata: Json = row.get(3);
    let status: String = row.get(4);
    let values: Option<Json> = row.get(5);
    let interrupts: Json = row.get(6);
    json!({
        "thread_id": id.to_string(),
        "created_at": created,
        "updated_at": updated,
        "metadata": metadata,
        "status": status,
        "config": {},
        "values": values,
        "interrupts": interrupts,
    })
}

/// Inserts a thread; `if_exists = "do_nothing"` returns the existing one, otherwise an
/// existing id is a conflict.
pub async fn create_thread(
    pool: &Pool,
    id: Uuid,
    metadata: &Json,
    do_nothing: bool,
) -> Result<Json> {
    let client = pool.get().await?;
    // A new row is the columns' defaults but for its id and metadata: only its time comes
    // back (not the metadata through jsonb and a parse).
    let inserted = client
        .query_opt(
            &client
                .prepare_cached(
                    "INSERT INTO threads (thread_id, metadata) VALUES ($1, $2)
                 ON CONFLICT (thread_id) DO NOTHING RETURNING to_json(created_at)#>>'{}'",
                )
                .await?,
            &[&id, metadata],
        )
        .await?;
    match inserted {
        Some(row) => {
            let created: &str = row.get(0);
            Ok(json!({
                "thread_id": id.to_string(),
                "created_at": created,
                "updated_at": created,
                "metadata": metadata,
                "status": "idle",
                "config": {},
                "values": Json::Null,
                "interrupts": {},
            }))
        }
        None if do_nothing => get_thread(pool, id).await,
        None => Err(ServerError::Conflict(format!("thread {id} already exists"))),
    }
}

/// A thread, or 404.
pub async fn get_thread(pool: &Pool, id: Uuid) -> Result<Json> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(&format!(
                    "SELECT {THREAD_COLS} FROM threads WHERE thread_id = $1"
                ))
                .await?,
            &[&id],
        )
        .await?;
    row.map(|r| thread_json(&r))
        .ok_or_else(|| ServerError::NotFound(format!("thread {id} not found")))
}

/// Threads whose metadata contains `metadata` and whose status is `status` (when given),
/// newest first.
pub async fn search_threads(
    pool: &Pool,
    metadata: &Json,
    status: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<Vec<Json>> {
    let client = pool.get().await?;
    let rows = client
        .query(
            &client
                .prepare_cached(&format!(
                    "SELECT {THREAD_COLS} FROM threads WHERE metadata @> $1
                 AND ($2::text IS NULL OR status = $2)
                 ORDER BY created_at DESC LIMIT $3 OFFSET $4"
                ))
                .await?,
            &[metadata, &status, &limit, &offset],
        )
        .await?;
    Ok(rows.iter().map(thread_json).collect())
}

/// Deletes a thread row and its runs; false when there was none.
pub async fn delete_thread(pool: &Pool, id: Uuid) -> Result<bool> {
    let client = pool.get().await?;
    client
        .execute(
            &client
                .prepare_cached("DELETE FROM runs WHERE thread_id = $1")
                .await?,
            &[&id],
        )
        .await?;
    let n = client
        .execute(
            &client
                .prepare_cached("DELETE FROM threads WHERE thread_id = $1")
                .await?,
            &[&id],
        )
        .await?;
    Ok(n > 0)
}

/// Records a thread's values and status after a run or `update_state`.
pub async fn set_thread_state(
    pool: &Pool,
    id: Uuid,
    status: Option<&str>,
    values: &Json,
    interrupts: &Json,
) -> Result<()> {
    let client = pool.get().await?;
    client
        .execute(
            &client.prepare_cached("UPDATE threads SET values = $2, interrupts = $3, status = coalesce($4, status),
             updated_at = now() WHERE thread_id = $1").await?,
            &[&id, values, interrupts, &status],
        )
        .await?;
    Ok(())
}

/// A new run to queue.
pub struct NewRun<'a> {
    /// Its id.
    pub run_id: Uuid,
    /// Its thread.
    pub thread_id: Uuid,
    /// Its assistant.
    pub assistant_id: Uuid,
    /// The graph the assistant runs.
    pub graph_id: &'a str,
    /// The run's metadata.
    pub metadata: &'a Json,
    /// The request body (input, command, config, stream modes, interrupts).
    pub kwargs: &'a Json,
    /// `reject`, `enqueue`, `interrupt` or `rollback`.
    pub multitask_strategy: &'a str,
    /// A run without a thread of its own (the thread is deleted afterwards).
    pub stateless: bool,
    /// The inserting process's id: the payload of the `NOTIFY` (see the module docs).
    pub process: &'a str,
    /// An idle worker of this process, reserved for this run, and its lease: the run is
    /// inserted `running` under that lease (attempt 1, its thread `busy`) when the thread
    /// has no pending or running run and is not busy, and no `NOTIFY` is sent.
    pub claim_for: Option<(&'a str, Duration)>,
}

/// What [`insert_run`] did.
pub struct Inserted {
    /// The run's `created_at`, as the database set it.
    pub created_at: String,
    /// The run's `updated_at`, as the database set it.
    pub updated_at: String,
    /// The run's status: `pending`, or `running` when claimed at insert.
    pub status: String,
    /// The runs its `interrupt` / `rollback` strategy stopped.
    pub stopped: Stopped,
    /// The run, claimed for [`NewRun::claim_for`]'s worker.
    pub claimed: Option<Claimed>,
    /// Whether the run is pending and claimable now (its thread is free): the inserting
    /// process wakes one of its idle workers (other processes got the `NOTIFY`).
    pub announced: bool,
}

/// Locks the thread row (the lock an update takes, without writing it: [`INSERT_RUN`]
/// writes the row once); no row when there is no such thread.
const LOCK_THREAD: &str = "SELECT 1 FROM threads WHERE thread_id = $1 FOR NO KEY UPDATE";

/// The run insert, after [`LOCK_THREAD`] in the same transaction. Under read committed
/// each statement has its own snapshot, taken after the lock was granted: it sees every
/// run committed on the thread before, so the `reject` check and the claim decision are
/// as strict as separate statements after the lock. It writes the thread row once: it
/// remembers the run's graph in the thread's metadata (existing keys win, as LangGraph's
/// server does; also when the run is refused) and marks the thread busy when the run is
/// claimed. Returns the run's `created_at`,
/// `updated_at` and status (the rest of the run is the caller's already), whether it is
/// announced, the thread's head (the greatest checkpoint id of the root namespace, one
/// backward index probe: `max()` here is planned as a scan of all the thread's
/// checkpoints; and the number of writes stored against it, see [`StoredHead`]), and the
/// `NOTIFY`.
const INSERT_RUN: &str = "WITH d AS (SELECT t.status = 'busy' AS busy, EXISTS (SELECT 1 FROM runs
       WHERE thread_id = $2::uuid AND status IN ('pending', 'running')) AS active
       FROM threads t WHERE t.thread_id = $2::uuid),
     c AS (SELECT active, busy, $9::text IS NOT NULL AND NOT active AND NOT busy AS claim FROM d),
     ins AS (INSERT INTO runs (run_id, thread_id, assistant_id, graph_id, metadata, kwargs,
         multitask_strategy, stateless, status, attempt, worker, lease_until, announce)
       SELECT $1::uuid, $2::uuid, $3::uuid, $4::text, $5::jsonb, $6::jsonb, $7::text,
         $8::boolean, CASE WHEN claim THEN 'running' ELSE 'pending' END,
         CASE WHEN claim THEN 1 ELSE 0 END, CASE WHEN claim THEN $9::text END,
         CASE WHEN claim THEN now() + make_interval(secs => $10::float8) END, NOT claim
       FROM c WHERE NOT ($7::text = 'reject' AND active)
       RETURNING to_json(created_at)#>>'{}', to_json(updated_at)#>>'{}', status),
     claimed AS (SELECT EXISTS (SELECT 1 FROM ins WHERE status = 'running') AS yes),
     mark AS (UPDATE threads SET metadata = jsonb_build_object('graph_id', $4::text,
         'assistant_id', $3::uuid::text) || metadata,
       status = CASE WHEN claimed.yes THEN 'busy' ELSE status END,
       updated_at = CASE WHEN claimed.yes THEN now() ELSE updated_at END
       FROM claimed WHERE threads.thread_id = $2::uuid),
     a AS (SELECT ins.status = 'pending' AND NOT c.active AND NOT c.busy AS announce
       FROM ins, c)
     SELECT ins.*, a.announce, h.id, (SELECT count(*) FROM checkpoint_writes
         WHERE thread_id = $2::uuid::text AND checkpoint_ns = '' AND checkpoint_id = h.id),
       CASE WHEN a.announce THEN pg_notify('stategraph_runs', $11::text) END
     FROM ins CROSS JOIN a LEFT JOIN LATERAL (SELECT checkpoint_id AS id FROM checkpoints
         WHERE thread_id = $2::uuid::text AND checkpoint_ns = ''
         ORDER BY checkpoint_id DESC LIMIT 1) h ON true";

/// Queues a run: under `reject`, a thread with a pending or running run is a conflict;
/// under `interrupt` / `rollback`, the thread's pending runs are cancelled and its running
/// run is asked to stop (`NOTIFY` on [`CANCEL_CHANNEL`]). A run that a worker can take at
/// once is claimed for [`NewRun::claim_for`]'s worker, or announced by `NOTIFY`.
pub async fn insert_run(pool: &Pool, run: &NewRun<'_>) -> Result<Inserted> {
    if !matches!(run.multitask_strategy, "interrupt" | "rollback") {
        return insert_run_at_once(pool, run).await;
    }
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let thread = tx
        .query_opt(&tx.prepare_cached(LOCK_THREAD).await?, &[&run.thread_id])
        .await?;
    if thread.is_none() {
        return Err(not_found(run.thread_id));
    }
    let stopped = stop_thread_runs(&tx, run.thread_id, run.multitask_strategy).await?;
    let (worker, lease) = claim_params(run);
    let row = tx
        .query_opt(
            &tx.prepare_cached(INSERT_RUN).await?,
            &[
                &run.run_id,
                &run.thread_id,
                &run.assistant_id,
                &run.graph_id,
                run.metadata,
                run.kwargs,
                &run.multitask_strategy,
                &run.stateless,
                &worker,
                &lease,
                &run.process,
            ],
        )
        .await?
        .ok_or_else(|| ServerError::Conflict(BUSY.into()))?;
    tx.commit().await?;
    Ok(inserted(run, &row, stopped))
}

fn not_found(thread_id: Uuid) -> ServerError {
    ServerError::NotFound(format!("thread {thread_id} not found"))
}

/// `$9` and `$10` of [`INSERT_RUN`].
fn claim_params<'a>(run: &NewRun<'a>) -> (Option<&'a str>, f64) {
    match run.claim_for {
        Some((worker, lease)) => (Some(worker), lease.as_secs_f64()),
        None => (None, 0.0),
    }
}

/// What an [`INSERT_RUN`] row says.
fn inserted(run: &NewRun<'_>, row: &tokio_postgres::Row, stopped: Stopped) -> Inserted {
    let status: &str = row.get(2);
    let claimed = match (status, run.claim_for) {
        ("running", Some((worker, _))) => Some(Claimed {
            run_id: run.run_id,
            thread_id: run.thread_id,
            graph_id: run.graph_id.to_owned(),
            kwargs: run.kwargs.clone(),
            stateless: run.stateless,
            attempt: 1,
            worker: worker.to_owned(),
            cancel: None,
            head: stored_head(row, 4),
            announced: false,
        }),
        _ => None,
    };
    Inserted {
        created_at: row.get(0),
        updated_at: row.get(1),
        status: status.to_owned(),
        stopped,
        claimed,
        announced: row.get(3),
    }
}

impl Inserted {
    /// The run, as the SDK's `Run` (built when asked: `runs.wait` answers with the run's
    /// result, not with the run).
    pub fn run_json(&self, run: &NewRun<'_>) -> Json {
        json!({
            "run_id": run.run_id.to_string(),
            "thread_id": run.thread_id.to_string(),
            "assistant_id": run.assistant_id.to_string(),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "status": self.status,
            "metadata": run.metadata,
            "kwargs": run.kwargs,
            "multitask_strategy": run.multitask_strategy,
        })
    }
}

/// [`insert_run`] under `reject` and `enqueue` (nothing to stop): one pipelined
/// transaction, one round trip: [`LOCK_THREAD`], then [`INSERT_RUN`].
async fn insert_run_at_once(pool: &Pool, run: &NewRun<'_>) -> Result<Inserted> {
    let client = pool.get().await?;
    let lock = client.prepare_cached(LOCK_THREAD).await?;
    let insert = client.prepare_cached(INSERT_RUN).await?;
    let (worker, lease) = claim_params(run);
    // All four are sent when first polled, in order, before any reply. After a failed
    // statement Postgres turns the COMMIT into a rollback.
    let (_, thread, row, _) = futures::future::try_join4(
        client.batch_execute("BEGIN ISOLATION LEVEL READ COMMITTED"),
        client.query_opt(&lock, &[&run.thread_id]),
        client.query_opt(
            &insert,
            &[
                &run.run_id,
                &run.thread_id,
                &run.assistant_id,
                &run.graph_id,
                run.metadata,
                run.kwargs,
                &run.multitask_strategy,
                &run.stateless,
                &worker,
                &lease,
                &run.process,
            ],
        ),
        client.batch_execute("COMMIT"),
    )
    .await?;
    match (thread, row) {
        (None, _) => Err(not_found(run.thread_id)),
        (Some(_), None) => Err(ServerError::Conflict(BUSY.into())),
        (Some(_), Some(row)) => Ok(inserted(run, &row, Stopped::default())),
    }
}

/// The refusal of a run on a busy thread under `reject`, in LangGraph's words.
const BUSY: &str = "Thread is already running a task. Wait for it to finish or choose a \
                    different multitask strategy.";

/// The runs a new run's `interrupt` / `rollback` strategy stopped.
#[derive(Default, Debug)]
pub struct Stopped {
    /// Pending runs, now cancelled (`interrupted`, or deleted under `rollback`).
    pub pending: Vec<Uuid>,
    /// Running runs asked to stop (their worker records how they ended).
    pub running: Vec<Uuid>,
}

/// Cancels the pending runs of a thread and asks its running run to stop, in `tx`.
async fn stop_thread_runs(
    tx: &deadpool_postgres::Transaction<'_>,
    thread_id: Uuid,
    action: &str,
) -> Result<Stopped> {
    let pending = if action == "rollback" {
        tx.query(
            &tx.prepare_cached(
                "DELETE FROM runs WHERE thread_id = $1 AND status = 'pending' RETURNING run_id",
            )
            .await?,
            &[&thread_id],
        )
        .await?
    } else {
        tx.query(
            &tx.prepare_cached(
                "UPDATE runs SET status = 'interrupted', updated_at = clock_timestamp()
             WHERE thread_id = $1 AND status = 'pending' RETURNING run_id",
            )
            .await?,
            &[&thread_id],
        )
        .await?
    };
    let running = tx
        .query(
            &tx.prepare_cached(
                "UPDATE runs SET cancel = $2 WHERE thread_id = $1 AND status = 'running'
             RETURNING run_id",
            )
            .await?,
            &[&thread_id, &action],
        )
        .await?;
    let running: Vec<Uuid> = running.iter().map(|r| r.get(0)).collect();
    for id in &running {
        tx.execute(
            &tx.prepare_cached("SELECT pg_notify($1, $2)").await?,
            &[&CANCEL_CHANNEL, &id.to_string()],
        )
        .await?;
    }
    Ok(Stopped {
        pending: pending.iter().map(|r| r.get(0)).collect(),
        running,
    })
}

/// Asks the process running `run_id` to stop it (`action` is `interrupt` or `rollback`);
/// true when the run was running.
pub async fn request_cancel(pool: &Pool, run_id: Uuid, action: &str) -> Result<bool> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    let n = tx
        .execute(
            &tx.prepare_cached(
                "UPDATE runs SET cancel = $2 WHERE run_id = $1 AND status = 'running'",
            )
            .await?,
            &[&run_id, &action],
        )
        .await?;
    if n > 0 {
        tx.execute(
            &tx.prepare_cached("SELECT pg_notify($1, $2)").await?,
            &[&CANCEL_CHANNEL, &run_id.to_string()],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(n > 0)
}

/// How a run was asked to stop, if it was.
pub async fn cancel_requested(pool: &Pool, run_id: Uuid) -> Result<Option<String>> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached("SELECT cancel FROM runs WHERE run_id = $1")
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(row.and_then(|r| r.get(0)))
}

/// Has a run's events and end announced by `NOTIFY` from now on (a reader that joins it
/// may be in another process than its worker; see the module docs).
pub async fn watch_run(pool: &Pool, run_id: Uuid) -> Result<()> {
    let client = pool.get().await?;
    client
        .execute(
            &client
                .prepare_cached(
                    "UPDATE runs SET announce = true WHERE run_id = $1 AND NOT announce",
                )
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(())
}

const RUN_COLS: &str = "run_id, thread_id, assistant_id, to_json(created_at)#>>'{}', \
                        to_json(updated_at)#>>'{}', status, metadata, kwargs, multitask_strategy";

/// A run row as the SDK's `Run`.
fn run_json(row: &tokio_postgres::Row) -> Json {
    let run_id: Uuid = row.get(0);
    let thread_id: Uuid = row.get(1);
    let assistant_id: Uuid = row.get(2);
    let created: String = row.get(3);
    let updated: String = row.get(4);
    let status: String = row.get(5);
    let metadata: Json = row.get(6);
    let kwargs: Json = row.get(7);
    let strategy: String = row.get(8);
    json!({
        "run_id": run_id.to_string(),
        "thread_id": thread_id.to_string(),
        "assistant_id": assistant_id.to_string(),
        "created_at": created,
        "updated_at": updated,
        "status": status,
        "metadata": metadata,
        "kwargs": kwargs,
        "multitask_strategy": strategy,
    })
}

/// A run of a thread, or 404.
pub async fn get_run(pool: &Pool, thread_id: Uuid, run_id: Uuid) -> Result<Json> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(&format!(
                    "SELECT {RUN_COLS} FROM runs WHERE run_id = $1 AND thread_id = $2"
                ))
                .await?,
            &[&run_id, &thread_id],
        )
        .await?;
    row.map(|r| run_json(&r))
        .ok_or_else(|| ServerError::NotFound(format!("run {run_id} not found")))
}

/// The runs of a thread, newest first.
pub async fn list_runs(
    pool: &Pool,
    thread_id: Uuid,
    status: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<Vec<Json>> {
    let client = pool.get().await?;
    let rows = client
        .query(
            &client
                .prepare_cached(&format!(
                    "SELECT {RUN_COLS} FROM runs WHERE thread_id = $1
                 AND ($2::text IS NULL OR status = $2)
                 ORDER BY created_at DESC LIMIT $3 OFFSET $4"
                ))
                .await?,
            &[&thread_id, &status, &limit, &offset],
        )
        .await?;
    Ok(rows.iter().map(run_json).collect())
}

/// A run's status and result: `(status, output, error)`; `None` when there is no such run.
pub async fn run_result(pool: &Pool, run_id: Uuid) -> Result<Option<(String, Json, Json)>> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(
                    "SELECT status, coalesce(output, 'null'), coalesce(error, 'null') FROM runs
             WHERE run_id = $1",
                )
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(row.map(|r| (r.get(0), r.get(1), r.get(2))))
}

/// A run's id and the sending process's id, from the payload of a `NOTIFY` on
/// [`EVENTS_CHANNEL`] or [`RUN_END_CHANNEL`] (or a bare run id, as on [`CANCEL_CHANNEL`]).
pub fn run_notice(payload: &str) -> Option<(Uuid, Option<&str>)> {
    match payload.split_once(' ') {
        Some((id, process)) => Some((id.parse().ok()?, Some(process))),
        None => Some((payload.parse().ok()?, None)),
    }
}

/// Whether a status is final.
pub fn is_final(status: &str) -> bool {
    !matches!(status, "pending" | "running")
}

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
fn stored_head(row: &tokio_postgres::Row, at: usize) -> Option<StoredHead> {
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

/// Marks a pending run cancelled (`interrupted`); true when it was pending.
pub async fn cancel_pending(pool: &Pool, run_id: Uuid) -> Result<bool> {
    let client = pool.get().await?;
    let n = client
        .execute(
            &client
                .prepare_cached(
                    "UPDATE runs SET status = 'interrupted', updated_at = clock_timestamp()
             WHERE run_id = $1 AND status = 'pending'",
                )
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(n > 0)
}

/// Deletes a thread row only (its runs stay as a record): a stateless run's thread.
pub async fn delete_thread_row(pool: &Pool, id: Uuid) -> Result<()> {
    let client = pool.get().await?;
    client
        .execute(
            &client
                .prepare_cached("DELETE FROM threads WHERE thread_id = $1")
                .await?,
            &[&id],
        )
        .await?;
    Ok(())
}

/// Deletes a run row.
pub async fn delete_run(pool: &Pool, run_id: Uuid) -> Result<()> {
    let client = pool.get().await?;
    client
        .execute(
            &client
                .prepare_cached("DELETE FROM runs WHERE run_id = $1")
                .await?,
            &[&run_id],
        )
        .await?;
    Ok(())
}

/// Merges `metadata` into a thread's metadata; 404 when there is no such thread.
pub async fn patch_thread(pool: &Pool, id: Uuid, metadata: &Json) -> Result<Json> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(&format!(
                    "UPDATE threads SET metadata = metadata || $2, updated_at = now()
                 WHERE thread_id = $1 RETURNING {THREAD_COLS}"
                ))
                .await?,
            &[&id, metadata],
        )
        .await?;
    row.map(|r| thread_json(&r))
        .ok_or_else(|| ServerError::NotFound(format!("thread {id} not found")))
}

/// A new thread with the metadata, values and status of `source` (not its runs).
pub async fn copy_thread_row(pool: &Pool, source: Uuid, target: Uuid) -> Result<Json> {
    let client = pool.get().await?;
    let row = client
        .query_opt(
            &client
                .prepare_cached(&format!(
                    "INSERT INTO threads (thread_id, metadata, status, values, interrupts)
                 SELECT $2, metadata, CASE WHEN status = 'busy' THEN 'idle' ELSE status END,
                 values, interrupts FROM threads WHERE thread_id = $1
                 RETURNING {THREAD_COLS}"
                ))
                .await?,
            &[&source, &target],
        )
        .await?;
    row.map(|r| thread_json(&r))
        .ok_or_else(|| ServerError::NotFound(format!("thread {source} not found")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_notices_name_the_run_and_the_sender() {
        let id = Uuid::new_v4();
        assert_eq!(run_notice(&format!("{id} p-1")), Some((id, Some("p-1"))));
        assert_eq!(run_notice(&id.to_string()), Some((id, None)));
        assert_eq!(run_notice("not a run"), None);
        assert_eq!(run_notice("x p-1"), None);
    }
}
