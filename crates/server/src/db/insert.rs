//! Queueing a run ([`insert_run`]): the `reject` check, the stops of `interrupt` and
//! `rollback`, the claim at insert for an idle worker of this process, the `NOTIFY`.

use std::time::Duration;

use deadpool_postgres::Pool;
use serde_json::{json, Value as Json};
use uuid::Uuid;

use super::claim::{stored_head, Claimed};
use super::schema::CANCEL_CHANNEL;
use crate::error::{Result, ServerError};

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

/// The run insert, after [`LOCK_THREAD`] (and the stops) in the same transaction. Under read committed
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

/// The stop of a thread's pending runs under `rollback`: deleted. Like [`STOP_RUNNING`],
/// it finds nothing when the thread does not exist (the insert is then refused).
const DELETE_PENDING: &str = "DELETE FROM runs WHERE thread_id = $1 AND status = 'pending'
     AND EXISTS (SELECT 1 FROM threads WHERE thread_id = $1) RETURNING run_id";

/// The stop of a thread's pending runs under `interrupt`: marked `interrupted`.
const INTERRUPT_PENDING: &str = "UPDATE runs SET status = 'interrupted',
       updated_at = clock_timestamp()
     WHERE thread_id = $1 AND status = 'pending'
     AND EXISTS (SELECT 1 FROM threads WHERE thread_id = $1) RETURNING run_id";

/// Asks a thread's running run to stop (`cancel` = `$2`, the strategy) and tells its
/// process (`NOTIFY` on `$3`, [`CANCEL_CHANNEL`], with the run's id).
const STOP_RUNNING: &str = "WITH r AS (UPDATE runs SET cancel = $2
       WHERE thread_id = $1 AND status = 'running'
       AND EXISTS (SELECT 1 FROM threads WHERE thread_id = $1) RETURNING run_id)
     SELECT run_id, pg_notify($3, run_id::text) FROM r";

/// Queues a run: under `reject`, a thread with a pending or running run is a conflict;
/// under `interrupt` / `rollback`, the thread's pending runs are cancelled and its running
/// run is asked to stop (`NOTIFY` on [`CANCEL_CHANNEL`]). A run that a worker can take at
/// once is claimed for [`NewRun::claim_for`]'s worker, or announced by `NOTIFY`.
///
/// One pipelined transaction, one round trip whatever the strategy: the thread's lock, the
/// stops (`interrupt` / `rollback` only), then the insert.
pub async fn insert_run(pool: &Pool, run: &NewRun<'_>) -> Result<Inserted> {
    let client = pool.get().await?;
    let lock = client.prepare_cached(LOCK_THREAD).await?;
    let insert = client.prepare_cached(INSERT_RUN).await?;
    let pending = match run.multitask_strategy {
        "rollback" => Some(client.prepare_cached(DELETE_PENDING).await?),
        "interrupt" => Some(client.prepare_cached(INTERRUPT_PENDING).await?),
        _ => None,
    };
    let running = match pending {
        Some(_) => Some(client.prepare_cached(STOP_RUNNING).await?),
        None => None,
    };
    let (worker, lease) = claim_params(run);
    let stop = async {
        let (Some(pending), Some(running)) = (&pending, &running) else {
            return Ok(Stopped::default());
        };
        let stop_running = [
            &run.thread_id as _,
            &run.multitask_strategy as _,
            &CANCEL_CHANNEL as _,
        ];
        let (pending, running) = futures::future::try_join(
            client.query(pending, &[&run.thread_id]),
            client.query(running, &stop_running),
        )
        .await?;
        Ok::<_, tokio_postgres::Error>(Stopped {
            pending: pending.iter().map(|r| r.get(0)).collect(),
            running: running.iter().map(|r| r.get(0)).collect(),
        })
    };
    // All are sent when first polled, in order, before any reply. After a failed
    // statement Postgres turns the COMMIT into a rollback.
    let (_, thread, stopped, row, _) = futures::future::try_join5(
        client.batch_execute("BEGIN ISOLATION LEVEL READ COMMITTED"),
        client.query_opt(&lock, &[&run.thread_id]),
        stop,
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
        (Some(_), Some(row)) => Ok(inserted(run, &row, stopped)),
    }
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
