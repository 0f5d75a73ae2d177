//! The holds a cancelled run takes on its thread while its saves are still being stored,
//! and the wait of the engine's reads (`get_state`, `get_state_history`) for them.
//!
//! A run dropped with saves under way (the durability-`async` queue, a save being awaited)
//! finishes them on a task of its own (`writer.rs`). Before the drop returns, it takes a
//! hold on the thread in the saver's [`InFlightSaves`]
//! ([`CheckpointSaver::in_flight_saves`]), so that the saver's own reads, also those a
//! caller makes directly through the same saver instance, wait for those saves: a read
//! after a cancel is never older than what the cancelled run handed over. The lease
//! (`lease.rs`) cannot serve here: a live run holds it for its whole length, and a read
//! must not wait for a run to end.
//!
//! A saver without a registry of its own (a third-party one) gets one here, keyed by the
//! saver's address and the thread: the engine's reads then still wait, the saver's direct
//! reads do not.

use std::sync::{Arc, LazyLock};

use stategraph_checkpoint::{CheckpointSaver, InFlightHold, InFlightSaves};

/// The holds on savers without a registry of their own, keyed `"{address}/{thread}"`.
static FALLBACK: LazyLock<InFlightSaves> = LazyLock::new(InFlightSaves::new);

/// The fallback key of `thread_id` on `saver`.
fn fallback_key(saver: &Arc<dyn CheckpointSaver>, thread_id: &str) -> String {
    format!("{:x}/{thread_id}", Arc::as_ptr(saver) as *const () as usize)
}

/// Marks saves of `thread_id` handed to `saver` as not yet stored until the hold is dropped.
pub(crate) fn hold(saver: &Arc<dyn CheckpointSaver>, thread_id: &str) -> InFlightHold {
    match saver.in_flight_saves() {
        Some(saves) => saves.hold(thread_id),
        None => FALLBACK.hold(&fallback_key(saver, thread_id)),
    }
}

/// Waits until no cancelled run's save of `thread_id` on `saver` is in flight.
pub(crate) async fn settled(saver: &Arc<dyn CheckpointSaver>, thread_id: &str) {
    match saver.in_flight_saves() {
        Some(saves) => saves.settled(Some(thread_id)).await,
        None => {
            if FALLBACK.is_held(None) {
                FALLBACK
                    .settled(Some(&fallback_key(saver, thread_id)))
                    .await;
            }
        }
    }
}
