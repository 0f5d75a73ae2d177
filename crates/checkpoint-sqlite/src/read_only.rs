//! Opening a database file for reading only: no WAL switch, no migration, no new files.
//!
//! [`SqliteSaver::open`] prepares a file for writing (WAL mode, tables created or
//! migrated), which changes it. Inspecting a file (Python's or ours) must not: a read-only
//! open leaves the file byte for byte as it was.
//!
//! SQLite opens a WAL-mode file read-only by creating its `-wal` and `-shm` files if they
//! are missing. So when the `-wal` file does not exist (no connection has the database
//! open for writing, and every committed change is in the main file), the file is opened
//! `immutable`: SQLite then creates nothing and takes no locks. When the `-wal` file exists
//! (a writer may be working on the file), it is opened in the ordinary read-only mode,
//! which reads the log and coordinates through the existing `-shm` file.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use stategraph_checkpoint::{CheckpointConfig, CheckpointSaver};
//! use stategraph_checkpoint_sqlite::SqliteSaver;
//!
//! let path = std::env::temp_dir().join(format!("ro-doc-{}.sqlite", std::process::id()));
//! drop(SqliteSaver::open(&path)?); // creates the tables; closing folds the WAL back
//! let before = std::fs::read(&path).unwrap();
//!
//! let saver = SqliteSaver::open_read_only(&path)?;
//! assert!(saver.list(None, &Default::default()).await?.is_empty());
//! assert!(saver.delete_thread("t").await.is_err()); // writes are refused
//! drop(saver);
//!
//! assert_eq!(std::fs::read(&path).unwrap(), before);
//! assert!(!path.with_extension("sqlite-wal").exists());
//! # let _ = std::fs::remove_file(&path);
//! # Ok::<(), stategraph_checkpoint::Error>(())
//! # }).unwrap();
//! ```

use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use stategraph_checkpoint::{Error, Result};

use crate::error::SqlResultExt;
use crate::pool::Pool;
use crate::schema::BUSY_TIMEOUT;
use crate::sql;
use crate::SqliteSaver;

/// Opens the existing database file at `path` read-only and checks that it holds
/// LangGraph's checkpoint tables.
///
/// Errors: [`Error::InvalidConfig`] when the file does not exist, is not a SQLite
/// database or has no `checkpoints` / `writes` tables; [`Error::Backend`] for other
/// SQLite failures.
pub fn connect(path: impl AsRef<Path>) -> Result<Connection> {
    let path = path.as_ref();
    let conn = open_file(path)?;
    let tables: i64 = conn
        .query_row(sql::COUNT_SAVER_TABLES, [], |row| row.get(0))
        .map_err(|e| not_a_database(path, e))?;
    if tables != 2 {
        return Err(Error::InvalidConfig(format!(
            "{}: not a checkpoint database (no `checkpoints` and `writes` tables)",
            path.display()
        )));
    }
    Ok(conn)
}

/// Opens the existing SQLite file at `path` read-only, as [`connect`] does (no WAL
/// switch, no new files), without looking for the checkpoint tables: for other readers
/// of the same file (the long-term store).
///
/// Errors: [`Error::InvalidConfig`] when the file does not exist or is not a SQLite
/// database; [`Error::Backend`] for other SQLite failures.
pub fn open_file(path: impl AsRef<Path>) -> Result<Connection> {
    let path = path.as_ref();
    if !path.is_file() {
        return Err(Error::InvalidConfig(format!(
            "{}: no such database file",
            path.display()
        )));
    }
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let immutable = !Path::new(&wal).exists();
    let uri = file_uri(path, immutable);
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(&uri, flags).backend()?;
    conn.busy_timeout(BUSY_TIMEOUT).backend()?;
    // SQLite reads the header lazily: make a file that is not a database fail here.
    conn.query_row(sql::COUNT_SCHEMA, [], |row| row.get::<_, i64>(0))
        .map_err(|e| not_a_database(path, e))?;
    Ok(conn)
}

fn not_a_database(path: &Path, e: rusqlite::Error) -> Error {
    match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::NotADatabase => {
            Error::InvalidConfig(format!("{}: not a SQLite database", path.display()))
        }
        other => crate::error::backend(other),
    }
}

/// A `file:` URI for `path`, with the characters URIs reserve escaped.
fn file_uri(path: &Path, immutable: bool) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '?' => uri.push_str("%3F"),
            '#' => uri.push_str("%23"),
            '%' => uri.push_str("%25"),
            _ => uri.push(c),
        }
    }
    uri.push_str("?mode=ro");
    if immutable {
        uri.push_str("&immutable=1");
    }
    uri
}

impl SqliteSaver {
    /// Opens the existing database file at `path` for reading only (see the
    /// [module](crate::read_only)): `get_tuple`, `list` and `dump` work; every write fails.
    /// The file, its journal mode and its tables are left exactly as they are.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<SqliteSaver> {
        Ok(SqliteSaver::with_pool(Pool::read_only(connect(path)?)))
    }
}
