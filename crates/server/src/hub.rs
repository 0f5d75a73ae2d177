//! Wake-ups for the API handlers that stream or wait for a run, in this process: one tokio
//! broadcast channel per run, plus its cancel signal.
//!
//! A run's events themselves are rows of the `run_events` table (see [`crate::db`]), so
//! any API process can stream a run that any worker process runs. The hub only says
//! "look again": the worker of this process wakes the readers of this process directly,
//! and the `LISTEN` connection turns other processes' `NOTIFY`s into the same wake-ups.
//!
//! Two shortcuts save a statement per run. The end a worker of this process recorded
//! comes with its result ([`RunEnd`]), so a `runs.wait` in this process answers without
//! reading the run's row. And a cancel for a run that has no channel here yet (claimed,
//! but its worker has not asked for its cancel signal) is remembered for a while, so the
//! worker starts cancelled instead of checking the run's row after its claim.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::Value as Json;
use tokio::sync::{broadcast, watch};
use uuid::Uuid;

/// A wake-up about a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HubEvent {
    /// The run has new events in its log.
    Events,
    /// The run ended (its status is in the runs table); with how, when a worker of this
    /// process recorded it.
    End(Option<RunEnd>),
}

/// How a run ended, as the worker that recorded the end in the runs table knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunEnd {
    /// Its final status (`success`, `error`, `interrupted`, ...).
    pub status: String,
    /// Its output (`null` when none).
    pub output: Json,
    /// Its error (`null` when none).
    pub error: Json,
}

struct Channel {
    events: broadcast::Sender<Arc<HubEvent>>,
    cancel: watch::Sender<bool>,
}

impl Channel {
    fn new() -> Channel {
        Channel {
            events: broadcast::channel(CAPACITY).0,
            cancel: watch::channel(false).0,
        }
    }
}

/// The per-run channels of this process.
#[derive(Default)]
pub struct Hub {
    runs: Mutex<HashMap<Uuid, Channel>>,
    early: Mutex<EarlyCancels>,
}

/// Wake-ups kept per run for a slow reader. Small: a channel is made per run (a
/// `runs.wait` too), and its buffer is allocated whole. A reader that falls further
/// behind gets `Lagged`, which it takes as one more "look again"; the last wake-up, the
/// end, is always kept.
const CAPACITY: usize = 16;

/// How many cancels of runs without a channel are remembered, at most.
const EARLY_CANCELS: usize = 4096;

/// How long a cancel of a run without a channel is remembered.
const EARLY_CANCEL_AGE: Duration = Duration::from_secs(60);

/// Cancels that arrived before the run had a channel here, oldest first.
#[derive(Default)]
struct EarlyCancels {
    order: VecDeque<(Instant, Uuid)>,
    ids: HashSet<Uuid>,
}

impl EarlyCancels {
    fn remember(&mut self, run_id: Uuid) {
        let now = Instant::now();
        while let Some(&(at, id)) = self.order.front() {
            if self.order.len() < EARLY_CANCELS && now.duration_since(at) < EARLY_CANCEL_AGE {
                break;
            }
            self.order.pop_front();
            self.ids.remove(&id);
        }
        if self.ids.insert(run_id) {
            self.order.push_back((now, run_id));
        }
    }

    /// Whether `run_id` was cancelled early (and forgets it).
    fn take(&mut self, run_id: Uuid) -> bool {
        if !self.ids.remove(&run_id) {
            return false;
        }
        self.order.retain(|&(_, id)| id != run_id);
        true
    }
}

impl Hub {
    fn with<T>(&self, run_id: Uuid, f: impl FnOnce(&Channel) -> T) -> T {
        let mut runs = self.runs.lock();
        f(runs.entry(run_id).or_insert_with(Channel::new))
    }

    /// Listens to a run's events (call before the run is queued to miss none).
    pub fn subscribe(&self, run_id: Uuid) -> broadcast::Receiver<Arc<HubEvent>> {
        self.with(run_id, |c| c.events.subscribe())
    }

    /// Wakes the readers of a run in this process, if there are any.
    pub fn publish(&self, run_id: Uuid, event: HubEvent) {
        let tx = self.runs.lock().get(&run_id).map(|c| c.events.clone());
        if let Some(tx) = tx {
            // No receiver is fine: nobody reads this run.
            let _ = tx.send(Arc::new(event));
        }
    }

