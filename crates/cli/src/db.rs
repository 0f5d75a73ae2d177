//! Opening a database named on the command line, and the few aggregate reads the savers'
//! API has no call for (sizes, thread ids, raw write rows with their index and task path).
//!
//! Checkpoints themselves are always read and written through the savers
//! ([`SqliteSaver`], [`PostgresSaver`]); the reads of row sizes and of the raw rows that
//! `verify` must see before decoding are the savers' `inspect` modules
//! (`stategraph_checkpoint_sqlite::inspect`, `stategraph_checkpoint_postgres::inspect`):
//! this module holds no SQL, it picks the saver's function and words its errors.
//!
//! Reading never changes a database: a SQLite file is opened with
//! [`SqliteSaver::open_read_only`] (no WAL switch, no migration, no new files) and every
//! Postgres connection of a reading pool runs with `default_transaction_read_only = on`,
//! so each statement is a read-only transaction that the server refuses to let write.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::{CheckpointSaver, Error};
use stategraph_checkpoint_postgres::deadpool_postgres::{tokio_postgres, Pool};
use stategraph_checkpoint_postgres::inspect as pg_inspect;
use stategraph_checkpoint_postgres::{build_pool, PostgresOptions, PostgresSaver};
pub use stategraph_checkpoint_sqlite::inspect::Damage;
use stategraph_checkpoint_sqlite::inspect::{self as sqlite_inspect};
use stategraph_checkpoint_sqlite::rusqlite::{self, Connection, OpenFlags};
use stategraph_checkpoint_sqlite::{read_only, SqliteSaver};

use crate::error::{CliError, Result};

/// An open database: its saver and a raw handle for aggregate reads.
pub struct Db {
    /// What the user named (path or URL), for messages.
    pub name: String,
    /// The saver over the database.
    pub saver: Arc<dyn CheckpointSaver>,
    /// The serializer its values use.
    pub serde: Arc<dyn Serializer>,
    raw: Raw,
}

enum Raw {
    Sqlite(Mutex<Connection>),
    Postgres(Pool),
}

/// Which kind of database a name designates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A SQLite file.
    Sqlite,
    /// A Postgres database.
    Postgres,
}

/// The kind of database `name` designates: a `postgres://` or `postgresql://` URL, or a
/// SQLite path.
pub fn kind_of(name: &str) -> Kind {
    if name.starts_with("postgresql://") || name.starts_with("postgres://") {
        Kind::Postgres
    } else {
        Kind::Sqlite
    }
}

pub use stategraph_checkpoint::inspect::{NsRow, RawValue, RawWrite};

impl Db {
    /// Opens `name` for reading only.
    pub async fn open_read(name: &str) -> Result<Db> {
        match kind_of(name) {
            Kind::Sqlite => {
                let path = PathBuf::from(name);
                let saver = SqliteSaver::open_read_only(&path)?;
                let conn = read_only::connect(&path)?;
                Ok(Db::sqlite(name, saver, conn))
            }
            Kind::Postgres => {
                let pool = pg_pool(name, true).await?;
                let saver = PostgresSaver::from_pool(pool.clone());
                let db = Db::postgres(name, saver, pool);
                db.check_postgres_tables().await?;
                Ok(db)
            }
        }
    }

    /// Opens `name` for writing: a SQLite file is created if missing and set up as
    /// LangGraph's saver sets it up; a Postgres database gets the tables (`setup`).
    /// Fencing is off (SQLite and Postgres): maintenance writes whole threads, forks included.
    pub async fn open_write(name: &str) -> Result<Db> {
        match kind_of(name) {
            Kind::Sqlite => {
                let saver = SqliteSaver::open(name)?.with_fencing(false);
                let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let conn = Connection::open_with_flags(name, flags).map_err(sql)?;
                Ok(Db::sqlite(name, saver, conn))
            }
            Kind::Postgres => {
                let pool = pg_pool(name, false).await?;
                let saver = PostgresSaver::from_pool(pool.clone()).with_fencing(false);
                saver.setup().await?;
                Ok(Db::postgres(name, saver, pool))
            }
        }
    }

    fn sqlite(name: &str, saver: SqliteSaver, conn: Connection) -> Db {
        let serde = Arc::clone(saver.serializer());
        Db {
            name: name.to_owned(),
            saver: Arc::new(saver),
            serde,
            raw: Raw::Sqlite(Mutex::new(conn)),
        }
    }

