//! Time to live: the store-wide [`TtlConfig`] and the background sweeper.

use crate::store::BaseStore;
use std::sync::Arc;
use std::time::Duration;

/// How a store expires items (LangGraph's `TTLConfig`).
#[derive(Debug, Clone, PartialEq)]
pub struct TtlConfig {
    /// Reads (`get`, `search`) push the expiry of what they return forward by the item's
    /// TTL, unless the read says otherwise. Default: true.
    pub refresh_on_read: bool,
    /// TTL in minutes given to puts that do not name one. Default: none (keep forever).
    pub default_ttl: Option<f64>,
    /// Minutes between sweeps of [`spawn_sweeper`]. Default: 5 (LangGraph's fallback).
    pub sweep_interval_minutes: Option<f64>,
}

impl Default for TtlConfig {
    fn default() -> Self {
        TtlConfig {
            refresh_on_read: true,
            default_ttl: None,
            sweep_interval_minutes: None,
        }
    }
}

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
