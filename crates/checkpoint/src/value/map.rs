//! [`Map`]: an insertion-ordered, shared map whose keys may be any value, as a Python dict.
//!
//! Entries live in a vector of pairs (msgpack's order for free, duplicates kept exactly
//! as decoded). Small maps, the common case in checkpoints, are searched linearly; past
//! [`INDEX_THRESHOLD`] entries a hash index from string keys to positions is built on
//! first lookup and kept up to date by inserts, so a wide map (100 000 keys) is built and
//! read in linear time overall. With duplicate keys, the index points at the first
//! occurrence, which is what a linear search finds. The entries are shared like every
//! other payload: cloning a map is O(1) and mutation copies on write.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use super::shared::Str;
use super::Value;

/// Maps with more entries than this get a hash index for string-key lookups.
pub const INDEX_THRESHOLD: usize = 16;

#[derive(Clone, Default)]
struct Inner {
    pairs: Vec<(Value, Value)>,
    /// String key -> position of its first occurrence; built lazily past the threshold.
    index: OnceLock<HashMap<Str, usize>>,
}

impl Inner {
    fn build_index(pairs: &[(Value, Value)]) -> HashMap<Str, usize> {
        let mut index = HashMap::with_capacity(pairs.len());
        for (i, (k, _)) in pairs.iter().enumerate() {
            if let Value::Str(s) = k {
                index.entry(s.clone()).or_insert(i);
            }
        }
        index
    }

    /// The index, if the map is wide enough to have one.
    fn index(&self) -> Option<&HashMap<Str, usize>> {
        if self.pairs.len() <= INDEX_THRESHOLD {
            return self.index.get();
        }
        Some(self.index.get_or_init(|| Inner::build_index(&self.pairs)))
    }

    fn position_str(&self, key: &str) -> Option<usize> {
        match self.index() {
            Some(index) => index.get(key).copied(),
            None => self.pairs.iter().position(|(k, _)| k.as_str() == Some(key)),
        }
    }

    fn position(&self, key: &Value) -> Option<usize> {
        match key {
            Value::Str(s) => self.position_str(s),
            _ => self.pairs.iter().position(|(k, _)| k == key),
        }
    }

    /// Records a pair just pushed at the end in the index, if there is one.
    fn index_pushed(&mut self) {
        let pos = self.pairs.len() - 1;
        if let Some(index) = self.index.get_mut() {
            if let Value::Str(s) = &self.pairs[pos].0 {
                index.entry(s.clone()).or_insert(pos);
            }
        }
    }
}

/// An insertion-ordered map whose keys may be any [`Value`], as a Python dict.
///
/// Cloning is O(1) (the entries are shared); lookups by string key are O(1) on wide maps.
#[derive(Clone, Default)]
pub struct Map(Arc<Inner>);

impl Map {
    /// An empty map.
    pub fn new() -> Map {
        Map::default()
    }

    /// An empty map with room for `n` entries.
    pub fn with_capacity(n: usize) -> Map {
        Map(Arc::new(Inner {
            pairs: Vec::with_capacity(n),
            index: OnceLock::new(),
        }))
    }

    /// Builds a map from pairs, keeping duplicates as given (as msgpack bytes may).
    pub fn from_pairs(pairs: Vec<(Value, Value)>) -> Map {
        Map(Arc::new(Inner {
            pairs,
            index: OnceLock::new(),
        }))
    }

    fn inner_mut(&mut self) -> &mut Inner {
        Arc::make_mut(&mut self.0)
    }

    /// The value under a string key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.position_str(key).map(|i| &self.0.pairs[i].1)
    }

    /// The value under any key.
    pub fn get_value(&self, key: &Value) -> Option<&Value> {
        self.0.position(key).map(|i| &self.0.pairs[i].1)
    }

    /// The value under a string key, mutably (copy-on-write if the map is shared).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        let i = self.0.position_str(key)?;
        Some(&mut self.inner_mut().pairs[i].1)
    }

    /// True when the map has the string key.
    pub fn contains_key(&self, key: &str) -> bool {
        self.0.position_str(key).is_some()
    }

    /// Sets `key` to `value`: replaces in place if present (keeping its position, as a
    /// Python dict does), appends otherwise. Returns the old value.
    pub fn insert(&mut self, key: impl Into<Value>, value: impl Into<Value>) -> Option<Value> {
        let key = key.into();
        let value = value.into();
        match self.0.position(&key) {
            Some(i) => Some(std::mem::replace(&mut self.inner_mut().pairs[i].1, value)),
            None => {
                let inner = self.inner_mut();
                inner.pairs.push((key, value));
                inner.index_pushed();
                None
            }
        }
    }

    /// Appends an entry without looking for an existing one: the caller guarantees the
    /// key is new (e.g. when converting a map whose keys are already unique).
    pub fn push_unique(&mut self, key: impl Into<Value>, value: impl Into<Value>) {
        let inner = self.inner_mut();
        inner.pairs.push((key.into(), value.into()));
        inner.index_pushed();
    }

    /// Removes a string key, keeping the order of the rest.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let pos = self.0.position_str(key)?;
        let inner = self.inner_mut();
        inner.index = OnceLock::new();
        Some(inner.pairs.remove(pos).1)
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.pairs.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.pairs.is_empty()
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&Value, &Value)> {
        self.0.pairs.iter().map(|(k, v)| (k, v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &Value> {
        self.0.pairs.iter().map(|(k, _)| k)
    }

    /// The values in order.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.0.pairs.iter().map(|(_, v)| v)
    }

    /// The values in order, mutably (copy-on-write if the map is shared). Keys cannot be
    /// changed this way, so the index stays valid.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.inner_mut().pairs.iter_mut().map(|(_, v)| v)
    }

    /// The entries, as a slice of pairs.
    pub fn as_slice(&self) -> &[(Value, Value)] {
        &self.0.pairs
    }

    /// Consumes the map into its pairs (moved out if unshared, copied shallowly otherwise).
    pub fn into_pairs(self) -> Vec<(Value, Value)> {
        match Arc::try_unwrap(self.0) {
            Ok(inner) => inner.pairs,
            Err(shared) => shared.pairs.clone(),
        }
    }

    /// True when both handles share one payload.
    pub fn ptr_eq(a: &Map, b: &Map) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl PartialEq for Map {
    fn eq(&self, other: &Map) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.pairs == other.0.pairs
    }
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Into<Value>, V: Into<Value>> FromIterator<(K, V)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Map {
        let mut m = Map::new();
        for (k, v) in iter {
            m.insert(k, v);
        }
        m
    }
}

impl IntoIterator for Map {
    type Item = (Value, Value);
    type IntoIter = std::vec::IntoIter<(Value, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_pairs().into_iter()
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a Value, &'a Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Value, Value)>,
        fn(&'a (Value, Value)) -> (&'a Value, &'a Value),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.pairs.iter().map(|(k, v)| (k, v))
    }
}