    fn postgres(name: &str, saver: PostgresSaver, pool: Pool) -> Db {
        let serde = Arc::clone(saver.serializer());
        Db {
            name: name.to_owned(),
            saver: Arc::new(saver),
            serde,
            raw: Raw::Postgres(pool),
        }
    }

    /// The kind of database.
    pub fn kind(&self) -> Kind {
        match self.raw {
            Raw::Sqlite(_) => Kind::Sqlite,
            Raw::Postgres(_) => Kind::Postgres,
        }
    }

    async fn check_postgres_tables(&self) -> Result<()> {
        let Raw::Postgres(pool) = &self.raw else {
            return Ok(());
        };
        let client = pool.get().await.map_err(pg_pool_err)?;
        if !pg_inspect::has_tables(&client).await.map_err(pg)? {
            return Err(CliError::Database(format!(
                "{}: not a checkpoint database (no LangGraph checkpoint tables)",
                self.name
            )));
        }
        Ok(())
    }

    /// Every (thread, namespace) with its checkpoint count, latest id and row bytes.
    pub async fn thread_rows(&self) -> Result<Vec<NsRow>> {
        match &self.raw {
            Raw::Sqlite(conn) => sqlite_inspect::namespaces(&conn.lock()).map_err(sql),
            Raw::Postgres(pool) => {
                let client = pool.get().await.map_err(pg_pool_err)?;
                pg_inspect::namespaces(&client).await.map_err(pg)
            }
        }
    }

    /// The size of every thread, the one definition `threads` and `stats` share: the
    /// bytes the database stores for it, in every namespace: its checkpoint rows
    /// (checkpoint and metadata columns), its pending writes and, on Postgres, its channel
    /// blobs. A byte count is the length of each stored value: `length()` on SQLite; on
    /// Postgres `octet_length()` of byte columns, `pg_column_size()` of JSONB ones.
    pub async fn thread_sizes(&self) -> Result<std::collections::HashMap<String, i64>> {
        let mut out: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
        for row in self.thread_rows().await? {
            *out.entry(row.thread_id).or_default() += row.bytes;
        }
        for (thread, bytes) in self.other_bytes().await? {
            *out.entry(thread).or_default() += bytes;
        }
        Ok(out)
    }

    /// Calls `f` on every checkpoint row of `(thread, ns)` of a SQLite database, oldest
    /// first, one row at a time: `(id, parent id, type, checkpoint bytes, row bytes)`.
    /// Returns `false` (and calls nothing) on Postgres, whose rows hold no values.
    pub fn for_each_sqlite_checkpoint(
        &self,
        thread: &str,
        ns: &str,
        f: impl FnMut(String, Option<String>, String, &[u8], u64) -> Result<()>,
    ) -> Result<bool> {
        let Raw::Sqlite(conn) = &self.raw else {
            return Ok(false);
        };
        sqlite_inspect::for_each_checkpoint(&conn.lock(), thread, ns, f)?;
        Ok(true)
    }

    /// How many checkpoints `(thread, ns)` has.
    pub async fn count_checkpoints(&self, thread: &str, ns: &str) -> Result<u64> {
        match &self.raw {
            Raw::Sqlite(conn) => {
                sqlite_inspect::count_checkpoints(&conn.lock(), thread, ns).map_err(sql)
            }
            Raw::Postgres(pool) => {
                let client = pool.get().await.map_err(pg_pool_err)?;
                pg_inspect::count_checkpoints(&client, thread, ns)
                    .await
                    .map_err(pg)
            }
        }
    }

    /// Bytes of writes (and, on Postgres, blobs) per thread.
    pub async fn other_bytes(&self) -> Result<Vec<(String, i64)>> {
        match &self.raw {
            Raw::Sqlite(conn) => sqlite_inspect::write_bytes(&conn.lock()).map_err(sql),
            Raw::Postgres(pool) => {
                let client = pool.get().await.map_err(pg_pool_err)?;
                pg_inspect::blob_and_write_bytes(&client).await.map_err(pg)
            }
        }
    }

    /// Bytes of each checkpoint row of a thread (checkpoint and metadata columns), by
    /// namespace and id.
    pub async fn checkpoint_bytes(&self, thread: &str) -> Result<Vec<(String, String, i64)>> {
        match &self.raw {
            Raw::Sqlite(conn) => {
                sqlite_inspect::checkpoint_bytes(&conn.lock(), thread).map_err(sql)
            }
            Raw::Postgres(pool) => {
                let client = pool.get().await.map_err(pg_pool_err)?;
                pg_inspect::checkpoint_bytes(&client, thread)
                    .await
                    .map_err(pg)
            }
        }
    }

