//! The connections of a saver: one writer, a few readers, and the blocking-thread hop.
//!
//! SQLite lets one connection write at a time, so all writes go through one connection
//! behind a mutex, each in its own `BEGIN IMMEDIATE` transaction: the write lock is taken
//! when the transaction starts, so a write never fails half-way because it could not
//! upgrade a read lock, and other processes (a Python saver on the same file) wait on
//! `busy_timeout` instead of failing.
//!
//! Reads on a file use their own connections (opened on demand, up to [`MAX_IDLE_READERS`]
//! kept for reuse), each read inside one deferred transaction so that a checkpoint and its
//! writes come from the same snapshot. Reader connections run with `PRAGMA query_only`, so
//! they cannot take the write lock at all; in WAL mode a reader works on its snapshot
//! while the writer appends to the log, and neither waits for the other.
//!
//! An in-memory database exists only inside its one connection, so there reads share the
//! writer connection (and its mutex).
//!
//! # Snapshots that provably did not change
//!
//! [`Pool::read_stamped`] hands its closure a [`Stamp`] of the snapshot it reads: which
//! connection, that connection's `PRAGMA data_version`, and how many writes the
//! connection itself ran. SQLite changes a connection's `data_version` whenever another
//! connection (of this process or any other) committed since the connection's previous
//! read, and a reader connection never writes; a connection shared with the writer counts
//! its own writes in the stamp instead. So two reads with equal stamps saw the same
//! database content, and whatever the first one learned (which checkpoint is the latest,
//! what a row decodes to) still holds for the second without reading it again
//! ([`crate::cache`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use stategraph_checkpoint::{Error, Result};

use crate::error::SqlResultExt;
use crate::schema;
use crate::sql;

/// How many idle reader connections are kept for reuse.
pub(crate) const MAX_IDLE_READERS: usize = 4;

/// Numbers every connection a pool opens, across pools, so that stamps of different
/// connections never compare equal.
static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

/// Which snapshot a read saw: equal stamps mean equal database content (see the module
/// docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// The connection read from.
    connection: u64,
    /// Its `PRAGMA data_version` in the read transaction.
    data_version: i64,
    /// The writes run on that connection itself (only a connection shared with the
    /// writer has any).
    own_writes: u64,
}

/// One connection and the number that tells it apart in a [`Stamp`].
#[derive(Debug)]
struct Numbered {
    conn: Connection,
    id: u64,
}

impl Numbered {
    fn new(conn: Connection) -> Numbered {
        Numbered {
            conn,
            id: NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed),
        }
    }
}

/// The writer connection and, for files, the reader connections.
#[derive(Debug)]
pub(crate) struct Pool {
    /// The file's path as shown in errors, or `:memory:`.
    database: String,
    writer: Mutex<Numbered>,
    /// Writes run on the writer connection (changed under its mutex).
    own_writes: AtomicU64,
    readers: Option<Readers>,
}

/// Idle reader connections of one database file.
#[derive(Debug)]
struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Numbered>>,
}

impl Pool {
    /// Opens (creating if needed) the database file at `path` and sets it up.
    pub(crate) fn open(path: PathBuf) -> Result<Pool> {
        let writer = Connection::open(&path).backend()?;
        schema::setup(&writer, true)?;
        writer.execute_batch(sql::SYNCHRONOUS_FULL).backend()?;
        Ok(Pool {
            database: path.display().to_string(),
            writer: Mutex::new(Numbered::new(writer)),
            own_writes: AtomicU64::new(0),
            readers: Some(Readers {
                path,
                idle: Mutex::new(Vec::new()),
            }),
        })
    }

    /// A private in-memory database.
    pub(crate) fn in_memory() -> Result<Pool> {
        let writer = Connection::open_in_memory().backend()?;
        schema::setup(&writer, false)?;
        Ok(Pool {
            database: ":memory:".to_owned(),
            writer: Mutex::new(Numbered::new(writer)),
            own_writes: AtomicU64::new(0),
            readers: None,
        })
    }

    /// The database as errors name it: the file's path, or `:memory:`.
    pub(crate) fn database(&self) -> &str {
        &self.database
    }

    /// Sets `PRAGMA synchronous` on the writer connection.
    pub(crate) fn set_synchronous(&self, mode: crate::Synchronous) -> Result<()> {
        self.writer
            .lock()
            .conn
            .execute_batch(mode.pragma())
            .backend()
    }

    /// A read-only pool over one connection opened by [`crate::read_only::connect`]: reads
    /// share it, and any write fails (SQLite refuses it).
    pub(crate) fn read_only(conn: Connection) -> Pool {
        let database = match conn.path() {
            Some(path) if !path.is_empty() => path.to_owned(),
            _ => ":memory:".to_owned(),
        };
        Pool {
            database,
            writer: Mutex::new(Numbered::new(conn)),
            own_writes: AtomicU64::new(0),
            readers: None,
        }
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction on the writer, committing if it
    /// succeeds and rolling back if it fails.
    pub(crate) fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut writer = self.writer.lock();
        // Counted whether it commits or not: a stamp only needs to change.
        self.own_writes.fetch_add(1, Ordering::Relaxed);
        let tx = writer
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .backend()?;
        let out = f(&tx)?;
        tx.commit().backend()?;
        Ok(out)
    }

