//! The store conformance suite on `SqliteStore`, in memory and in a file.

mod sqlite_memory {
    use stategraph_store::BaseStore;
    use stategraph_store_conformance::StoreConfig;
    use stategraph_store_sqlite::SqliteStore;
    use std::sync::Arc;

    stategraph_store_conformance::store_conformance!(|c: StoreConfig| async move {
        let mut store = SqliteStore::open_in_memory().expect("open");
        if let Some(index) = c.index {
            store = store.with_index(index).expect("vector migrations");
        }
        if let Some(ttl) = c.ttl {
            store = store.with_ttl(ttl);
        }
        Arc::new(store) as Arc<dyn BaseStore>
    });
}

mod sqlite_file {
    use stategraph_store::BaseStore;
    use stategraph_store_conformance::StoreConfig;
    use stategraph_store_sqlite::SqliteStore;
    use std::sync::Arc;

    stategraph_store_conformance::store_conformance!(|c: StoreConfig| async move {
        let path = std::env::temp_dir().join(format!("sg-store-{}.sqlite", uuid::Uuid::new_v4()));
        let mut store = SqliteStore::open(&path).expect("open");
        if let Some(index) = c.index {
            store = store.with_index(index).expect("vector migrations");
        }
        if let Some(ttl) = c.ttl {
            store = store.with_ttl(ttl);
        }
        Arc::new(store) as Arc<dyn BaseStore>
    });
}
