//! How SQLite failures become [`stategraph_checkpoint::Error::Backend`].
//!
//! The contract crate owns the one error type; a driver error travels inside its `Backend`
//! variant as the source, so callers can still downcast to [`rusqlite::Error`] (for
//! example to tell `SQLITE_BUSY` apart).

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
