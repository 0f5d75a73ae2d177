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

//!
//! One file per job: `schema` (the tables and channels), `threads`, `insert` (queueing
//! a run), `claim` (the worker's lease), `events` (a run's log) and `runs` (everything
//! else on a queued run). This module only re-exports them.

mod claim;
mod events;
mod insert;
mod runs;
mod schema;
mod threads;

pub use claim::{claim, finish_run, hand_back, heartbeat, Claimed, Finished, StoredHead};
pub use events::{append_event, events_after, last_event, prune_events, published_states};
pub use insert::{insert_run, Inserted, NewRun, Stopped};
pub use runs::{
    cancel_pending, cancel_requested, delete_run, get_run, is_final, list_runs, request_cancel,
    run_notice, run_result, watch_run,
};
pub use schema::{setup, CANCEL_CHANNEL, EVENTS_CHANNEL, RUNS_CHANNEL, RUN_END_CHANNEL};
pub use threads::{
    copy_thread_row, create_thread, delete_thread, delete_thread_row, get_thread, patch_thread,
    search_threads, set_thread_state,
};
