//! The error inside the store: SQLite's own or the store's, so `?` works on both in the
//! files that run SQL; a batch hands it out as a [`StoreError`] (SQLite's as `Backend`).

use stategraph_store::StoreError;

/// SQLite's error or the store's, until the batch returns.
#[derive(Debug)]
pub(crate) enum Error {
    /// From rusqlite.
    Sql(rusqlite::Error),
    /// From the store (a corrupt row, a failed encoding).
    Store(StoreError),
}

/// The result of the files that run SQL.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Sql(e)
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Error::Store(e)
    }
}

impl From<Error> for StoreError {
    fn from(e: Error) -> Self {
        match e {
            Error::Sql(e) => StoreError::Backend(e.to_string()),
            Error::Store(e) => e,
        }
    }
}
