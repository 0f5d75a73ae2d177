//! The decoded-checkpoint cache of a [`SqliteSaver`](crate::SqliteSaver).
//!
//! A checkpoint row holds its whole state inline (LangGraph's layout), so reading the latest
//! checkpoint of a long chat thread decodes its whole message list. The cache keeps, per
//! `(thread_id, checkpoint_ns, checkpoint_id)`, the row's encoded bytes and the checkpoint
//! decoded from them; a read that finds the same type and the same bytes in the row hands
//! out the decoded checkpoint (its values are shared, so the copy is cheap) instead of
//! decoding again.
//!
//! **Why a hit is always right.** The key only finds a candidate: a hit needs the row's
//! bytes to equal the cached bytes exactly, and the checkpoint is a function of its bytes
//! (for the saver's one serializer; [`SqliteSaver::with_serializer`] starts a new cache).
//! So a row rewritten by another process, a thread deleted and re-created with the same
//! ids, or a replaced checkpoint can only miss, never return a stale value. Deletes still
//! drop the thread's entries, to free their memory early.
//!
//! The cache also holds a [`DecodeMemo`]: a row that misses is decoded reusing the
//! elements of the long lists decoded last (a chat thread's checkpoints share all but their
//! newest messages), which also keep their encoding for the next `put`.
//!
//! The cache is bounded by the encoded bytes it holds ([`DEFAULT_READ_CACHE_BYTES`] unless
//! set with [`SqliteSaver::with_read_cache`]) and by [`MAX_ENTRIES`]; the least recently used
//! entries go first. `get_tuple` and `get_delta_channel_history` fill it (the reads a
//! graph repeats: the latest checkpoint, a checkpoint being inspected, the chain back to a
//! delta snapshot); a listing only looks entries up.
//!
//! [`SqliteSaver::with_serializer`]: crate::SqliteSaver::with_serializer
//! [`SqliteSaver::with_read_cache`]: crate::SqliteSaver::with_read_cache

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use stategraph_checkpoint::serde::msgpack::DecodeMemo;
use stategraph_checkpoint::serde::Serializer;
use stategraph_checkpoint::{Checkpoint, Result, Value};

/// The encoded bytes the cache holds at most unless set otherwise (32 MiB).
pub const DEFAULT_READ_CACHE_BYTES: usize = 32 << 20;

/// The most entries the cache holds, whatever their size.
pub(crate) const MAX_ENTRIES: usize = 256;

/// Which checkpoint row an entry was read from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RowId {
    pub(crate) thread_id: String,
    pub(crate) checkpoint_ns: String,
    pub(crate) checkpoint_id: String,
}

/// One decoded row.
#[derive(Debug)]
struct Entry {
    tag: String,
    encoded: Box<[u8]>,
    checkpoint: Arc<Checkpoint>,
    /// The tick of its last use (least recently used goes first).
    used: u64,
}

/// The entries and their accounting.
#[derive(Debug, Default)]
struct Entries {
    map: HashMap<RowId, Entry>,
    bytes: usize,
    tick: u64,
}

/// Decoded checkpoints by row, checked against the row's bytes on every hit.
#[derive(Debug)]
pub(crate) struct DecodedCache {
    entries: Mutex<Entries>,
    max_bytes: usize,
    memo: DecodeMemo,
}

impl DecodedCache {
    /// An empty cache holding at most `max_bytes` encoded bytes (0: the cache is off).
    pub(crate) fn new(max_bytes: usize) -> DecodedCache {
        DecodedCache {
            entries: Mutex::new(Entries::default()),
            max_bytes,
            memo: DecodeMemo::new(),
        }
    }

    /// Decodes a row's value, reusing the memo's lists (unless the cache is off).
    pub(crate) fn decode(&self, serde: &dyn Serializer, tag: &str, bytes: &[u8]) -> Result<Value> {
        if self.max_bytes == 0 {
            serde.loads_typed(tag, bytes)
        } else {
            serde.loads_typed_with_memo(tag, bytes, &self.memo)
        }
    }

    /// The checkpoint decoded from `encoded` with type `tag`, if the row `id` was cached
    /// with exactly these bytes.
    pub(crate) fn get(&self, id: &RowId, tag: &str, encoded: &[u8]) -> Option<Arc<Checkpoint>> {
        if self.max_bytes == 0 {
            return None;
        }
        let mut entries = self.entries.lock();
        entries.tick += 1;
        let tick = entries.tick;
        let entry = entries.map.get_mut(id)?;
        if entry.tag != tag || *entry.encoded != *encoded {
            return None;
        }
        entry.used = tick;
        Some(Arc::clone(&entry.checkpoint))
    }