    /// The run's cancel signal, as the worker watches it: `true` already when the run
    /// was cancelled before (see [`Hub::cancel`]).
    pub fn cancel_signal(&self, run_id: Uuid) -> watch::Receiver<bool> {
        // Under the runs lock, as `cancel` remembers under it: no cancel falls between.
        let mut runs = self.runs.lock();
        let early = self.early.lock().take(run_id);
        let ch = runs.entry(run_id).or_insert_with(Channel::new);
        if early {
            ch.cancel.send_replace(true);
        }
        ch.cancel.subscribe()
    }

    /// Asks the worker running `run_id` in this process, if any, to stop it. Without a
    /// channel for the run the cancel is remembered (a bounded number, for a minute): a
    /// worker of this process may have claimed the run and not yet asked for its signal.
    pub fn cancel(&self, run_id: Uuid) {
        let runs = self.runs.lock();
        match runs.get(&run_id) {
            Some(c) => {
                c.cancel.send_replace(true);
            }
            None => self.early.lock().remember(run_id),
        }
    }

    /// Sends [`HubEvent::End`] (with how the run ended, when this process recorded it)
    /// and forgets the run (receivers still get what was sent).
    pub fn finish(&self, run_id: Uuid, end: Option<RunEnd>) {
        self.publish(run_id, HubEvent::End(end));
        self.runs.lock().remove(&run_id);
    }

    /// Forgets a run's channel if nobody listens to it any more.
    pub fn release(&self, run_id: Uuid) {
        let mut runs = self.runs.lock();
        if runs
            .get(&run_id)
            .is_some_and(|c| c.events.receiver_count() == 0)
        {
            runs.remove(&run_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn subscribers_get_wakeups_then_end() {
        let hub = Hub::default();
        let id = Uuid::new_v4();
        // Nobody listens yet: nothing is kept for this run.
        hub.publish(id, HubEvent::Events);
        assert!(hub.runs.lock().is_empty());
        let mut rx = hub.subscribe(id);
        hub.publish(id, HubEvent::Events);
        let end = RunEnd {
            status: "success".into(),
            output: serde_json::json!({"a": 1}),
            error: Json::Null,
        };
        hub.finish(id, Some(end.clone()));
        assert_eq!(*rx.recv().await.expect("event"), HubEvent::Events);
        assert_eq!(*rx.recv().await.expect("end"), HubEvent::End(Some(end)));
        assert!(rx.recv().await.is_err(), "closed after the end");
    }

    #[tokio::test]
    async fn cancel_reaches_the_watcher() {
        let hub = Hub::default();
        let id = Uuid::new_v4();
        hub.cancel(Uuid::new_v4());
        let mut sig = hub.cancel_signal(id);
        hub.cancel(id);
        sig.changed().await.expect("changed");
        assert!(*sig.borrow());
    }

    #[tokio::test]
    async fn a_reader_that_lags_still_gets_the_end() {
        let hub = Hub::default();
        let id = Uuid::new_v4();
        let mut rx = hub.subscribe(id);
        for _ in 0..CAPACITY * 3 {
            hub.publish(id, HubEvent::Events);
        }
        hub.finish(id, None);
        let mut lagged = false;
        loop {
            match rx.recv().await {
                Ok(ev) if *ev == HubEvent::End(None) => break,
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(_)) => lagged = true,
                Err(broadcast::error::RecvError::Closed) => panic!("closed before the end"),
            }
        }
        assert!(lagged);
    }

    #[test]
    fn a_cancel_before_the_signal_is_remembered() {
        let hub = Hub::default();
        let (early, other) = (Uuid::new_v4(), Uuid::new_v4());
        // Claimed, not yet watched by its worker: nobody has a channel for it.
        hub.cancel(early);
        assert!(hub.runs.lock().is_empty());
        assert!(*hub.cancel_signal(early).borrow(), "starts cancelled");
        assert!(!*hub.cancel_signal(other).borrow());
        // Forgotten once taken: a later run with a channel of its own is not affected.
        hub.finish(early, None);
        assert!(!*hub.cancel_signal(early).borrow());
    }

    #[test]
    fn early_cancels_are_bounded() {
        let mut early = EarlyCancels::default();
        let first = Uuid::new_v4();
        early.remember(first);
        for _ in 0..EARLY_CANCELS + 10 {
            early.remember(Uuid::new_v4());
        }
        assert!(early.ids.len() <= EARLY_CANCELS);
        assert_eq!(early.ids.len(), early.order.len());
        assert!(!early.take(first), "the oldest went first");
    }
}