    /// The stored writes of one checkpoint, with their task path and index, in the
    /// savers' order (task path, task id, index).
    pub async fn raw_writes(&self, thread: &str, ns: &str, id: &str) -> Result<Vec<RawWrite>> {
        match &self.raw {
            Raw::Sqlite(conn) => {
                sqlite_inspect::raw_writes(&conn.lock(), thread, ns, id).map_err(sql)
            }
            Raw::Postgres(pool) => {
                let client = pool.get().await.map_err(pg_pool_err)?;
                pg_inspect::raw_writes(&client, thread, ns, id)
                    .await
                    .map_err(pg)
            }
        }
    }

    /// Calls `f` on every encoded value of every table, one row at a time (memory stays
    /// bounded whatever the database's size). `total` is called first with the row count.
    ///
    /// A SQLite file whose pages are damaged does not stop the pass: each table that
    /// cannot be read to its end, and each problem SQLite's `PRAGMA quick_check` finds
    /// (indexes, free pages), is returned as a [`Damage`], and the rows read before it
    /// are still checked.
    pub async fn for_each_raw_value(
        &self,
        total: impl FnOnce(u64),
        f: impl FnMut(RawValue),
    ) -> Result<Vec<Damage>> {
        match &self.raw {
            Raw::Sqlite(conn) => sqlite_inspect::raw_values(&conn.lock(), total, f).map_err(sql),
            Raw::Postgres(pool) => {
                let client = pool.get().await.map_err(pg_pool_err)?;
                pg_inspect::raw_values(&client, total, f)
                    .await
                    .map_err(pg)?;
                // The server keeps its own pages; a damaged one fails the query above.
                Ok(Vec::new())
            }
        }
    }
}

/// Whether a command's error is SQLite saying the file is damaged (a malformed page, not
/// a file that is no database at all).
pub fn is_damage(e: &CliError) -> bool {
    let CliError::Checkpoint(Error::Backend(source)) = e else {
        return false;
    };
    source.downcast_ref::<rusqlite::Error>().is_some_and(|e| {
        e.sqlite_error_code()
            == Some(stategraph_checkpoint_sqlite::rusqlite::ErrorCode::DatabaseCorrupt)
    })
}

/// A pool on `url` (the Postgres saver's [`build_pool`], four connections, its timeouts),
/// checked by one connection; `read_only` makes every transaction of every connection
/// read-only ([`PostgresOptions::read_only`]).
pub(crate) async fn pg_pool(url: &str, read_only: bool) -> Result<Pool> {
    let options = PostgresOptions::default()
        .with_pool_size(4)
        .with_read_only(read_only);
    let pool = build_pool(url, &options)
        .map_err(|e| CliError::Database(format!("{}: {e}", redact(url))))?;
    match pool.get().await {
        Ok(client) => drop(client),
        Err(e) => {
            return Err(CliError::Database(format!(
                "cannot connect to {}: {}",
                redact(url),
                describe_pool_error(&e)
            )))
        }
    }
    Ok(pool)
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.find(':') {
                Some(c) => format!("{}{}:***{}", &url[..s + 3], &creds[..c], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

fn describe_pool_error(e: &stategraph_checkpoint_postgres::deadpool_postgres::PoolError) -> String {
    use std::error::Error as _;
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

fn sql(e: rusqlite::Error) -> CliError {
    CliError::Checkpoint(Error::Backend(Box::new(e)))
}

fn pg(e: tokio_postgres::Error) -> CliError {
    use std::error::Error as _;
    match e.as_db_error() {
        Some(db) => CliError::Database(db.message().to_owned()),
        None => CliError::Database(match e.source() {
            Some(s) => format!("{e}: {s}"),
            None => e.to_string(),
        }),
    }
}

fn pg_pool_err(e: stategraph_checkpoint_postgres::deadpool_postgres::PoolError) -> CliError {
    CliError::Database(describe_pool_error(&e))
}

/// The serializer every database of LangGraph's defaults uses.
#[allow(clippy::default_constructed_unit_structs)] // the serializer may grow options
pub fn default_serde() -> Arc<dyn Serializer> {
    Arc::new(JsonPlusSerializer::default())
}
