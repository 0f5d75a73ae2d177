//! [`InMemoryStore`]: LangGraph's `InMemoryStore` (namespaces and keys kept in insertion
//! order, searches scan them in that order), plus TTLs, which Python's lacks.

use crate::embed::IndexConfig;
use crate::error::Result;
use crate::exec::{best_score, embed_batch, list_namespaces, rank};
use crate::filter;
use crate::item::{Item, SearchItem};
use crate::namespace::Namespace;
use crate::op::{Expiry, Op, OpResult, SearchOp};
use crate::store::{validate_all, BaseStore};
use crate::time::Timestamp;
use crate::ttl_config::TtlConfig;
use async_trait::async_trait;
use indexmap::IndexMap;
use parking_lot::Mutex;

#[derive(Debug, Clone)]
struct Entry {
    item: Item,
    expiry: Option<Expiry>,
    vectors: Vec<(String, Vec<f32>)>,
}

impl Entry {
    fn live(&self, now: Timestamp) -> bool {
        self.expiry.is_none_or(|e| e.expires_at > now)
    }

    fn refresh(&mut self, now: Timestamp) {
        if let Some(e) = &mut self.expiry {
            e.expires_at = now.plus_minutes(e.ttl_minutes);
        }
    }
}

type Data = IndexMap<Namespace, IndexMap<String, Entry>>;

/// A store in process memory: fast, shared by every clone of the `Arc` holding it, gone
/// when the process ends.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    data: Mutex<Data>,
    index: Option<IndexConfig>,
    ttl: Option<TtlConfig>,
}

impl InMemoryStore {
    /// An empty store without semantic search or TTL defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Enables semantic search.
    pub fn with_index(mut self, index: IndexConfig) -> Self {
        self.index = Some(index);
        self
    }

    /// Sets the TTL config.
    pub fn with_ttl(mut self, ttl: TtlConfig) -> Self {
        self.ttl = Some(ttl);
        self
    }

    fn refresh_on_read(&self, asked: bool) -> bool {
        asked && self.ttl.as_ref().is_some_and(|c| c.refresh_on_read)
    }

    /// A search over the live entries under the op's prefix that match its filter, ranked
    /// by `query` (the op's embedded text) when there is one; refreshes what it returns
    /// when the TTL config says so.
    fn search(
        &self,
        data: &mut Data,
        op: &SearchOp,
        query: Option<&[f32]>,
        now: Timestamp,
    ) -> Vec<SearchItem> {
        let refresh = self.refresh_on_read(op.refresh_ttl);
        // Rank references; clone only the page.
        let mut candidates: Vec<(&Entry, Option<f64>)> = Vec::new();
        for (ns, keys) in data.iter() {
            if !ns.starts_with(&op.namespace_prefix) {
                continue;
            }
            for entry in keys.values().filter(|e| e.live(now)) {
                if op
                    .filter
                    .as_ref()
                    .is_some_and(|f| !filter::matches(&entry.item.value, f))
                {
                    continue;
                }
                let score = query
                    .and_then(|q| best_score(q, entry.vectors.iter().map(|(_, v)| v.as_slice())));
                candidates.push((entry, score));
            }
        }
        let found: Vec<SearchItem> = rank(candidates, query.is_some(), op.offset, op.limit)
            .into_iter()
            .map(|(e, score)| SearchItem {
                item: e.item.clone(),
                score,
            })
            .collect();
        if refresh {
            for hit in &found {
                if let Some(e) = data
                    .get_mut(&hit.namespace)
                    .and_then(|k| k.get_mut(&hit.key))
                {
                    e.refresh(now);
                }
            }
        }
        found
    }
}

#[async_trait]
impl BaseStore for InMemoryStore {
    async fn batch(&self, ops: Vec<Op>) -> Result<Vec<OpResult>> {
        validate_all(&ops)?;
        let mut embedded = embed_batch(self.index.as_ref(), &ops).await?;
        let mut data = self.data.lock();
        let mut results = Vec::with_capacity(ops.len());
        for (i, op) in ops.into_iter().enumerate() {
            let now = Timestamp::now();
            let result = match op {
                Op::Get(op) => {
                    let refresh = self.refresh_on_read(op.refresh_ttl);
                    let entry = data
                        .get_mut(&op.namespace)
                        .and_then(|keys| keys.get_mut(&op.key))
                        .filter(|e| e.live(now));
                    OpResult::Get(entry.map(|e| {
                        if refresh {
                            e.refresh(now);
                        }
                        e.item.clone()
                    }))
                }
                Op::Put(op) => {
                    match op.value {
                        None => {
                            if let Some(keys) = data.get_mut(&op.namespace) {
                                keys.shift_remove(&op.key);
                                if keys.is_empty() {
                                    data.shift_remove(&op.namespace);
                                }
                            }
                        }
                        Some(value) => {
                            let entry = Entry {
                                item: Item {
                                    namespace: op.namespace.clone(),
                                    key: op.key.clone(),
                                    value,
                                    created_at: now,
                                    updated_at: now,
                                },
                                expiry: op.ttl.map(|t| Expiry {
                                    expires_at: now.plus_minutes(t),
                                    ttl_minutes: t,
                                }),
                                vectors: embedded.puts.remove(&i).unwrap_or_default(),
                            };
                            data.entry(op.namespace).or_default().insert(op.key, entry);
                        }
                    }
                    OpResult::Put
                }
                Op::Search(op) => {
                    let query = embedded.queries.get(&i).map(Vec::as_slice);
                    OpResult::Search(self.search(&mut data, &op, query, now))
                }
                Op::ListNamespaces(op) => {
                    let live = data
                        .iter()
                        .filter(|(_, keys)| keys.values().any(|e| e.live(now)))
                        .map(|(ns, _)| ns.clone());
                    OpResult::ListNamespaces(list_namespaces(live, &op))
                }
            };
            results.push(result);
        }
        Ok(results)
    }

    fn ttl_config(&self) -> Option<&TtlConfig> {
        self.ttl.as_ref()
    }

    async fn sweep_ttl(&self) -> Result<usize> {
        let now = Timestamp::now();
        let mut data = self.data.lock();
        let mut swept = 0;
        for keys in data.values_mut() {
            let before = keys.len();
            keys.retain(|_, e| e.live(now));
            swept += before - keys.len();
        }
        data.retain(|_, keys| !keys.is_empty());
        Ok(swept)
    }
}
