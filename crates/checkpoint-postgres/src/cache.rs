//! The decoded-blob cache of a [`PostgresSaver`](crate::PostgresSaver): reads that do not
//! move blobs the saver already holds.
//!
//! A `checkpoint_blobs` row is written once per `(thread_id, checkpoint_ns, channel,
//! version)` and never updated (every writer, Python's included, inserts with `ON
//! CONFLICT DO NOTHING`); it only goes away with its thread or by `prune`. A chat thread's
//! latest checkpoint refers to a 100 KB message list that the saver itself wrote a moment
//! before, or read for the previous call. The cache keeps such values decoded, per thread
//! and namespace, with the *identity* of the row they came from; `get_tuple` (and the
//! delta history's seeds) send the identities they hold, and the server returns NULL
//! instead of the bytes of a blob whose row still has that identity. The blob is then
//! neither detoasted, nor moved, nor decoded.
//!
//! **The identity** is `xmin/ctid/length/start` of the row (`ident_sql!`): the id of the
//! transaction that inserted it, its physical place in the table, the blob's length
//! (which Postgres reads from the TOAST pointer, without detoasting), and when the server
//! process started. Two rows that both exist have different `ctid`s, and a row that
//! replaces a deleted one (a thread deleted and written again, by any process, in any
//! way) is inserted by a later transaction, so with another `xmin`, or, within one
//! transaction, at another place (the deleted row keeps its slot until that transaction
//! is long over). The only way to meet an equal identity again is a row inserted at the
//! same place with the same length by a transaction whose 32-bit id is the same: after
//! the server's transaction counter wrapped (4 294 967 296 transactions later) into the
//! slot of a row that vacuum had removed in between, or on a server whose transaction
//! history is not this one's (a restored backup, a promoted replica that had not received
//! every transaction), which is a server started at another time. Moving a row
//! (`VACUUM FULL`, `CLUSTER`) changes its `ctid`: a miss, never a wrong hit. The value a
//! hit returns is what the row's bytes decode to: a put caches the value decoded from the
//! bytes it inserted (through the saver's decode memo, so that costs only its new
//! elements), a read the value it decoded.
//! [`PostgresSaver::with_serializer`](crate::PostgresSaver::with_serializer) starts a new
//! cache, since a value depends on the serializer that decoded it.
//!
//! **Bounds.** Only blobs of at least [`MIN_CACHED_BYTES`] are kept (a small one costs
//! little to move, and would lengthen the list a read sends); at most
//! [`MAX_PER_THREAD`] per thread and namespace (the list a read sends), at most
//! [`MAX_ENTRIES`] in all, and at most the encoded size set by
//! [`PostgresSaver::with_blob_cache`](crate::PostgresSaver::with_blob_cache)
//! ([`DEFAULT_BLOB_CACHE_BYTES`]; 0 turns the cache off). The least recently used entry
//! goes first. `delete_thread` drops the thread's entries (to free memory early: an entry
//! of a deleted row could not hit anyway).
//!
//! **`get_tuple` through the cache**: the query that
//! leaves out the bytes of the blobs the saver holds, and the decoding of its row.
//!
//! The query is `sql::SELECT` with three more parameters, the channels, versions
//! and identities the cache holds for the thread (`$1`–`$3`; thread, namespace and id
//! follow as `$4`–`$6`), and three more columns: per joined blob its version, its row's
//! identity, and whether it is held. A held blob's bytes come back as NULL; the server
//! reads only its TOAST pointer (for the length), so it is neither detoasted nor sent.

use std::collections::HashMap;
use std::sync::Mutex;

use stategraph_checkpoint::serde::msgpack::DecodeMemo;
use stategraph_checkpoint::serde::{Serializer, TAG_EMPTY};
use stategraph_checkpoint::{Error, Result, Value};
use tokio_postgres::Row;

use crate::error::col;

/// The encoded bytes of the values the cache holds at most by default (32 MiB, as the
/// SQLite saver's read cache).
pub const DEFAULT_BLOB_CACHE_BYTES: usize = 32 << 20;

/// Blobs shorter than this are not cached.
pub const MIN_CACHED_BYTES: usize = 512;

/// The most entries kept per thread and namespace.
pub const MAX_PER_THREAD: usize = 16;

/// The most entries kept in all.
pub const MAX_ENTRIES: usize = 1024;

