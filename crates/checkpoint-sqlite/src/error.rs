//! How SQLite failures become [`stategraph_checkpoint::Error::Backend`], named.
//!
//! The contract crate owns the one error type; a driver error travels inside its `Backend`
//! variant. Every operation of the saver wraps the failures of its statements in a
//! [`SqliteError`] that names the database file, the operation with the tables it works
//! on, and the thread (as opening does: `sqlite <path>: opening the database failed: …`),
//! so `database disk image is malformed` says where. The driver's error stays reachable:
//! downcast the `Backend` source to [`SqliteError`] and ask [`SqliteError::sqlite`] (for
//! example to tell `SQLITE_BUSY` or `SQLITE_CORRUPT` apart).

use std::fmt;

use stategraph_checkpoint::{Error, Result};

/// Wraps a rusqlite error as a backend error.
pub(crate) fn backend(e: rusqlite::Error) -> Error {
    Error::Backend(Box::new(e))
}

/// A backend error with a message of ours.
pub(crate) fn backend_msg(message: String) -> Error {
    Error::Backend(message.into())
}

/// `.backend()` on rusqlite results: `?` then yields the contract's error.
pub(crate) trait SqlResultExt<T> {
    /// Maps the error with [`backend`].
    fn backend(self) -> Result<T>;
}

impl<T> SqlResultExt<T> for rusqlite::Result<T> {
    fn backend(self) -> Result<T> {
        self.map_err(backend)
    }
}

/// What an operation of the saver works on, for naming its failures.
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    /// The saver's operation (`get_tuple`, `put_writes`, …).
    pub(crate) name: &'static str,
    /// The tables it reads or writes, e.g. `checkpoints, writes`.
    pub(crate) tables: &'static str,
    /// What it works on: `thread "t"`, `threads "a", "b"`, `every thread`, `runs "r"`.
    pub(crate) subject: String,
}

impl Scope {
    /// An operation on one thread.
    pub(crate) fn thread(name: &'static str, tables: &'static str, thread: &str) -> Scope {
        Scope {
            name,
            tables,
            subject: format!("thread {thread:?}"),
        }
    }

    /// An operation on several threads (`label` is `threads` or `runs`).
    pub(crate) fn many<'a>(
        name: &'static str,
        tables: &'static str,
        label: &str,
        items: impl IntoIterator<Item = &'a str>,
    ) -> Scope {
        let mut seen: Vec<&str> = Vec::new();
        for item in items {
            if !seen.contains(&item) {
                seen.push(item);
            }
        }
        let subject = match seen.as_slice() {
            [] => format!("no {label}"),
            [one] if label == "threads" => format!("thread {one:?}"),
            many => {
                let shown: Vec<String> = many.iter().take(5).map(|t| format!("{t:?}")).collect();
                let more = many.len().saturating_sub(5);
                let tail = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                format!("{label} {}{tail}", shown.join(", "))
            }
        };
        Scope {
            name,
            tables,
            subject,
        }
    }

    /// An operation on every thread of the file.
    pub(crate) fn every_thread(name: &'static str, tables: &'static str) -> Scope {
        Scope {
            name,
            tables,
            subject: "every thread".to_owned(),
        }
    }
}

/// A failed SQLite operation of the saver: which file, which operation on which tables,
/// which thread, and SQLite's reason.
///
/// It is the source of an [`Error::Backend`] (downcast it). Its text reads
/// `sqlite <path>: get_tuple of thread "t" (tables checkpoints, writes) failed: database
/// disk image is malformed`; the reason is in the text, not also a `source()`.
#[derive(Debug)]
pub struct SqliteError {
    database: String,
    op: Scope,
    cause: Box<dyn std::error::Error + Send + Sync>,
}

impl SqliteError {
    /// The database: the file's path, or `:memory:`.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The saver's operation that failed (`get_tuple`, `list`, `put`, `put_writes`, …).
    pub fn operation(&self) -> &str {
        self.op.name
    }

    /// The tables the operation works on, e.g. `checkpoints, writes`.
    pub fn tables(&self) -> &str {
        self.op.tables
    }

    /// What the operation worked on: `thread "t"`, `threads "a", "b"`, `every thread` or
    /// `runs "r"`.
    pub fn subject(&self) -> &str {
        &self.op.subject
    }

    /// The driver's error, when SQLite (through rusqlite) failed.
    pub fn sqlite(&self) -> Option<&rusqlite::Error> {
        self.cause.downcast_ref()
    }

    /// SQLite's result code (`DatabaseCorrupt`, `DatabaseBusy`, …), when it has one.
    pub fn code(&self) -> Option<rusqlite::ErrorCode> {
        self.sqlite().and_then(rusqlite::Error::sqlite_error_code)
    }
}

impl fmt::Display for SqliteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sqlite {}: {} of {} (tables {}) failed: {}",
            self.database, self.op.name, self.op.subject, self.op.tables, self.cause
        )
    }
}

impl std::error::Error for SqliteError {}

/// Names a backend failure of `op` on `database` (other errors pass unchanged).
pub(crate) fn named(e: Error, database: &str, op: Scope) -> Error {
    match e {
        Error::Backend(cause) if !cause.is::<SqliteError>() => {
            Error::Backend(Box::new(SqliteError {
                database: database.to_owned(),
                op,
                cause,
            }))
        }
        other => other,
    }
}
