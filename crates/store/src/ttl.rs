//! Time to live: the background sweeper deleting what the store-wide
//! [`TtlConfig`](crate::TtlConfig) lets expire.

use crate::store::BaseStore;
use std::sync::Arc;
use std::time::Duration;

/// Starts a tokio task deleting expired items every `interval` (or the store's
/// `sweep_interval_minutes`, or 5 minutes) until the handle is aborted or the store's last
/// other owner drops it. Expired items are never returned even between sweeps: the sweeper
/// only reclaims space. Sweep failures are retried at the next tick.
pub fn spawn_sweeper(
    store: Arc<dyn BaseStore>,
    interval: Option<Duration>,
) -> tokio::task::JoinHandle<()> {
    let every = interval.unwrap_or_else(|| {
        let minutes = store
            .ttl_config()
            .and_then(|c| c.sweep_interval_minutes)
            .filter(|m| m.is_finite() && *m > 0.0)
            .unwrap_or(5.0);
        Duration::from_secs_f64(minutes * 60.0)
    });
    let weak = Arc::downgrade(&store);
    drop(store);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.tick().await;
        loop {
            tick.tick().await;
            let Some(store) = weak.upgrade() else { return };
            // A failed sweep leaves expired rows hidden but in place; the next tick retries.
            let _ = store.sweep_ttl().await;
        }
    })
}
