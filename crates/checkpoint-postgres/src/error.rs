//! How driver and pool failures become [`stategraph_checkpoint::Error`]s.
//!
//! The crate has no error enum of its own (as sqlx drivers reuse sqlx-core's): a failure
//! inside Postgres, the driver or the pool is [`Error::Backend`] holding a [`PgError`],
//! whose `Display` tells the whole story in one line: the saver operation (`get_tuple`,
//! `put`, ...), the server's `host:port/database` (never the user or password), and what
//! went wrong, with the SQLSTATE, severity,
//! message, detail and hint when the server reported the failure. A caller reaches the
//! SQLSTATE through [`db_error`] or [`PgError::code`]. A server, pool or connection that
//! does not answer in time is [`Error::Timeout`]. Everything this crate decides itself
//! (a fenced-off put, a config without a checkpoint id, a value JSONB cannot hold) uses
//! the other variants.
//!
//! `PgError` keeps its `source()` empty: everything its causes say is in its own text
//! already, so a report that prints the chain does not print it twice. Its `Debug` is that
//! text too (not the driver's `DbError { file, line, routine, .. }`).

use std::fmt;
use std::sync::Arc;

use stategraph_checkpoint::{Error, Result};
use tokio_postgres::types::FromSql;
use tokio_postgres::Row;

pub use tokio_postgres::error::{DbError, SqlState};

/// A failure of Postgres, the driver or the connection pool, with the operation and the
/// server it happened on.
pub struct PgError {
    operation: Option<&'static str>,
    address: Option<Arc<str>>,
    cause: Cause,
}

enum Cause {
    /// The driver's error (a server error, a closed connection, an I/O failure).
    Driver(tokio_postgres::Error),
    /// A failure of the pool or of this crate's plumbing, in words.
    Other(String),
}

impl PgError {
    /// The saver operation that failed (`"get_tuple"`, `"put"`, `"connect"`, ...), when
    /// known.
    pub fn operation(&self) -> Option<&str> {
        self.operation
    }

    /// The server's `host:port` (several, comma separated, for a multi-host URL) and
    /// `/database` for a saver made by [`crate::PostgresSaver::connect`], when known (a saver made by [`crate::PostgresSaver::from_pool`] does not know it).
    pub fn address(&self) -> Option<&str> {
        self.address.as_deref()
    }

    /// The driver's error, if the failure came from the driver.
    pub fn driver(&self) -> Option<&tokio_postgres::Error> {
        match &self.cause {
            Cause::Driver(e) => Some(e),
            Cause::Other(_) => None,
        }
    }

    /// The server's report, if the server reported the failure.
    pub fn db_error(&self) -> Option<&DbError> {
        self.driver().and_then(tokio_postgres::Error::as_db_error)
    }

    /// The SQLSTATE the server reported, if it reported the failure.
    pub fn code(&self) -> Option<&SqlState> {
        self.db_error().map(DbError::code)
    }

    /// True when the connection was lost (closed by the server, reset, a restart).
    pub fn is_connection_lost(&self) -> bool {
        self.driver().is_some_and(tokio_postgres::Error::is_closed)
            || self.code().is_some_and(|c| {
                [
                    &SqlState::ADMIN_SHUTDOWN,
                    &SqlState::CRASH_SHUTDOWN,
                    &SqlState::CANNOT_CONNECT_NOW,
                ]
                .contains(&c)
            })
    }

    /// Fills in the operation and the address where not known yet.
    pub(crate) fn locate(&mut self, operation: &'static str, address: Option<&Arc<str>>) {
        self.operation.get_or_insert(operation);
        if self.address.is_none() {
            self.address = address.cloned();
        }
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.operation, &self.address) {
            (Some(op), Some(addr)) => write!(f, "postgres {addr}, {op}: ")?,
            (Some(op), None) => write!(f, "postgres, {op}: ")?,
            (None, Some(addr)) => write!(f, "postgres {addr}: ")?,
            (None, None) => f.write_str("postgres: ")?,
        }
        match &self.cause {
            Cause::Other(text) => f.write_str(text),
            Cause::Driver(e) => match e.as_db_error() {
                Some(db) => write_db_error(f, db),
                None => {
                    // The driver's own words, then each cause's, once.
                    write!(f, "{e}")?;
                    let mut source = std::error::Error::source(e);
                    while let Some(s) = source {
                        write!(f, ": {s}")?;
                        source = s.source();
                    }
                    Ok(())
                }
            },
        }
    }
}

