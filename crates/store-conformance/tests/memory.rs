//! The store conformance suite on `InMemoryStore` (the other stores run it in their own
//! crates' tests).

use stategraph_store::{BaseStore, InMemoryStore};
use stategraph_store_conformance::StoreConfig;
use std::sync::Arc;

stategraph_store_conformance::store_conformance!(|c: StoreConfig| async move {
    let mut store = InMemoryStore::new();
    if let Some(index) = c.index {
        store = store.with_index(index);
    }
    if let Some(ttl) = c.ttl {
        store = store.with_ttl(ttl);
    }
    Arc::new(store) as Arc<dyn BaseStore>
});
