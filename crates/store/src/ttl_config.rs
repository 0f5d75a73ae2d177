//! [`TtlConfig`]: how a store expires items. Its own file, below both the
//! [`BaseStore`](crate::BaseStore) trait (which reports it) and the [`ttl`](crate::ttl)
//! sweeper (which reads it), so neither imports the other for it.

/// How a store expires items (LangGraph's `TTLConfig`).
#[derive(Debug, Clone, PartialEq)]
pub struct TtlConfig {
    /// Reads (`get`, `search`) push the expiry of what they return forward by the item's
    /// TTL, unless the read says otherwise. Default: true.
    pub refresh_on_read: bool,
    /// TTL in minutes given to puts that do not name one. Default: none (keep forever).
    pub default_ttl: Option<f64>,
    /// Minutes between sweeps of [`spawn_sweeper`](crate::ttl::spawn_sweeper). Default: 5
    /// (LangGraph's fallback).
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
