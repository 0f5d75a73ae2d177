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

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use stategraph_checkpoint::{Error, Result};

use crate::error::SqlResultExt;
use crate::schema;

/// How many idle reader connections are kept for reuse.
pub(crate) const MAX_IDLE_READERS: usize = 4;

/// The writer connection and, for files, the reader connections.
#[derive(Debug)]
pub(crate) struct Pool {
    writer: Mutex<Connection>,
    readers: Option<Readers>,
}

/// Idle reader connections of one database file.
#[derive(Debug)]
struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Pool {
    /// Opens (creating if needed) the database file at `path` and sets it up.
    pub(crate) fn open(path: PathBuf) -> Result<Pool> {
        let writer = Connection::open(&path).backend()?;
        schema::setup(&writer, true)?;
        Ok(Pool {
            writer: Mutex::new(writer),
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
            writer: Mutex::new(writer),
            readers: None,
        })
    }

    /// A read-only pool over one connection opened by [`crate::read_only::connect`]: reads
    /// share it, and any write fails (SQLite refuses it).
    pub(crate) fn read_only(conn: Connection) -> Pool {
        Pool {
            writer: Mutex::new(conn),
            readers: None,
        }
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction on the writer, committing if it
    /// succeeds and rolling back if it fails.
    pub(crate) fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.writer.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .backend()?;
        let out = f(&tx)?;
        tx.commit().backend()?;
        Ok(out)
    }

    /// Runs `f` in one read transaction (one snapshot) on a reader connection.
    pub(crate) fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let Some(readers) = &self.readers else {
            let conn = self.writer.lock();
            return in_read_transaction(&conn, f);
        };
        let conn = match readers.idle.lock().pop() {
            Some(conn) => conn,
            None => readers.open()?,
        };
        let out = in_read_transaction(&conn, f);
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