/// The SQL identity of the `checkpoint_blobs` row aliased `$alias` (a macro, so that
/// statements can be `concat!`ed from it): `xmin/ctid/length/server start`, the length
/// read without detoasting.
macro_rules! ident_sql {
    ($alias:literal) => {
        concat!(
            $alias,
            ".xmin::text || '/' || ",
            $alias,
            ".ctid::text || '/' || coalesce(octet_length(",
            $alias,
            ".blob), -1)::text || '/' || extract(epoch FROM pg_postmaster_start_time())::text"
        )
    };
}
pub(crate) use ident_sql;

/// A thread and namespace.
type ThreadKey = (String, String);

/// One cached blob.
#[derive(Debug)]
struct Entry {
    channel: String,
    version: String,
    ident: String,
    tag: String,
    value: Value,
    bytes: usize,
    used: u64,
}

#[derive(Debug, Default)]
struct Entries {
    threads: HashMap<ThreadKey, Vec<Entry>>,
    count: usize,
    bytes: usize,
    tick: u64,
    hits: u64,
}

/// What a saver's blob cache holds and how often reads found their blobs in it
/// ([`PostgresSaver::blob_cache_stats`](crate::PostgresSaver::blob_cache_stats)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlobCacheStats {
    /// Blobs a read took from the cache instead of the server, since the saver was made.
    pub hits: u64,
    /// Blobs held now.
    pub entries: usize,
    /// Their encoded size in bytes.
    pub bytes: usize,
}

/// Decoded blobs by thread, checked against the row's identity by the server.
#[derive(Debug)]
pub(crate) struct BlobCache {
    entries: Mutex<Entries>,
    max_bytes: usize,
}

/// What a read sends and gets back for the blobs a cache holds of one thread: parallel
/// lists of channel, version and identity, and the values (taken when the read starts, so
/// that an eviction during the read cannot lose them).
#[derive(Clone, Debug, Default)]
pub(crate) struct Held {
    pub(crate) channels: Vec<String>,
    pub(crate) versions: Vec<String>,
    pub(crate) idents: Vec<String>,
    values: Vec<(String, Value)>,
}

impl Held {
    /// The type tag and value held for `(channel, version)` under identity `ident`.
    pub(crate) fn get(&self, channel: &str, version: &str, ident: &str) -> Option<(&str, &Value)> {
        (0..self.channels.len())
            .find(|&i| {
                self.channels[i] == channel
                    && self.versions[i] == version
                    && self.idents[i] == ident
            })
            .map(|i| (self.values[i].0.as_str(), &self.values[i].1))
    }
}

/// A blob read or written, for the cache to keep.
#[derive(Debug)]
pub(crate) struct Fill {
    pub(crate) channel: String,
    pub(crate) version: String,
    pub(crate) ident: String,
    pub(crate) tag: String,
    pub(crate) value: Value,
    /// The blob's encoded length.
    pub(crate) bytes: usize,
}

impl BlobCache {
    /// An empty cache holding values of at most `max_bytes` encoded bytes (0: off).
    pub(crate) fn new(max_bytes: usize) -> BlobCache {
        BlobCache {
            entries: Mutex::default(),
            max_bytes,
        }
    }

