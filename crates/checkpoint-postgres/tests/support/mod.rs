//! Test databases: a fresh schema per test on the server named by
//! `STATEGRAPH_TEST_POSTGRES_URL`, dropped when the test ends, passed or failed.
//!
//! Without a reachable server a test prints a note and returns, unless
//! `STATEGRAPH_REQUIRE_POSTGRES` is set (to anything but `0`), which makes it fail.

pub(crate) mod cluster;

use std::ops::Deref;

use stategraph_checkpoint_postgres::PostgresSaver;
use tokio_postgres::NoTls;

/// The server tests use when `STATEGRAPH_TEST_POSTGRES_URL` is not set.
pub(crate) const DEFAULT_URL: &str = "postgresql://postgres@127.0.0.1:5432/postgres";

/// The server URL tests connect to.
pub(crate) fn base_url() -> String {
    std::env::var("STATEGRAPH_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_URL.to_owned())
}

/// True when an unreachable server must fail the tests.
pub(crate) fn required() -> bool {
    std::env::var("STATEGRAPH_REQUIRE_POSTGRES").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// `url` with every connection's `search_path` set to `schema` (libpq `options`) and the
/// schema as `application_name`, by which the guard finds the connections left open.
pub(crate) fn url_in_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-csearch_path%3D{schema}&application_name={schema}")
}

/// A connection to `url`, its connection task spawned.
pub(crate) async fn connect_raw(
    url: &str,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// A fresh schema with the tables set up and a saver on it; derefs to the saver.
pub(crate) struct TestDb {
    /// A saver on the schema (fenced unless created otherwise).
    pub(crate) saver: PostgresSaver,
    /// The URL of the schema: every connection made with it uses the schema.
    pub(crate) url: String,
    /// The schema's name.
    pub(crate) schema: String,
    _guard: SchemaGuard,
}

impl TestDb {
    /// A fresh schema and a fenced saver on it, or `None` (after a note) when the server
    /// is unreachable and not required.
    pub(crate) async fn create() -> Option<TestDb> {
        TestDb::create_with(true).await
    }

    /// A fresh schema and an unfenced saver on it (the conformance suite re-puts and
    /// forks freely), or `None` as [`TestDb::create`].
    pub(crate) async fn unfenced() -> Option<TestDb> {
        TestDb::create_with(false).await
    }

    /// A fresh schema without tables (nothing set up) and an unfenced saver on it, or
    /// `None` as [`TestDb::create`].
    pub(crate) async fn bare() -> Option<TestDb> {
        TestDb::make(false, false).await
    }

    async fn create_with(fencing: bool) -> Option<TestDb> {
        TestDb::make(fencing, true).await
    }

    async fn make(fencing: bool, setup: bool) -> Option<TestDb> {
        let base = base_url();
        let admin = match connect_raw(&base).await {
            Ok(client) => client,
            Err(e) if !required() => {
                println!("note: Postgres at {base} is unreachable ({e}); test not run");
                return None;
            }
            Err(e) => panic!("STATEGRAPH_REQUIRE_POSTGRES is set and {base} is unreachable: {e}"),
        };
        let schema = format!("sg_test_{}", uuid::Uuid::new_v4().simple());
        admin
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .await
            .expect("create the test schema");
        let guard = SchemaGuard {
            base: base.clone(),
            schema: schema.clone(),
        };
        let url = url_in_schema(&base, &schema);
        let saver = PostgresSaver::connect(&url)
            .await
            .expect("connect")
            .with_fencing(fencing);
        if setup {
            saver.setup().await.expect("setup");
        }
        Some(TestDb {
            saver,
            url,
            schema,
            _guard: guard,
        })
    }

    /// A plain connection to the schema, for raw queries.
    pub(crate) async fn raw(&self) -> tokio_postgres::Client {
        connect_raw(&self.url).await.expect("raw connection")
    }

    /// Another saver on the same schema (its own pool), fenced or not.
    pub(crate) async fn another_saver(&self, fencing: bool) -> PostgresSaver {
        PostgresSaver::connect(&self.url)
            .await
            .expect("connect")
            .with_fencing(fencing)
    }
}

impl Deref for TestDb {
    type Target = PostgresSaver;

    fn deref(&self) -> &PostgresSaver {
        &self.saver
    }
}

/// Drops its schema when dropped, from a thread of its own (a test's runtime may be
/// unwinding, and a runtime cannot be blocked on from inside itself). Connections to the
/// schema still open (a failed test may hold a transaction, and the blocked runtime cannot
/// close them) are terminated first.
struct SchemaGuard {
    base: String,
    schema: String,
}

impl Drop for SchemaGuard {
    fn drop(&mut self) {
        let (base, schema) = (self.base.clone(), self.schema.clone());
        let dropper = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime to drop the test schema");
            runtime.block_on(async move {
                match connect_raw(&base).await {
                    Ok(client) => {
                        let sql = format!(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                             WHERE application_name = '{schema}' AND pid <> pg_backend_pid(); \
                             DROP SCHEMA IF EXISTS {schema} CASCADE"
                        );
                        if let Err(e) = client.batch_execute(&sql).await {
                            eprintln!("could not drop test schema {schema}: {e}");
                        }
                    }
                    Err(e) => eprintln!("could not drop test schema {schema}: {e}"),
                }
            });
        });
        let _ = dropper.join();
    }
}
