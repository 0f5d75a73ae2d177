//! The server's tables and the `LISTEN/NOTIFY` channels its processes talk on.

use deadpool_postgres::Pool;

use crate::error::Result;

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