/// `SQLSTATE 23505 (ERROR): message; detail: ...; hint: ...`.
fn write_db_error(f: &mut fmt::Formatter<'_>, db: &DbError) -> fmt::Result {
    write!(
        f,
        "SQLSTATE {} ({}): {}",
        db.code().code(),
        db.severity(),
        db.message()
    )?;
    if let Some(detail) = db.detail() {
        write!(f, "; detail: {detail}")?;
    }
    if let Some(hint) = db.hint() {
        write!(f, "; hint: {hint}")?;
    }
    Ok(())
}

impl fmt::Debug for PgError {
    /// The `Display` text: the driver's structures stay out of reports.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for PgError {}

/// Wraps a driver error (the saver adds the operation and address).
pub(crate) fn pg(e: tokio_postgres::Error) -> Error {
    Error::Backend(Box::new(PgError {
        operation: None,
        address: None,
        cause: Cause::Driver(e),
    }))
}

/// A backend error in words, at a known operation and address.
pub(crate) fn other(
    operation: &'static str,
    address: Option<&Arc<str>>,
    text: impl Into<String>,
) -> Error {
    Error::Backend(Box::new(PgError {
        operation: Some(operation),
        address: address.cloned(),
        cause: Cause::Other(text.into()),
    }))
}

/// Adds the operation and address to a [`PgError`] inside `error`, if there is one.
pub(crate) fn locate(
    mut error: Error,
    operation: &'static str,
    address: Option<&Arc<str>>,
) -> Error {
    if let Error::Backend(source) = &mut error {
        if let Some(pg) = source.downcast_mut::<PgError>() {
            pg.locate(operation, address);
        }
    }
    error
}

/// The Postgres error behind a [`Error::Backend`] returned by this crate, if the server
/// reported one: its [`DbError::code`] is the SQLSTATE (for example
/// [`SqlState::T_R_SERIALIZATION_FAILURE`] from a `prune` racing another writer).
pub fn db_error(error: &Error) -> Option<&DbError> {
    pg_error(error).and_then(PgError::db_error)
}

/// The [`PgError`] inside a [`Error::Backend`] returned by this crate.
pub fn pg_error(error: &Error) -> Option<&PgError> {
    match error {
        Error::Backend(source) => source.downcast_ref::<PgError>(),
        _ => None,
    }
}

/// One column, with a type mismatch as an error instead of a panic.
pub(crate) fn col<'r, T: FromSql<'r>>(row: &'r Row, i: usize) -> Result<T> {
    row.try_get(i)
        .map_err(|e| Error::InvalidData(format!("column {i}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_that_are_not_from_the_server_have_no_db_error() {
        assert!(db_error(&Error::Conflict("x".into())).is_none());
        let io = Error::Backend(Box::new(std::io::Error::other("down")));
        assert!(db_error(&io).is_none());
        assert!(pg_error(&io).is_none());
    }

    #[test]
    fn a_located_error_names_operation_and_address_once() {
        let addr: Arc<str> = Arc::from("db.example:5432");
        let e = other("put", Some(&addr), "the pool is closed");
        let e = locate(e, "get_tuple", None);
        assert_eq!(
            e.to_string(),
            "backend error: postgres db.example:5432, put: the pool is closed"
        );
        assert!(std::error::Error::source(&e).is_none());
        let pg = pg_error(&e).expect("a PgError");
        assert_eq!(pg.operation(), Some("put"));
        assert_eq!(pg.address(), Some("db.example:5432"));
        assert!(pg.code().is_none() && !pg.is_connection_lost());
    }
}
