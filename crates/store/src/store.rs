//! The [`BaseStore`] trait: one required method, [`batch`](BaseStore::batch), and
//! LangGraph's convenience methods on top of it.

use crate::error::{Result, StoreError};
use crate::item::{Document, Item, SearchItem};
use crate::namespace::Namespace;
use crate::op::{GetOp, IndexSpec, ListNamespacesOp, Op, OpResult, PutOp, SearchOp};
use crate::ttl_config::TtlConfig;
use async_trait::async_trait;

/// A long-term key-value store with hierarchical namespaces, filters and optional semantic
/// search (LangGraph's `BaseStore`). Object-safe: graphs hold an `Arc<dyn BaseStore>`.
#[async_trait]
pub trait BaseStore: Send + Sync {
    /// Runs `ops` in order (a get after a put in the same batch sees the put) and returns
    /// one result per op, in op order. Every op is validated before any runs: a batch with
    /// an invalid op changes nothing. On SQL backends the batch is one transaction.
    async fn batch(&self, ops: Vec<Op>) -> Result<Vec<OpResult>>;

    /// The store's TTL config, if it expires items.
    fn ttl_config(&self) -> Option<&TtlConfig> {
        None
    }

    /// Whether puts may carry a TTL (LangGraph raises on stores without TTL support).
    fn supports_ttl(&self) -> bool {
        true
    }

    /// Deletes expired items now; returns how many.
    async fn sweep_ttl(&self) -> Result<usize>;

    /// Reads one item (refreshing its TTL if the TTL config says so).
    async fn get(&self, namespace: Namespace, key: &str) -> Result<Option<Item>> {
        let refresh = self.ttl_config().is_none_or(|c| c.refresh_on_read);
        self.get_with(namespace, key, refresh).await
    }

    /// Reads one item, saying whether to refresh its TTL.
    async fn get_with(
        &self,
        namespace: Namespace,
        key: &str,
        refresh_ttl: bool,
    ) -> Result<Option<Item>> {
        let op = Op::Get(GetOp {
            namespace,
            key: key.to_owned(),
            refresh_ttl,
        });
        match one(self.batch(vec![op]).await?)? {
            OpResult::Get(item) => Ok(item),
            _ => Err(mismatch()),
        }
    }

    /// Writes `value` at `(namespace, key)` with the default index fields and default TTL.
    async fn put(&self, namespace: Namespace, key: &str, value: Document) -> Result<()> {
        let ttl = self.ttl_config().and_then(|c| c.default_ttl);
        self.put_op(PutOp {
            namespace,
            key: key.to_owned(),
            value: Some(value),
            index: IndexSpec::Default,
            ttl,
        })
        .await
    }

    /// Runs one put op as given (explicit index and TTL). A TTL on a store without a TTL
    /// config is refused, as LangGraph refuses it on stores without TTL support.
    async fn put_op(&self, op: PutOp) -> Result<()> {
        if op.ttl.is_some() && !self.supports_ttl() {
            return Err(StoreError::Ttl("this store does not support TTLs".into()));
        }
        one(self.batch(vec![Op::Put(op)]).await?).map(|_| ())
    }

    /// Deletes an item (a put of no value); deleting a missing item is not an error.
    async fn delete(&self, namespace: Namespace, key: &str) -> Result<()> {
        let op = Op::Put(PutOp {
            namespace,
            key: key.to_owned(),
            value: None,
            index: IndexSpec::Default,
            ttl: None,
        });
        one(self.batch(vec![op]).await?).map(|_| ())
    }

    /// Searches (see [`SearchOp`]; build one with `SearchOp::new(prefix).filter(…)`).
    async fn search(&self, op: SearchOp) -> Result<Vec<SearchItem>> {
        match one(self.batch(vec![Op::Search(op)]).await?)? {
            OpResult::Search(items) => Ok(items),
            _ => Err(mismatch()),
        }
    }

    /// Lists namespaces (see [`ListNamespacesOp`]), sorted and deduplicated.
    async fn list_namespaces(&self, op: ListNamespacesOp) -> Result<Vec<Namespace>> {
        match one(self.batch(vec![Op::ListNamespaces(op)]).await?)? {
            OpResult::ListNamespaces(ns) => Ok(ns),
            _ => Err(mismatch()),
        }
    }
}

fn one(mut results: Vec<OpResult>) -> Result<OpResult> {
    match (results.pop(), results.is_empty()) {
        (Some(r), true) => Ok(r),
        _ => Err(mismatch()),
    }
}

fn mismatch() -> StoreError {
    StoreError::Backend("the store returned results that do not match its ops".into())
}

pub(crate) use crate::exec::validate_all;
