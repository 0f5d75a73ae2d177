//! What a behaviour is given: the config of the store it needs, and the closure that builds it.

use stategraph_store::{BaseStore, IndexConfig, TtlConfig};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What a behaviour needs of the store it is given.
#[derive(Debug, Clone, Default)]
pub struct StoreConfig {
    /// Semantic search config (the vector behaviours).
    pub index: Option<IndexConfig>,
    /// TTL config (the TTL behaviours).
    pub ttl: Option<TtlConfig>,
}

/// Builds a fresh store for a config.
pub type MakeStore<'a> =
    &'a (dyn Fn(StoreConfig) -> Pin<Box<dyn Future<Output = Arc<dyn BaseStore>> + Send>> + Sync);
