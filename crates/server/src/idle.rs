//! This process's idle workers: which one looks at the queue when a run is announced, and
//! which one runs a run that the API inserted already claimed.
//!
//! The rule: every run that becomes claimable is *announced* (a `NOTIFY` of another
//! process, a run this process queued `pending`, a run queued behind one this process
//! finished, a reconnected listener). Announcements are numbered. A worker notes the
//! number before it looks at the queue; a look that finds nothing proves that every run
//! announced up to that number is taken (the announcement came after the run's commit,
//! and the look's statement after the announcement). So:
//!
//! - an idle worker waits only while nothing was announced since its last look; an
//!   announcement wakes one idle worker ([`Wake::Look`]), and a worker that was looking
//!   (or running a run) when it came sees the new number and looks again: a run queued
//!   while every worker is busy is picked up as soon as one frees;
//! - a worker that finished a run skips its look when the latest empty look is as new
//!   as the latest announcement ([`Idle::known_empty`]).
//!
//! What this does not see (a run whose worker died: its lease runs out without an
//! announcement; a `NOTIFY` lost with the listener's connection) the workers' timed poll
//! picks up.
//!
//! The API reserves an idle worker ([`Idle::reserve`]) before it inserts a run of a graph
//! of this process; the insert claims the run for that worker when the thread is free,
//! and the worker receives it in-process ([`Wake::Run`]): no claim statement, no `NOTIFY`.

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::db::Claimed;

/// What wakes an idle worker.
pub(crate) enum Wake {
    /// A run was announced: look at the queue.
    Look,
    /// A run inserted already claimed under this worker's lease: run it.
    Run(Box<Claimed>),
    /// The reservation ended without a run: wait again.
    Released,
}

/// An idle worker, waiting.
struct Waiting {
    id: u64,
    worker: Arc<str>,
    tx: oneshot::Sender<Wake>,
}

#[derive(Default)]
struct Inner {
    /// The number of the latest announcement.
    announced: u64,
    /// The announcement number noted before the latest look that found nothing.
    empty_at: Option<u64>,
    /// The idle workers, longest idle first.
    waiting: Vec<Waiting>,
    next_id: u64,
}

/// The idle workers of this process (see the module docs).
#[derive(Default)]
pub(crate) struct Idle {
    inner: Mutex<Inner>,
}

/// A registered idle worker's end of the wait.
pub(crate) struct Waiter {
    id: u64,
    /// Receives what wakes the worker.
    pub(crate) rx: oneshot::Receiver<Wake>,
}

/// An idle worker taken out of the waiting list for one insert: hand it the run the
/// insert claimed for it, or release it.
pub(crate) struct Reservation {
    worker: Arc<str>,
    tx: Option<oneshot::Sender<Wake>>,
}

impl Idle {
    /// The number of the latest announcement (note it before looking at the queue).
    pub(crate) fn announced(&self) -> u64 {
        self.inner.lock().announced
    }

    /// Records that a look begun at announcement `at` found nothing.
    pub(crate) fn found_nothing(&self, at: u64) {
        let mut inner = self.inner.lock();
        inner.empty_at = Some(inner.empty_at.map_or(at, |e| e.max(at)));
    }

    /// Whether a look would find nothing to claim: the latest empty look came after the
    /// latest announcement.
    pub(crate) fn known_empty(&self) -> bool {
        let inner = self.inner.lock();
        inner.empty_at == Some(inner.announced)
    }

    /// Announces a claimable run: wakes one idle worker, if any (the busy ones see the
    /// new number when they look next).
    pub(crate) fn announce(&self) {
        let mut inner = self.inner.lock();
        inner.announced += 1;
        while let Some(w) = inner.waiting.pop() {
            if w.tx.send(Wake::Look).is_ok() {
                break;
            }
        }
    }

    /// Counts an announcement that the caller, a worker about to look, handles itself.
    pub(crate) fn note(&self) {
        self.inner.lock().announced += 1;
    }

