//! The saves of cancelled runs that a saver instance has been handed but not yet stored,
//! per thread, so that the saver's reads can wait for them.
//!
//! A run under durability `async` queues its saves; if the run is dropped (its `invoke`
//! future cancelled), the engine finishes the queued saves on a task of its own. Until
//! that task is done, a read of the thread would see the thread as it was *before* the
//! cancelled run's last saves: a caller who then decides "no checkpoint yet, start the
//! thread with new input" applies that input on top of what lands a moment later. Before
//! the engine lets the cancellation complete, it takes an [`InFlightHold`] on the thread
//! from the saver's [`InFlightSaves`] ([`crate::CheckpointSaver::in_flight_saves`]); the
//! saver's reads ([`InFlightSaves::settled`]) wait until every hold of their thread is
//! released, so a read that starts after the cancel sees everything the cancelled run
//! handed over.
//!
//! Why a gate in the saver rather than a wait in the engine: a caller holding the `Arc`
//! of the saver it gave the graph reads through the saver directly, and only the saver
//! sees those reads. Why only cancelled runs: a live run's reads (its subgraphs load
//! their checkpoints while the parent's queue is still draining) and a concurrent reader
//! would otherwise wait on the pace of the saver for the whole run, and the run itself
//! finishes its queue before it returns. Writes (`put`, `put_writes`, `put_batch`) never
//! wait: they are what the holds wait for.
//!
//! Cost when nothing is in flight: one atomic load per read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::channel::oneshot;
use parking_lot::Mutex;

/// The in-flight saves of one saver instance (see the module docs). Cheap to clone: the
/// clones share one registry, so clones of a saver share it too.
#[derive(Clone, Default)]
pub struct InFlightSaves(Arc<Registry>);

#[derive(Default)]
struct Registry {
    /// The holds of all threads together: zero means no read waits for anything.
    held: AtomicUsize,
    /// Per thread with holds: how many, and the readers waiting for them to end.
    threads: Mutex<Threads>,
}

#[derive(Default)]
struct Threads {
    by_thread: HashMap<String, Waiting>,
    /// Readers of every thread (a `list` without a thread), woken when no hold is left.
    all: Vec<oneshot::Sender<()>>,
}

#[derive(Default)]
struct Waiting {
    holds: usize,
    readers: Vec<oneshot::Sender<()>>,
}

impl std::fmt::Debug for InFlightSaves {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InFlightSaves")
            .field("held", &self.0.held.load(Ordering::Relaxed))
            .finish()
    }
}

impl InFlightSaves {
    /// An empty registry.
    pub fn new() -> InFlightSaves {
        InFlightSaves::default()
    }

    /// Marks saves of `thread_id` as handed over and not yet stored, until the returned
    /// hold is dropped. Never waits.
    pub fn hold(&self, thread_id: &str) -> InFlightHold {
        let mut threads = self.0.threads.lock();
        threads
            .by_thread
            .entry(thread_id.to_owned())
            .or_default()
            .holds += 1;
        self.0.held.fetch_add(1, Ordering::SeqCst);
        InFlightHold {
            saves: self.clone(),
            thread_id: thread_id.to_owned(),
        }
    }

    /// True when some save of `thread_id` (of any thread, for `None`) is in flight.
    pub fn is_held(&self, thread_id: Option<&str>) -> bool {
        if self.0.held.load(Ordering::SeqCst) == 0 {
            return false;
        }
        match thread_id {
            None => true,
            Some(t) => self.0.threads.lock().by_thread.contains_key(t),
        }
    }

    /// Waits until no save of `thread_id` (of any thread, for `None`) is in flight.
    /// Returns at once when none is; holds taken while it waits are waited for too.
    pub async fn settled(&self, thread_id: Option<&str>) {
        while self.0.held.load(Ordering::SeqCst) != 0 {
            let woken = {
                let mut threads = self.0.threads.lock();
                let (tx, rx) = oneshot::channel();
                match thread_id {
                    Some(t) => match threads.by_thread.get_mut(t) {
                        Some(waiting) => waiting.readers.push(tx),
                        None => return,
                    },
                    None if threads.by_thread.is_empty() => return,
                    None => threads.all.push(tx),
                }
                rx
            };
            // Either side ends the wait: the last hold's release sends, or drops the sender.
            let _ = woken.await;
        }
    }

    /// Releases one hold of `thread_id` and wakes the readers it was the last one for.
    fn release(&self, thread_id: &str) {
        let woken = {
            let mut threads = self.0.threads.lock();
            let mut woken = Vec::new();
            if let Some(waiting) = threads.by_thread.get_mut(thread_id) {
                waiting.holds -= 1;
                if waiting.holds == 0 {
                    if let Some(w) = threads.by_thread.remove(thread_id) {
                        woken = w.readers;
                    }
                }
            }
            self.0.held.fetch_sub(1, Ordering::SeqCst);
            if threads.by_thread.is_empty() {
                woken.append(&mut threads.all);
            }
            woken
        };
        for tx in woken {
            let _ = tx.send(());
        }
    }
}

/// Saves of one thread handed to a saver and not yet stored (see [`InFlightSaves::hold`]);
/// dropping it says they are stored (or failed).
pub struct InFlightHold {
    saves: InFlightSaves,
    thread_id: String,
}

impl std::fmt::Debug for InFlightHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InFlightHold")
            .field("thread_id", &self.thread_id)
            .finish()
    }
}

impl Drop for InFlightHold {
    fn drop(&mut self) {
        self.saves.release(&self.thread_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    #[test]
    fn reads_wait_for_their_thread_only() {
        let saves = InFlightSaves::new();
        assert!(saves.settled(Some("t")).now_or_never().is_some());
        let hold = saves.hold("t");
        assert!(saves.is_held(Some("t")));
        assert!(!saves.is_held(Some("other")));
        let mut read = Box::pin(saves.settled(Some("t")));
        let mut all = Box::pin(saves.settled(None));
        assert!((&mut read).now_or_never().is_none());
        assert!((&mut all).now_or_never().is_none());
        assert!(saves.settled(Some("other")).now_or_never().is_some());
        let second = saves.hold("t");
        drop(hold);
        assert!((&mut read).now_or_never().is_none());
        drop(second);
        assert!(read.now_or_never().is_some());
        assert!(all.now_or_never().is_some());
        assert!(!saves.is_held(None));
    }
}
