//! How driver and pool failures become [`stategraph_checkpoint::Error`]s.
//!
//! The crate has no error type of its own (as sqlx drivers reuse sqlx-core's): a failure
//! inside Postgres, the driver or the pool is [`Error::Backend`] with the native error as
//! its source, so a caller can still reach the SQLSTATE through [`db_error`]. Everything
//! this crate decides itself (a fenced-off put, a config without a checkpoint id, a value
//! JSONB cannot hold) uses the other variants.

use stategraph_checkpoint::Error;

pub use tokio_postgres::error::{DbError, SqlState};

/// Wraps a driver error.
pub(crate) fn pg(e: tokio_postgres::Error) -> Error {
    Error::Backend(Box::new(e))
}

/// Wraps a pool error (no connection could be had).
pub(crate) fn pool(e: deadpool_postgres::PoolError) -> Error {
    Error::Backend(Box::new(e))
}

/// The Postgres error behind a [`Error::Backend`] returned by this crate, if the server
/// reported one: its [`DbError::code`] is the SQLSTATE (for example
/// [`SqlState::T_R_SERIALIZATION_FAILURE`] from a `prune` racing another writer).
pub fn db_error(error: &Error) -> Option<&DbError> {
    match error {
        Error::Backend(source) => source
            .downcast_ref::<tokio_postgres::Error>()
            .and_then(tokio_postgres::Error::as_db_error),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_that_are_not_from_the_server_have_no_db_error() {
        assert!(db_error(&Error::Conflict("x".into())).is_none());
        let io = Error::Backend(Box::new(std::io::Error::other("down")));
        assert!(db_error(&io).is_none());
    }
}
