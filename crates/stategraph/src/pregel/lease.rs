//! One run at a time per thread, in this process: the lease a run holds on
//! `(saver, thread_id)` until everything it handed to the saver is stored.
//!
//! A run that is dropped (its `invoke` future cancelled, its stream dropped) may still have
//! saves in flight: the durability-`async` queue, a SQLite write already on a blocking
//! thread, a Postgres statement sent. The run's writer (`writer.rs`) then finishes
//! them on a task of its own and releases the lease only afterwards, so the next run of the
//! thread (which waits for the lease before it reads the thread) starts from what the
//! dropped run stored: it neither forks the history nor meets a `Conflict` from the
//! dropped run's late writes.
//!
//! The lease is keyed by the saver *instance* (the `Arc`'s address) and the thread id;
//! subgraphs share their root run's lease. Two saver instances on one database (or two
//! processes) are not serialized here: the savers' own fence settles those.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Weak};

use stategraph_checkpoint::CheckpointSaver;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// The lock of each `(saver address, thread id)` that some run holds or waits for.
type Registry = HashMap<(usize, String), Weak<Mutex<()>>>;

static REGISTRY: LazyLock<parking_lot::Mutex<(Registry, usize)>> =
    LazyLock::new(|| parking_lot::Mutex::new((HashMap::new(), 64)));

/// A held lease on one thread of one saver; released when the last clone is dropped.
pub struct ThreadLease {
    _guard: OwnedMutexGuard<()>,
    /// Keeps the saver alive while the lease is held, so its address names it.
    _saver: Arc<dyn CheckpointSaver>,
}

impl std::fmt::Debug for ThreadLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ThreadLease")
    }
}

/// Waits until no other run of this process holds `thread_id` on `saver`, then takes it.
pub(crate) async fn acquire(saver: &Arc<dyn CheckpointSaver>, thread_id: &str) -> ThreadLease {
    let key = (
        Arc::as_ptr(saver) as *const () as usize,
        thread_id.to_owned(),
    );
    let lock = {
        let mut reg = REGISTRY.lock();
        let (map, prune_at) = &mut *reg;
        let lock = match map.get(&key).and_then(Weak::upgrade) {
            Some(lock) => lock,
            None => {
                let lock = Arc::new(Mutex::new(()));
                map.insert(key, Arc::downgrade(&lock));
                lock
            }
        };
        // Forget the locks nobody holds any more (amortized: when the map doubled).
        if map.len() >= *prune_at {
            map.retain(|_, w| w.strong_count() > 0);
            *prune_at = (map.len() * 2).max(64);
        }
        lock
    };
    ThreadLease {
        _guard: lock.lock_owned().await,
        _saver: saver.clone(),
    }
}
