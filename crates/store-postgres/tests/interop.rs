//! Interop with Python's `PostgresStore` (langgraph-checkpoint-postgres 3.2.0) on one
//! database: each side writes, each side reads everything, the answers agree.

#[path = "../../store/tests/interop/common.rs"]
mod common;

use stategraph_store::{BaseStore, Namespace, TtlConfig};
use stategraph_store_postgres::PostgresStore;

fn admin_url() -> String {
    std::env::var("STATEGRAPH_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".into())
}

/// Drops the test database even when an assertion fails.
struct DropDb(String);

impl Drop for DropDb {
    fn drop(&mut self) {
        let db = self.0.clone();
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                if let Ok((c, conn)) =
                    tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls).await
                {
                    tokio::spawn(conn);
                    let _ = c
                        .batch_execute(&format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"))
                        .await;
                }
            });
        })
        .join();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_and_rust_share_a_postgres_store() {
    let Some(python) = common::python() else {
        return;
    };
    let db = format!("sg_store_interop_{}", uuid::Uuid::new_v4().simple());
    let (admin, conn) = tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls)
        .await
        .expect("postgres");
    tokio::spawn(conn);
    admin
        .batch_execute(&format!("CREATE DATABASE \"{db}\""))
        .await
        .expect("create database");
    let _cleanup = DropDb(db.clone());
    let url = {
        let base = admin_url();
        let (head, _) = base.rsplit_once('/').expect("url with a database");
        format!("{head}/{db}")
    };

    // Python creates the tables this time; Rust runs its (idempotent) setup after.
    common::peer(&python, "postgres", &url, "write");
    let store = PostgresStore::connect(&url, 2)
        .await
        .expect("connect")
        .with_ttl(TtlConfig::default());
    common::write_rust_items(&store).await;

    let from_python = common::peer(&python, "postgres", &url, "read");
    let from_rust = common::rust_answers(&store, "postgres").await;
    common::assert_same(&from_python, &from_rust);
    assert_eq!(
        from_rust["filter/n>=2"],
        serde_json::json!(["p2", "r1", "theme", "theme"])
    );
    assert!(store
        .get(Namespace::from(["py", "prefs"]), "theme")
        .await
        .expect("get")
        .is_some());
}