    /// Remembers that row `id`, of type `tag` and bytes `encoded`, decodes to `checkpoint`.
    /// A row larger than the whole budget is not kept.
    pub(crate) fn insert(
        &self,
        id: RowId,
        tag: &str,
        encoded: &[u8],
        checkpoint: &Arc<Checkpoint>,
    ) {
        if self.max_bytes == 0 || encoded.len() > self.max_bytes {
            return;
        }
        let mut entries = self.entries.lock();
        entries.tick += 1;
        let entry = Entry {
            tag: tag.to_owned(),
            encoded: encoded.into(),
            checkpoint: Arc::clone(checkpoint),
            used: entries.tick,
        };
        entries.bytes += entry.encoded.len();
        if let Some(old) = entries.map.insert(id, entry) {
            entries.bytes -= old.encoded.len();
        }
        while entries.bytes > self.max_bytes || entries.map.len() > MAX_ENTRIES {
            let Some(oldest) = entries
                .map
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(old) = entries.map.remove(&oldest) {
                entries.bytes -= old.encoded.len();
            }
        }
    }

    /// Drops the entries of these threads.
    pub(crate) fn forget_threads(&self, thread_ids: &[String]) {
        let mut entries = self.entries.lock();
        let Entries { map, bytes, .. } = &mut *entries;
        map.retain(|id, entry| {
            let keep = !thread_ids.contains(&id.thread_id);
            if !keep {
                *bytes -= entry.encoded.len();
            }
            keep
        });
    }

    /// Drops every entry and remembered list.
    pub(crate) fn clear(&self) {
        self.memo.clear();
        let mut entries = self.entries.lock();
        entries.map.clear();
        entries.bytes = 0;
    }

    /// How many entries are held (for tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(thread: &str, cp: &str) -> RowId {
        RowId {
            thread_id: thread.into(),
            checkpoint_ns: String::new(),
            checkpoint_id: cp.into(),
        }
    }

    fn checkpoint(cp: &str) -> Arc<Checkpoint> {
        Arc::new(Checkpoint::empty(cp, "2026-12-01T00:00:00+00:00"))
    }

    #[test]
    fn a_hit_needs_the_same_type_and_bytes() {
        let cache = DecodedCache::new(1 << 20);
        cache.insert(id("t", "1"), "msgpack", b"abc", &checkpoint("1"));
        let hit = cache.get(&id("t", "1"), "msgpack", b"abc");
        assert_eq!(hit.map(|c| c.id.clone()), Some("1".to_owned()));
        assert!(cache.get(&id("t", "1"), "msgpack", b"abd").is_none());
        assert!(cache.get(&id("t", "1"), "json", b"abc").is_none());
        assert!(cache.get(&id("t", "2"), "msgpack", b"abc").is_none());
        assert!(cache.get(&id("u", "1"), "msgpack", b"abc").is_none());
    }

    #[test]
    fn the_least_recently_used_entry_goes_first_when_over_budget() {
        let cache = DecodedCache::new(10);
        cache.insert(id("t", "1"), "msgpack", b"1111", &checkpoint("1"));
        cache.insert(id("t", "2"), "msgpack", b"2222", &checkpoint("2"));
        assert!(cache.get(&id("t", "1"), "msgpack", b"1111").is_some());
        cache.insert(id("t", "3"), "msgpack", b"3333", &checkpoint("3"));
        assert!(cache.get(&id("t", "2"), "msgpack", b"2222").is_none());
        assert!(cache.get(&id("t", "1"), "msgpack", b"1111").is_some());
        assert!(cache.get(&id("t", "3"), "msgpack", b"3333").is_some());
        // Larger than the whole budget: not kept, nothing else evicted.
        cache.insert(id("t", "4"), "msgpack", &[0; 11], &checkpoint("4"));
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn an_off_cache_keeps_nothing_and_forgetting_a_thread_drops_its_entries() {
        let off = DecodedCache::new(0);
        off.insert(id("t", "1"), "msgpack", b"", &checkpoint("1"));
        assert!(off.get(&id("t", "1"), "msgpack", b"").is_none());
        let cache = DecodedCache::new(100);
        cache.insert(id("t", "1"), "msgpack", b"a", &checkpoint("1"));
        cache.insert(id("u", "1"), "msgpack", b"a", &checkpoint("1"));
        cache.forget_threads(&["t".to_owned()]);
        assert!(cache.get(&id("t", "1"), "msgpack", b"a").is_none());
        assert!(cache.get(&id("u", "1"), "msgpack", b"a").is_some());
        cache.clear();
        assert_eq!(cache.len(), 0);
    }
}
