//! Wake-ups for the API handlers that stream or wait for a run, in this process: one tokio
//! broadcast channel per run, plus its cancel signal.
//!
//! A run's events themselves are rows of the `run_events` table (see [`crate::db`]), so
//! any API process can stream a run that any worker process runs. The hub only says
//! "look again": the worker of this process wakes the readers of this process directly,
//! and the `LISTEN` connection turns other processes' `NOTIFY`s into the same wake-ups.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{broadcast, watch};
use uuid::Uuid;

/// A wake-up about a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HubEvent {
    /// The run has new events in its log.
    Events,
    /// The run ended (its status is in the runs table).
    End,
}

struct Channel {
    events: broadcast::Sender<Arc<HubEvent>>,
    cancel: watch::Sender<bool>,
}

/// The per-run channels of this process.
#[derive(Default)]
pub struct Hub {
    runs: Mutex<HashMap<Uuid, Channel>>,
}

const CAPACITY: usize = 4096;

impl Hub {
    fn with<T>(&self, run_id: Uuid, f: impl FnOnce(&Channel) -> T) -> T {
        let mut runs = self.runs.lock();
        let ch = runs.entry(run_id).or_insert_with(|| Channel {
            events: broadcast::channel(CAPACITY).0,
            cancel: watch::channel(false).0,
        });
        f(ch)
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

    /// The run's cancel signal, as the worker watches it.
    pub fn cancel_signal(&self, run_id: Uuid) -> watch::Receiver<bool> {
        self.with(run_id, |c| c.cancel.subscribe())
    }

    /// Asks the worker running `run_id` in this process, if any, to stop it.
    pub fn cancel(&self, run_id: Uuid) {
        if let Some(c) = self.runs.lock().get(&run_id) {
            c.cancel.send_replace(true);
        }
    }

    /// Sends [`HubEvent::End`] and forgets the run (receivers still get what was sent).
    pub fn finish(&self, run_id: Uuid) {
        self.publish(run_id, HubEvent::End);
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
        hub.finish(id);
        assert_eq!(*rx.recv().await.expect("event"), HubEvent::Events);
        assert_eq!(*rx.recv().await.expect("end"), HubEvent::End);
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
}
