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
//! **Answers without a query.** A `get_tuple` read also leaves, on the entry it read, the
//! rest of its answer (metadata, parent, pending writes) and, for a read of the latest
//! checkpoint, which id was the latest of `(thread, namespace)`, each under the [`Stamp`]
//! of the snapshot it was read in. A later read whose snapshot has the same stamp sees the
//! same database (see [`crate::pool`]), so it answers from these without reading the row;
//! any commit, by this saver or anyone else, changes the next stamp.
//!
//! `put` does not leave the checkpoint it stored here (it could: the serializer round-trips):
//! the read at the start of the next run then decodes through the [`DecodeMemo`], which keeps
//! the memo's lists current; a memo left cold until a listing makes that listing's first
//! decode one whole chunk, which every older checkpoint's decode then copies (measured: +35 %
//! instructions listing 3 000 checkpoints).
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
use stategraph_checkpoint::{Checkpoint, CheckpointMetadata, PendingWrite, Result, Value};

use crate::pool::Stamp;

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

/// The rest of a `get_tuple` answer about one row, as read in the snapshot `stamp`.
#[derive(Clone, Debug)]
pub(crate) struct Answer {
    pub(crate) stamp: Stamp,
    pub(crate) metadata: CheckpointMetadata,
    pub(crate) parent: Option<String>,
    pub(crate) pending_writes: Vec<PendingWrite>,
    /// The encoded bytes of the metadata and writes (counted against the budget).
    pub(crate) bytes: usize,
}

/// One decoded row.
#[derive(Debug)]
struct Entry {
    tag: String,
    encoded: Vec<u8>,
    checkpoint: Arc<Checkpoint>,
    answer: Option<Answer>,
    /// The tick of its last use (least recently used goes first).
    used: u64,
}

impl Entry {
    /// The bytes it counts against the budget.
    fn size(&self) -> usize {
        self.encoded.len() + self.answer.as_ref().map_or(0, |a| a.bytes)
    }
}

/// The latest checkpoint id of one `(thread_id, checkpoint_ns)` (`None`: it has none).
type Latest = (Stamp, Option<String>);

/// The entries and their accounting.
#[derive(Debug, Default)]
struct Entries {
    map: HashMap<RowId, Entry>,
    latest: HashMap<(String, String), Latest>,
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
        if self.keeps(encoded.len()) {
            self.insert_owned(id, tag, encoded.to_vec(), Arc::clone(checkpoint));
        }
    }

    /// Whether an entry of `len` encoded bytes would be kept.
    pub(crate) fn keeps(&self, len: usize) -> bool {
        self.max_bytes != 0 && len <= self.max_bytes
    }

    /// [`DecodedCache::insert`], taking the bytes it keeps (a `put` hands over the bytes
    /// it just stored).
    pub(crate) fn insert_owned(
        &self,
        id: RowId,
        tag: &str,
        encoded: Vec<u8>,
        checkpoint: Arc<Checkpoint>,
    ) {
        if !self.keeps(encoded.len()) {
            return;
        }
        let mut entries = self.entries.lock();
        entries.tick += 1;
        let entry = Entry {
            tag: tag.to_owned(),
            encoded,
            checkpoint,
            answer: None,
            used: entries.tick,
        };
        entries.bytes += entry.size();
        if let Some(old) = entries.map.insert(id, entry) {
            entries.bytes -= old.size();
        }
        self.evict(&mut entries);
    }

    /// Drops the least recently used entries until the cache is within its bounds.
    fn evict(&self, entries: &mut Entries) {
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
                entries.bytes -= old.size();
            }
        }
        if entries.latest.len() > MAX_ENTRIES {
            entries.latest.clear();
        }
    }

    /// The checkpoint and the rest of the answer for row `id`, if a read in a snapshot
    /// with this `stamp` left them (so the database is as it was then).
    pub(crate) fn answer(&self, id: &RowId, stamp: Stamp) -> Option<(Arc<Checkpoint>, Answer)> {
        if self.max_bytes == 0 {
            return None;
        }
        let mut entries = self.entries.lock();
        entries.tick += 1;
        let tick = entries.tick;
        let entry = entries.map.get_mut(id)?;
        let answer = entry.answer.as_ref().filter(|a| a.stamp == stamp)?.clone();
        entry.used = tick;
        Some((Arc::clone(&entry.checkpoint), answer))
    }

    /// Leaves `answer` on the entry of row `id`, if that entry still holds `checkpoint`
    /// (the one the read answered with).
    pub(crate) fn remember_answer(&self, id: &RowId, checkpoint: &Arc<Checkpoint>, answer: Answer) {
        if self.max_bytes == 0 {
            return;
        }
        let mut entries = self.entries.lock();
        let Some(entry) = entries.map.get_mut(id) else {
            return;
        };
        if !Arc::ptr_eq(&entry.checkpoint, checkpoint) {
            return;
        }
        let before = entry.size();
        entry.answer = Some(answer);
        let after = entry.size();
        entries.bytes = entries.bytes - before + after;
        self.evict(&mut entries);
    }

    /// The latest checkpoint id of `(thread_id, checkpoint_ns)` (`Some(None)`: it has
    /// none) if a read in a snapshot with this `stamp` found it.
    pub(crate) fn latest(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        stamp: Stamp,
    ) -> Option<Option<String>> {
        if self.max_bytes == 0 {
            return None;
        }
        let entries = self.entries.lock();
        let key = (thread_id.to_owned(), checkpoint_ns.to_owned());
        let (seen, id) = entries.latest.get(&key)?;
        (*seen == stamp).then(|| id.clone())
    }

    /// Remembers that in the snapshot `stamp` the latest checkpoint of
    /// `(thread_id, checkpoint_ns)` was `id`.
    pub(crate) fn remember_latest(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        stamp: Stamp,
        id: Option<String>,
    ) {
        if self.max_bytes == 0 {
            return;
        }
        let mut entries = self.entries.lock();
        let key = (thread_id.to_owned(), checkpoint_ns.to_owned());
        entries.latest.insert(key, (stamp, id));
        self.evict(&mut entries);
    }

    /// Drops the entries of these threads.
    pub(crate) fn forget_threads(&self, thread_ids: &[String]) {
        let mut entries = self.entries.lock();
        let Entries {
            map, latest, bytes, ..
        } = &mut *entries;
        map.retain(|id, entry| {
            let keep = !thread_ids.contains(&id.thread_id);
            if !keep {
                *bytes -= entry.size();
            }
            keep
        });
        latest.retain(|(thread, _), _| !thread_ids.contains(thread));
    }

    /// Drops every entry and remembered list.
    pub(crate) fn clear(&self) {
        self.memo.clear();
        let mut entries = self.entries.lock();
        entries.map.clear();
        entries.latest.clear();
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
