//! The savers the engine's durable-execution tests run against, and `for_each_saver!`, which
//! runs one async test body once per saver (ripgrep's `rgtest!`, LangGraph's
//! `sync_checkpointer` fixture): `MemorySaver`, `SqliteSaver` in memory, and
//! `PostgresSaver` on a fresh schema of the server named by `STATEGRAPH_TEST_POSTGRES_URL`
//! (skipped with a note when the server is unreachable, unless
//! `STATEGRAPH_REQUIRE_POSTGRES` is set).

use std::sync::Arc;

use stategraph::checkpoint::{CheckpointSaver, MemorySaver};
use stategraph_checkpoint_postgres::PostgresSaver;
use stategraph_checkpoint_sqlite::SqliteSaver;

/// The server used when `STATEGRAPH_TEST_POSTGRES_URL` is not set.
pub const DEFAULT_POSTGRES_URL: &str = "postgresql://postgres@127.0.0.1:5432/postgres";

/// A fresh in-memory saver.
pub fn memory() -> Arc<dyn CheckpointSaver> {
    Arc::new(MemorySaver::new())
}

/// A fresh SQLite saver on a private in-memory database.
pub fn sqlite() -> Arc<dyn CheckpointSaver> {
    Arc::new(SqliteSaver::in_memory().expect("an in-memory SQLite database"))
}

/// A Postgres saver on a schema of its own, dropped with the returned guard; `None` (after
/// a note) when the server is unreachable and not required. The saver is unfenced: it
/// stores what Python's saver stores, forks included.
pub async fn postgres() -> Option<(Arc<dyn CheckpointSaver>, PostgresSchema)> {
    let (saver, guard) = postgres_saver().await?;
    Some((Arc::new(saver), guard))
}

/// A `PostgresSaver` on a fresh schema (dropped with the guard), or `None` when Postgres is
/// unreachable and not required.
pub async fn postgres_saver() -> Option<(PostgresSaver, PostgresSchema)> {
    let (saver, guard) = postgres_fenced().await?;
    Some((saver.with_fencing(false), guard))
}

/// A `PostgresSaver` with its fence on (the default), on a fresh schema.
pub async fn postgres_fenced() -> Option<(PostgresSaver, PostgresSchema)> {
    let base = std::env::var("STATEGRAPH_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_owned());
    let required =
        std::env::var("STATEGRAPH_REQUIRE_POSTGRES").is_ok_and(|v| !v.is_empty() && v != "0");
    let admin = match PostgresSaver::connect(&base).await {
        Ok(admin) => admin,
        Err(e) if !required => {
            println!("note: Postgres at {base} is unreachable ({e}); test not run");
            return None;
        }
        Err(e) => panic!("STATEGRAPH_REQUIRE_POSTGRES is set and {base} is unreachable: {e}"),
    };
    let schema = format!("sg_durable_{}", uuid::Uuid::new_v4().simple());
    admin
        .pool()
        .get()
        .await
        .expect("a connection")
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await
        .expect("create the test schema");
    let guard = PostgresSchema {
        base: base.clone(),
        schema: schema.clone(),
    };
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-csearch_path%3D{schema}");
    let saver = PostgresSaver::connect(&url)
        .await
        .expect("connect to the test schema");
    saver.setup().await.expect("create the tables");
    Some((saver, guard))
}

/// Drops its schema when dropped (from a thread of its own, since the test's runtime may
/// be shutting down or blocked), whether the test passed or panicked.
pub struct PostgresSchema {
    base: String,
    schema: String,
}

impl PostgresSchema {
    /// The URL of a connection whose `search_path` is this schema (what the saver of
    /// [`postgres_fenced`] connects to), for another client such as Python's saver.
    pub fn url(&self) -> String {
        let sep = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{sep}options=-csearch_path%3D{}", self.base, self.schema)
    }
}

impl Drop for PostgresSchema {
    fn drop(&mut self) {
        let base = self.base.clone();
        let schema = self.schema.clone();
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                let admin = PostgresSaver::connect(&base).await.ok()?;
                let client = admin.pool().get().await.ok()?;
                client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .await
                    .ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(()))) {
            eprintln!("note: could not drop the test schema {}", self.schema);
        }
    }
}

/// Defines a module `$name` with one `#[tokio::test]` per saver (`memory`, `sqlite`,
/// `postgres`), each running `$body` with `$saver: Arc<dyn CheckpointSaver>` bound to a
/// fresh, empty saver of that kind. Attributes given before `async fn`
/// (`#[ignore = "..."]`) go on every case.
///
/// ```ignore
/// for_each_saver! {
///     async fn a_run_is_stored(saver) {
///         let graph = compile(saver.clone());
///         // ...
///     }
/// }
/// ```
#[macro_export]
macro_rules! for_each_saver {
    ($(#[$meta:meta])* async fn $name:ident($saver:ident) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn memory() {
                let $saver: ::std::sync::Arc<dyn ::stategraph::checkpoint::CheckpointSaver> =
                    $crate::support::savers::memory();
                $body
            }

            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let $saver: ::std::sync::Arc<dyn ::stategraph::checkpoint::CheckpointSaver> =
                    $crate::support::savers::sqlite();
                $body
            }

            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some(($saver, _schema)) = $crate::support::savers::postgres().await else {
                    return;
                };
                $body
            }
        }
    };
}