    /// Runs `f` in one read transaction (one snapshot) on a reader connection.
    pub(crate) fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        self.on_reader(|conn, _| in_read_transaction(&conn.conn, f))
    }

    /// [`Pool::read`], with the [`Stamp`] of the snapshot the transaction reads.
    pub(crate) fn read_stamped<T>(
        &self,
        f: impl FnOnce(&Connection, Stamp) -> Result<T>,
    ) -> Result<T> {
        self.on_reader(|conn, own_writes| {
            in_read_transaction(&conn.conn, |tx| {
                let data_version: i64 = tx
                    .prepare_cached(sql::DATA_VERSION)
                    .and_then(|mut s| s.query_row([], |r| r.get(0)))
                    .backend()?;
                let stamp = Stamp {
                    connection: conn.id,
                    data_version,
                    own_writes,
                };
                f(tx, stamp)
            })
        })
    }

    /// Runs `f` on a reader connection (the writer's, under its mutex, when there are no
    /// readers) with the count of writes run on that connection.
    fn on_reader<T>(&self, f: impl FnOnce(&Numbered, u64) -> Result<T>) -> Result<T> {
        let Some(readers) = &self.readers else {
            let writer = self.writer.lock();
            return f(&writer, self.own_writes.load(Ordering::Relaxed));
        };
        let conn = match readers.idle.lock().pop() {
            Some(conn) => conn,
            None => Numbered::new(readers.open()?),
        };
        let out = f(&conn, 0);
        let mut idle = readers.idle.lock();
        if idle.len() < MAX_IDLE_READERS {
            idle.push(conn);
        }
        out
    }
}

impl Readers {
    /// A new reader connection on the (existing) file.
    fn open(&self) -> Result<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).backend()?;
        schema::setup_reader(&conn)?;
        Ok(conn)
    }
}

/// Runs `f` inside a deferred transaction, which only ever takes a read snapshot here.
fn in_read_transaction<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Deferred).backend()?;
    let out = f(&tx)?;
    tx.commit().backend()?;
    Ok(out)
}

/// Runs blocking database work off the async threads: on tokio's blocking pool when
/// called inside a tokio runtime, inline otherwise.
pub(crate) async fn blocking<T, F>(pool: &Arc<Pool>, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&Pool) -> Result<T> + Send + 'static,
{
    let pool = Arc::clone(pool);
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(move || f(&pool))
            .await
            .map_err(|e| Error::Backend(Box::new(e)))?,
        Err(_) => f(&pool),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database file removed (with its companions) when dropped.
    struct TempFile(PathBuf);

    impl Drop for TempFile {
        fn drop(&mut self) {
            for suffix in ["", "-wal", "-shm"] {
                let mut name = self.0.clone().into_os_string();
                name.push(suffix);
                let _ = std::fs::remove_file(name);
            }
        }
    }

    fn stamp(pool: &Pool) -> Stamp {
        pool.read_stamped(|_, stamp| Ok(stamp)).expect("read")
    }

    fn insert(conn: &Connection, thread: &str) {
        conn.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_id) VALUES (?1, '1')",
            [thread],
        )
        .expect("insert");
    }

    #[test]
    fn a_stamp_changes_exactly_when_some_connection_committed() {
        let file = TempFile(std::env::temp_dir().join(format!(
            "stategraph-pool-stamp-{}-{}.sqlite",
            std::process::id(),
            NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed)
        )));
        let pool = Pool::open(file.0.clone()).expect("open");
        let first = stamp(&pool);
        assert_eq!(stamp(&pool), first, "nothing committed");
        pool.write(|tx| {
            insert(tx, "a");
            Ok(())
        })
        .expect("write");
        let after_own = stamp(&pool);
        assert_ne!(after_own, first, "this pool's writer committed");
        assert_eq!(stamp(&pool), after_own);
        let other = Connection::open(&file.0).expect("other connection");
        insert(&other, "b");
        let after_other = stamp(&pool);
        assert_ne!(after_other, after_own, "another connection committed");
        assert_eq!(stamp(&pool), after_other);
    }

    #[test]
    fn a_shared_connection_counts_its_own_writes() {
        let pool = Pool::in_memory().expect("open");
        let first = stamp(&pool);
        assert_eq!(stamp(&pool), first);
        pool.write(|tx| {
            insert(tx, "a");
            Ok(())
        })
        .expect("write");
        assert_ne!(stamp(&pool), first);
    }
}
