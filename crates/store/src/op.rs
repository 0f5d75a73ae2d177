//! The operations a store executes in a [`batch`](crate::BaseStore::batch), and their results.
//!
//! Every convenience method (`get`, `put`, `search`, …) builds one of these and runs a
//! batch of one, as LangGraph's `BaseStore` does.

use crate::error::{Result, StoreError};
use crate::item::{Document, Item, SearchItem};
use crate::namespace::Namespace;
use crate::time::Timestamp;

/// Read one item.
#[derive(Debug, Clone, PartialEq)]
pub struct GetOp {
    /// Its namespace.
    pub namespace: Namespace,
    /// Its key.
    pub key: String,
    /// Push its expiry forward (only if the store's TTL config has `refresh_on_read`).
    pub refresh_ttl: bool,
}

/// Which fields of a put value are embedded for semantic search.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum IndexSpec {
    /// The store's [`IndexConfig::fields`](crate::IndexConfig::fields) (Python's `index=None`).
    #[default]
    Default,
    /// Not embedded at all (Python's `index=False`).
    Disabled,
    /// These paths instead of the store's (Python's `index=["a.b", …]`).
    Paths(Vec<String>),
}

/// Write (upsert) or delete one item.
#[derive(Debug, Clone, PartialEq)]
pub struct PutOp {
    /// Its namespace.
    pub namespace: Namespace,
    /// Its key.
    pub key: String,
    /// The new value; `None` deletes the item.
    pub value: Option<Document>,
    /// What to embed.
    pub index: IndexSpec,
    /// Time to live in minutes; `None` keeps it forever. The convenience `put` fills in the
    /// store's `default_ttl`.
    pub ttl: Option<f64>,
}

/// Search a namespace prefix by filter and/or meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOp {
    /// Items whose namespace starts with this (label by label); empty = everything.
    pub namespace_prefix: Namespace,
    /// JSON-like equality / operator filter on the value: a JSON object (see
    /// [`crate::filter`]; anything else is refused by the store).
    pub filter: Option<serde_json::Value>,
    /// At most this many results.
    pub limit: usize,
    /// Skip this many first.
    pub offset: usize,
    /// Natural-language query: rank by cosine similarity (needs an index config).
    pub query: Option<String>,
    /// Push the expiry of returned items forward (if the TTL config refreshes on read).
    pub refresh_ttl: bool,
}

impl SearchOp {
    /// A search of `prefix` with LangGraph's defaults (limit 10, offset 0, refresh on read).
    pub fn new(prefix: impl Into<Namespace>) -> Self {
        SearchOp {
            namespace_prefix: prefix.into(),
            filter: None,
            limit: 10,
            offset: 0,
            query: None,
            refresh_ttl: true,
        }
    }

    /// Sets the filter (a JSON object; anything else is refused by the store).
    pub fn filter(mut self, filter: serde_json::Value) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Sets the semantic query.
    pub fn query(mut self, query: impl Into<String>) -> Self {
        self.query = Some(query.into());
        self
    }

    /// Sets the limit.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Sets the offset.
    pub fn offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }

    /// Sets whether returned items have their TTL refreshed.
    pub fn refresh_ttl(mut self, refresh: bool) -> Self {
        self.refresh_ttl = refresh;
        self
    }
}

/// How a [`MatchCondition`] compares its path to a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchType {
    /// The namespace starts with the path.
    Prefix,
    /// The namespace ends with the path.
    Suffix,
}

/// A namespace pattern; a `"*"` label matches any one label.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchCondition {
    /// Prefix or suffix.
    pub match_type: MatchType,
    /// The labels to compare.
    pub path: Namespace,
}

/// List the distinct namespaces that hold items.
#[derive(Debug, Clone, PartialEq)]
pub struct ListNamespacesOp {
    /// Every condition must hold.
    pub match_conditions: Vec<MatchCondition>,
    /// Truncate namespaces to this many labels (then deduplicate).
    pub max_depth: Option<usize>,
    /// At most this many results (LangGraph's default: 100).
    pub limit: usize,
    /// Skip this many first.
    pub offset: usize,
}

impl Default for ListNamespacesOp {
    fn default() -> Self {
        ListNamespacesOp {
            match_conditions: Vec::new(),
            max_depth: None,
            limit: 100,
            offset: 0,
        }
    }
}

impl ListNamespacesOp {
    /// Keeps namespaces starting with `prefix`.
    pub fn prefix(mut self, prefix: impl Into<Namespace>) -> Self {
        self.match_conditions.push(MatchCondition {
            match_type: MatchType::Prefix,
            path: prefix.into(),
        });
        self
    }

    /// Keeps namespaces ending with `suffix`.
    pub fn suffix(mut self, suffix: impl Into<Namespace>) -> Self {
        self.match_conditions.push(MatchCondition {
            match_type: MatchType::Suffix,
            path: suffix.into(),
        });
        self
    }

    /// Truncates to `depth` labels.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = Some(depth);
        self
    }

    /// Sets the limit.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Sets the offset.
    pub fn offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }
}

/// One operation of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Read an item.
    Get(GetOp),
    /// Write or delete an item.
    Put(PutOp),
    /// Search items.
    Search(SearchOp),
    /// List namespaces.
    ListNamespaces(ListNamespacesOp),
}

impl Op {
    /// Checks the op's namespaces (put: [`Namespace::validate_for_put`], others: labels) and
    /// its TTL (finite and positive).
    pub fn validate(&self) -> Result<()> {
        match self {
            Op::Get(op) => op.namespace.validate_labels(),
            Op::Put(op) => {
                if op.value.is_some() {
                    op.namespace.validate_for_put()?;
                } else {
                    op.namespace.validate_labels()?;
                }
                match op.ttl {
                    Some(t) if !(t.is_finite() && t > 0.0) => Err(StoreError::Ttl(format!(
                        "ttl must be a finite, positive number of minutes, got {t}"
                    ))),
                    _ => Ok(()),
                }
            }
            Op::Search(op) => {
                op.namespace_prefix.validate_labels()?;
                op.filter.as_ref().map_or(Ok(()), crate::filter::validate)
            }
            Op::ListNamespaces(op) => op
                .match_conditions
                .iter()
                .try_for_each(|c| c.path.validate_labels()),
        }
    }
}

/// The result of one op, in the position of its op.
#[derive(Debug, Clone, PartialEq)]
pub enum OpResult {
    /// A get: the item, if present and not expired.
    Get(Option<Item>),
    /// A put or delete.
    Put,
    /// A search.
    Search(Vec<SearchItem>),
    /// A namespace listing.
    ListNamespaces(Vec<Namespace>),
}

/// When an item stops being visible: its expiry and the TTL it was written with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Expiry {
    pub(crate) expires_at: Timestamp,
    pub(crate) ttl_minutes: f64,
}
