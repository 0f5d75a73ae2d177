//! The behaviours every store backend must show, as a macro each backend's tests expand
//! (beside `stategraph-checkpoint-conformance`, and like it a crate the backends' tests
//! dev-depend on, so none of it is compiled into a production store).
//!
//! ```ignore
//! stategraph_store_conformance::store_conformance!(|config: StoreConfig| async move {
//!     let store: Arc<dyn BaseStore> = Arc::new(MyStore::new(config));
//!     store
//! });
//! ```
//!
//! expands to one `#[test]` per behaviour (`conformance::put_get_roundtrip`, …), each on a
//! fresh store built by the closure from a [`StoreConfig`] (the index and TTL config that
//! behaviour needs). They follow LangGraph's own store tests: put/get/delete, search with
//! filters and pagination, namespace listing, TTL, batch ordering, vector ranking, plus
//! namespace validation, hostile filters and namespaces, and concurrent writers.
//! Behaviours panic with a message naming what broke.

mod batch;
mod config;
mod hostile;
mod items;
mod search;
mod support;
mod ttl;
mod vector;

pub use batch::{batch_in_order, invalid_batch_changes_nothing};
pub use config::{MakeStore, StoreConfig};
pub use hostile::{concurrent_writers, hostile_filters, hostile_namespaces};
pub use items::{delete_removes, namespace_rules, put_get_roundtrip, put_overwrites};
pub use search::{list_namespaces, search_by_prefix, search_filters, search_pagination};
pub use ttl::{sweeper_reclaims, ttl_expires, ttl_refresh_on_read};
pub use vector::vector_ranking;

#[doc(hidden)]
pub use stategraph_store as __store;
#[doc(hidden)]
pub use tokio as __tokio;

/// Expands to one test per behaviour; see the [module docs](self).
#[macro_export]
macro_rules! store_conformance {
    ($make:expr) => {
        $crate::store_conformance!(@tests $make;
            put_get_roundtrip, put_overwrites, delete_removes, namespace_rules,
            search_by_prefix, search_filters, search_pagination, list_namespaces,
            batch_in_order, invalid_batch_changes_nothing, ttl_expires, ttl_refresh_on_read,
            sweeper_reclaims,
            vector_ranking, hostile_filters, hostile_namespaces, concurrent_writers);
    };
    (@tests $make:expr; $($name:ident),*) => {
        mod conformance {
            $(
                #[test]
                fn $name() {
                    let rt = $crate::__tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(2)
                        .enable_all()
                        .build()
                        .expect("tokio runtime");
                    rt.block_on(async {
                        let make = |c: $crate::StoreConfig| {
                            Box::pin((super::make_store_for_conformance())(c))
                                as ::std::pin::Pin<Box<dyn ::std::future::Future<
                                    Output = ::std::sync::Arc<dyn $crate::__store::BaseStore>> + Send>>
                        };
                        $crate::$name(&make).await
                    });
                }
            )*
        }
        #[allow(clippy::redundant_closure)]
        fn make_store_for_conformance() -> impl Fn($crate::StoreConfig)
            -> ::std::pin::Pin<Box<dyn ::std::future::Future<
                Output = ::std::sync::Arc<dyn $crate::__store::BaseStore>> + Send>> {
            let make = $make;
            move |c| Box::pin(make(c))
        }
    };
}
