//! Long-term memory for stategraph: LangGraph's `BaseStore`, and the in-memory store.
//!
//! Checkpoints are a thread's short-term memory; a store keeps what must outlive threads
//! (user profiles, learned facts, documents), addressed by a [`Namespace`] and a key,
//! searched by namespace prefix, [`filter`] and meaning.
//!
//! ```
//! # tokio_test_block_on(async {
//! use stategraph_store::{BaseStore, InMemoryStore, SearchOp};
//! use serde_json::json;
//!
//! let store = InMemoryStore::new();
//! let prefs = json!({"theme": "dark"}).as_object().cloned().unwrap_or_default();
//! store.put(["users", "42"].into(), "prefs", prefs).await?;
//! let item = store.get(["users", "42"].into(), "prefs").await?;
//! assert_eq!(item.map(|i| i.value["theme"].clone()), Some(json!("dark")));
//! let hits = store.search(SearchOp::new(["users"]).filter(json!({"theme": "dark"}))).await?;
//! assert_eq!(hits.len(), 1);
//! # Ok::<(), stategraph_store::StoreError>(())
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
//! # }
//! ```
//!
//! # Design
//!
//! * **One trait, one required method.** [`BaseStore::batch`] runs [`Op`]s in order and
//!   returns one [`OpResult`] per op; `get`/`put`/`delete`/`search`/`list_namespaces` are
//!   provided on top, as in Python. The trait is object-safe and async (`Arc<dyn BaseStore>`
//!   is what a graph holds), because real embedders and databases are I/O.
//! * **Pure core, I/O at the edge.** Validation ([`Namespace`], [`filter::validate`]),
//!   filter matching, text paths, ranking and namespace listing are plain functions shared by
//!   every backend; a backend only reads and writes rows. Embeddings are computed for the
//!   whole batch before a lock or transaction is taken.
//! * **Filters run in Rust, on every backend.** The SQL backend selects by namespace and
//!   expiry with bound parameters and evaluates filters on the decoded values, so no filter
//!   key or value ever becomes SQL or JSON-path text (LangGraph had CVE-2025-8709 there), and
//!   every backend answers a filter the same way.
//! * **Values are JSON objects** (`serde_json::Map`, [`Document`]): the stores share their
//!   rows with Python, which stores `orjson.dumps(value)`; the engine's `Value` is not
//!   needed here, which keeps this crate independent of the engine.
//! * **Batches apply in order.** Python's stores run a batch's reads before its writes; here
//!   ops run in the order given (as the issue asks), so `[put, get]` reads the put.
//! * **TTL everywhere.** Expired items are never returned (checked on read, not only by the
//!   [`ttl::spawn_sweeper`] task, which reclaims space); reads refresh expiry when the
//!   [`TtlConfig`] says so. The in-memory store supports TTLs too (Python's does not).
//!
//! Backends: [`InMemoryStore`] here; `SqliteStore` (crate `stategraph-store-sqlite`, the
//! tables of langgraph-checkpoint-sqlite 3.1.2's `SqliteStore`) and `PostgresStore` (crate
//! `stategraph-store-postgres`) beside it. The behaviours every backend must show are the
//! crate `stategraph-store-conformance`, a macro each backend's tests expand.

pub mod embed;
mod error;
pub mod exec;
pub mod filter;
mod item;
mod memory;
mod namespace;
mod op;
mod store;
mod time;
pub mod ttl;
mod ttl_config;

pub use embed::{Embeddings, HashEmbedder, IndexConfig};
pub use error::{Result, StoreError};
pub use item::{Document, Item, SearchItem};
pub use memory::InMemoryStore;
pub use namespace::Namespace;
pub use op::{
    GetOp, IndexSpec, ListNamespacesOp, MatchCondition, MatchType, Op, OpResult, PutOp, SearchOp,
};
pub use store::BaseStore;
pub use time::Timestamp;
pub use ttl_config::TtlConfig;