    /// Registers `worker` as idle, unless something was announced since `seen` (then
    /// `None`: look again).
    pub(crate) fn wait(&self, worker: &Arc<str>, seen: u64) -> Option<Waiter> {
        let mut inner = self.inner.lock();
        if inner.announced != seen {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        let id = inner.next_id;
        inner.next_id += 1;
        inner.waiting.push(Waiting {
            id,
            worker: worker.clone(),
            tx,
        });
        Some(Waiter { id, rx })
    }

    /// Takes a worker out of the waiting list (its poll is due, or it stops); false when
    /// it was woken or reserved already: then a [`Wake`] is on its way.
    pub(crate) fn leave(&self, waiter: &Waiter) -> bool {
        let mut inner = self.inner.lock();
        let before = inner.waiting.len();
        inner.waiting.retain(|w| w.id != waiter.id);
        inner.waiting.len() < before
    }

    /// Reserves the idle worker that went idle last, if there is one.
    pub(crate) fn reserve(&self) -> Option<Reservation> {
        let w = self.inner.lock().waiting.pop()?;
        Some(Reservation {
            worker: w.worker,
            tx: Some(w.tx),
        })
    }
}

impl Reservation {
    /// The name the reserved worker holds leases under.
    pub(crate) fn worker(&self) -> &str {
        &self.worker
    }

    /// Hands the worker the run claimed for it.
    pub(crate) fn hand(mut self, run: Claimed) {
        if let Some(tx) = self.tx.take() {
            if tx.send(Wake::Run(Box::new(run))).is_err() {
                // The worker is gone (its task ended): the run's lease runs out and
                // another worker takes it over.
                tracing::warn!("a reserved worker is gone; its run waits for takeover");
            }
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Wake::Released);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name() -> Arc<str> {
        Arc::from("w")
    }

    #[test]
    fn an_announcement_wakes_one_idle_worker() {
        let idle = Idle::default();
        let seen = idle.announced();
        let mut a = idle.wait(&name(), seen).expect("waits");
        let mut b = idle.wait(&name(), seen).expect("waits");
        idle.announce();
        assert!(
            matches!(b.rx.try_recv(), Ok(Wake::Look)),
            "the last idle one"
        );
        assert!(a.rx.try_recv().is_err(), "only one");
        assert!(idle.leave(&a));
        assert!(!idle.leave(&b), "already woken");
    }

    #[test]
    fn a_worker_busy_during_an_announcement_looks_again() {
        let idle = Idle::default();
        let seen = idle.announced();
        // Nobody idle: the announcement is only counted.
        idle.announce();
        assert!(idle.wait(&name(), seen).is_none());
        assert!(idle.wait(&name(), idle.announced()).is_some());
    }

    #[test]
    fn the_queue_is_known_empty_until_the_next_announcement() {
        let idle = Idle::default();
        assert!(!idle.known_empty(), "nobody looked yet");
        let at = idle.announced();
        idle.found_nothing(at);
        assert!(idle.known_empty());
        idle.note();
        assert!(!idle.known_empty());
        // A look begun before the announcement proves nothing about it.
        idle.found_nothing(at);
        assert!(!idle.known_empty());
        idle.found_nothing(idle.announced());
        assert!(idle.known_empty());
    }

    #[test]
    fn a_reserved_worker_gets_its_run_or_is_released() {
        let idle = Idle::default();
        let mut w = idle.wait(&Arc::from("me"), 0).expect("waits");
        let r = idle.reserve().expect("one idle worker");
        assert_eq!(r.worker(), "me");
        assert!(idle.reserve().is_none(), "reserved once");
        // An announcement meanwhile finds nobody idle.
        idle.announce();
        assert!(w.rx.try_recv().is_err());
        drop(r);
        assert!(matches!(w.rx.try_recv(), Ok(Wake::Released)));
        // Back to waiting, it sees the announcement it missed.
        assert!(idle.wait(&Arc::from("me"), 0).is_none());
    }
}