    /// The encoded bytes the cache holds at most.
    pub(crate) fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// True when the cache keeps nothing.
    pub(crate) fn is_off(&self) -> bool {
        self.max_bytes == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The blobs held for `(thread, ns)`.
    pub(crate) fn held(&self, thread: &str, ns: &str) -> Held {
        let mut held = Held::default();
        if self.is_off() {
            return held;
        }
        let entries = self.lock();
        let key = (thread.to_owned(), ns.to_owned());
        if let Some(list) = entries.threads.get(&key) {
            for e in list {
                held.channels.push(e.channel.clone());
                held.versions.push(e.version.clone());
                held.idents.push(e.ident.clone());
                held.values.push((e.tag.clone(), e.value.clone()));
            }
        }
        held
    }

    /// True when a blob of `bytes` encoded bytes would be kept.
    pub(crate) fn wants(&self, bytes: usize) -> bool {
        bytes >= MIN_CACHED_BYTES && bytes <= self.max_bytes
    }

    /// Records a read or write of `(thread, ns)`: the entries of `hits` (channel and
    /// version) were used, and `fills` are kept, replacing an entry of the same channel and
    /// version; then evicts down to the bounds.
    pub(crate) fn record(&self, thread: &str, ns: &str, hits: &[(&str, &str)], fills: Vec<Fill>) {
        let fills: Vec<Fill> = fills.into_iter().filter(|f| self.wants(f.bytes)).collect();
        if fills.is_empty() && hits.is_empty() {
            return;
        }
        let mut entries = self.lock();
        let entries = &mut *entries;
        let key = (thread.to_owned(), ns.to_owned());
        entries.tick += 1;
        entries.hits += hits.len() as u64;
        let tick = entries.tick;
        if let Some(list) = entries.threads.get_mut(&key) {
            for e in list.iter_mut() {
                if hits.contains(&(e.channel.as_str(), e.version.as_str())) {
                    e.used = tick;
                }
            }
        }
        if fills.is_empty() {
            return;
        }
        let list = entries.threads.entry(key).or_default();
        for fill in fills {
            entries.tick += 1;
            if let Some(i) = list
                .iter()
                .position(|e| e.channel == fill.channel && e.version == fill.version)
            {
                let old = list.swap_remove(i);
                entries.count -= 1;
                entries.bytes -= old.bytes;
            }
            if list.len() >= MAX_PER_THREAD {
                if let Some(i) = oldest(list) {
                    let old = list.swap_remove(i);
                    entries.count -= 1;
                    entries.bytes -= old.bytes;
                }
            }
            entries.count += 1;
            entries.bytes += fill.bytes;
            list.push(Entry {
                channel: fill.channel,
                version: fill.version,
                ident: fill.ident,
                tag: fill.tag,
                value: fill.value,
                bytes: fill.bytes,
                used: entries.tick,
            });
        }
        while entries.bytes > self.max_bytes || entries.count > MAX_ENTRIES {
            if !evict_oldest(entries) {
                break;
            }
        }
    }

    /// The cache's figures.
    pub(crate) fn stats(&self) -> BlobCacheStats {
        let entries = self.lock();
        BlobCacheStats {
            hits: entries.hits,
            entries: entries.count,
            bytes: entries.bytes,
        }
    }

    /// Drops every entry of `thread` (all namespaces).
    pub(crate) fn forget_thread(&self, thread: &str) {
        let mut entries = self.lock();
        let entries = &mut *entries;
        entries.threads.retain(|(t, _), list| {
            if t != thread {
                return true;
            }
            entries.count -= list.len();
            entries.bytes -= list.iter().map(|e| e.bytes).sum::<usize>();
            false
        });
    }
}

/// The index of the least recently used entry of `list`.
fn oldest(list: &[Entry]) -> Option<usize> {
    (0..list.len()).min_by_key(|&i| list[i].used)
}

/// Evicts the least recently used entry of the whole cache; false when it is empty.
fn evict_oldest(entries: &mut Entries) -> bool {
    let victim = entries
        .threads
        .iter()
        .filter_map(|(k, list)| oldest(list).map(|i| (list[i].used, k.clone(), i)))
        .min_by_key(|(used, _, _)| *used);
    let Some((_, key, i)) = victim else {
        return false;
    };
    if let Some(list) = entries.threads.get_mut(&key) {
        let old = list.swap_remove(i);
        entries.count -= 1;
        entries.bytes -= old.bytes;
        if list.is_empty() {
            entries.threads.remove(&key);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(channel: &str, version: &str, bytes: usize) -> Fill {
        Fill {
            channel: channel.into(),
            version: version.into(),
            ident: format!("1/(0,1)/{bytes}/0"),
            tag: "msgpack".into(),
            value: Value::from(format!("{channel}@{version}")),
            bytes,
        }
    }

    #[test]
    fn a_held_value_is_found_only_under_its_identity() {
        let cache = BlobCache::new(1 << 20);
        cache.record("t", "", &[], vec![fill("m", "1", 1000)]);
        let held = cache.held("t", "");
        assert_eq!(held.channels, ["m"]);
        let (tag, value) = held.get("m", "1", "1/(0,1)/1000/0").unwrap();
        assert_eq!((tag, value), ("msgpack", &Value::from("m@1")));
        assert!(held.get("m", "1", "2/(0,1)/1000/0").is_none());
        assert!(held.get("m", "2", "1/(0,1)/1000").is_none());
        assert!(cache.held("t", "ns").channels.is_empty());
        assert!(cache.held("u", "").channels.is_empty());
    }

    #[test]
    fn small_blobs_and_an_off_cache_keep_nothing() {
        let cache = BlobCache::new(1 << 20);
        cache.record("t", "", &[], vec![fill("m", "1", MIN_CACHED_BYTES - 1)]);
        assert!(cache.held("t", "").channels.is_empty());
        let off = BlobCache::new(0);
        off.record("t", "", &[], vec![fill("m", "1", 1000)]);
        assert!(off.held("t", "").channels.is_empty());
    }

    #[test]
    fn bounds_evict_the_least_recently_used() {
        let cache = BlobCache::new(3000);
        cache.record("a", "", &[], vec![fill("m", "1", 1000)]);
        cache.record("b", "", &[], vec![fill("m", "1", 1000)]);
        cache.record("a", "", &[("m", "1")], vec![]); // a is now more recent than b
        cache.record("c", "", &[], vec![fill("m", "1", 1500)]);
        assert_eq!(cache.held("a", "").channels.len(), 1);
        assert!(cache.held("b", "").channels.is_empty());
        assert_eq!(cache.held("c", "").channels.len(), 1);

        let many = BlobCache::new(1 << 30);
        for v in 0..MAX_PER_THREAD + 3 {
            many.record("t", "", &[], vec![fill("m", &v.to_string(), 600)]);
        }
        let held = many.held("t", "");
        assert_eq!(held.channels.len(), MAX_PER_THREAD);
        assert!(!held.versions.contains(&"0".to_owned()));
        assert!(held.versions.contains(&(MAX_PER_THREAD + 2).to_string()));
    }

    #[test]
    fn forgetting_a_thread_frees_its_entries() {
        let cache = BlobCache::new(1 << 20);
        cache.record(
            "t",
            "",
            &[],
            vec![fill("m", "1", 1000), fill("n", "1", 1000)],
        );
        cache.record("t", "sub", &[], vec![fill("m", "1", 1000)]);
        cache.record("u", "", &[], vec![fill("m", "1", 1000)]);
        cache.forget_thread("t");
        assert!(cache.held("t", "").channels.is_empty());
        assert!(cache.held("t", "sub").channels.is_empty());
        assert_eq!(cache.held("u", "").channels.len(), 1);
        let entries = cache.lock();
        assert_eq!((entries.count, entries.bytes), (1, 1000));
    }
}

/// The blob values of a row, which of them were held, and what the cache may keep.
#[derive(Debug, Default)]
pub(crate) struct CachedRead {
    /// Channel values read from blobs (held or decoded).
    pub(crate) values: Vec<(String, Value)>,
    /// `(channel, version)` of the held blobs used.
    pub(crate) hits: Vec<(String, String)>,
    /// The decoded blobs worth keeping (none unless `fill`).
    pub(crate) fills: Vec<Fill>,
}

/// Decodes the blob columns of a row of [`crate::sql::get_sql`]: held blobs from `held`, the others
/// from their bytes through `memo`; with `fill`, the decoded ones large enough to cache
/// are returned for the cache.
pub(crate) fn decode(
    row: &Row,
    serde: &dyn Serializer,
    memo: &DecodeMemo,
    held: &Held,
    fill: bool,
) -> Result<CachedRead> {
    let channels: Vec<String> = col::<Option<_>>(row, 6)?.unwrap_or_default();
    let types: Vec<String> = col::<Option<_>>(row, 7)?.unwrap_or_default();
    let blobs: Vec<Option<Vec<u8>>> = col::<Option<_>>(row, 8)?.unwrap_or_default();
    let versions: Vec<String> = col::<Option<_>>(row, 15)?.unwrap_or_default();
    let idents: Vec<String> = col::<Option<_>>(row, 16)?.unwrap_or_default();
    let helds: Vec<bool> = col::<Option<_>>(row, 17)?.unwrap_or_default();
    let n = channels.len();
    if [
        types.len(),
        blobs.len(),
        versions.len(),
        idents.len(),
        helds.len(),
    ] != [n; 5]
    {
        return Err(Error::InvalidData("blob arrays of unequal length".into()));
    }
    let mut read = CachedRead::default();
    let rows = channels
        .into_iter()
        .zip(types)
        .zip(blobs)
        .zip(versions)
        .zip(idents)
        .zip(helds);
    for (((((channel, tag), bytes), version), ident), was_held) in rows {
        if tag == TAG_EMPTY {
            continue;
        }
        if was_held {
            let (held_tag, value) = held.get(&channel, &version, &ident).ok_or_else(|| {
                Error::InvalidData(format!(
                    "the server left out blob {channel:?} {version:?}, which the read did not hold"
                ))
            })?;
            if held_tag != tag {
                return Err(Error::InvalidData(format!(
                    "blob {channel:?} {version:?}: held as {held_tag:?}, stored as {tag:?}"
                )));
            }
            read.values.push((channel.clone(), value.clone()));
            read.hits.push((channel, version));
            continue;
        }
        let bytes = bytes.unwrap_or_default();
        let value = serde.loads_typed_with_memo(&tag, &bytes, memo)?;
        if fill && bytes.len() >= MIN_CACHED_BYTES {
            read.fills.push(Fill {
                channel: channel.clone(),
                version,
                ident,
                tag,
                value: value.clone(),
                bytes: bytes.len(),
            });
        }
        read.values.push((channel, value));
    }
    Ok(read)
}
