//! The node cache: a node with a cache policy whose input was seen before gets the writes
//! it made then instead of running again (LangGraph's `CachePolicy`).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use stategraph_checkpoint::Value;
use xxhash_rust::xxh3::xxh3_128;

/// Turns a node's input into the bytes its cache entry is keyed by.
pub type CacheKeyFn = Arc<dyn Fn(&Value) -> Vec<u8> + Send + Sync>;

/// How a node's results are cached.
#[derive(Clone, Default)]
pub struct CachePolicy {
    /// The key of an input; the default is the input's msgpack bytes.
    pub key: Option<CacheKeyFn>,
    /// How long an entry lives; `None`: until the cache is cleared.
    pub ttl: Option<Duration>,
}

impl fmt::Debug for CachePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachePolicy")
            .field("custom_key", &self.key.is_some())
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl CachePolicy {
    /// Entries that live `ttl` (builder style).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// Keys entries by `f(input)` (builder style).
    pub fn key(mut self, f: impl Fn(&Value) -> Vec<u8> + Send + Sync + 'static) -> Self {
        self.key = Some(Arc::new(f));
        self
    }

    /// The cache key of `input` for `node`.
    pub fn key_of(&self, node: &str, input: &Value) -> CacheKey {
        let bytes = match &self.key {
            Some(f) => f(input),
            None => stategraph_checkpoint::serde::msgpack::encode(input).unwrap_or_default(),
        };
        CacheKey {
            node: node.to_owned(),
            hash: xxh3_128(&bytes),
        }
    }
}

/// A cache entry's key: the node and the hash of its input key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// The node.
    pub node: String,
    /// XXH3-128 of the key bytes.
    pub hash: u128,
}

/// Where cached writes are kept.
pub trait NodeCache: Send + Sync + fmt::Debug {
    /// The writes cached under `key`, if present and not expired.
    fn get(&self, key: &CacheKey) -> Option<Vec<(String, Value)>>;
    /// Caches `writes` under `key` for `ttl`.
    fn set(&self, key: CacheKey, writes: Vec<(String, Value)>, ttl: Option<Duration>);
    /// Drops every entry (of `node`, or all when `None`).
    fn clear(&self, node: Option<&str>);
}

/// Cached writes and when they expire.
type Entry = (Vec<(String, Value)>, Option<Instant>);

/// An in-process cache.
#[derive(Debug, Default)]
pub struct InMemoryCache {
    entries: Mutex<HashMap<CacheKey, Entry>>,
}

impl InMemoryCache {
    /// An empty cache.
    pub fn new() -> InMemoryCache {
        InMemoryCache::default()
    }
}

impl NodeCache for InMemoryCache {
    fn get(&self, key: &CacheKey) -> Option<Vec<(String, Value)>> {
        let mut entries = self.entries.lock();
        match entries.get(key) {
            Some((_, Some(expiry))) if *expiry <= Instant::now() => {
                entries.remove(key);
                None
            }
            Some((writes, _)) => Some(writes.clone()),
            None => None,
        }
    }

    fn set(&self, key: CacheKey, writes: Vec<(String, Value)>, ttl: Option<Duration>) {
        let expiry = ttl.map(|t| Instant::now() + t);
        self.entries.lock().insert(key, (writes, expiry));
    }

    fn clear(&self, node: Option<&str>) {
        let mut entries = self.entries.lock();
        match node {
            Some(n) => entries.retain(|k, _| k.node != n),
            None => entries.clear(),
        }
    }
}
