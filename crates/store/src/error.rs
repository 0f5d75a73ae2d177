//! The one error type of the store crate.

/// Everything a store operation can fail with.
///
/// Its `Debug` is its `Display` (every variant is text already), so `main` returning it
/// with `?` prints the message, not the fields.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A namespace broke LangGraph's label rules (empty, `.`, NUL, or a reserved root).
    #[error("invalid namespace {namespace:?}: {reason}")]
    InvalidNamespace {
        /// The namespace as given.
        namespace: Vec<String>,
        /// Which rule it broke.
        reason: String,
    },
    /// A filter used an unknown operator or a key that cannot be resolved safely.
    #[error("invalid filter: {0}")]
    InvalidFilter(String),
    /// A put or search needs an embedder the store was not configured with, or the embedder
    /// returned vectors of the wrong count or size.
    #[error("embedding: {0}")]
    Embedding(String),
    /// A TTL was asked of a store configured without TTL support, or a TTL is not a finite,
    /// positive number of minutes.
    #[error("ttl: {0}")]
    Ttl(String),
    /// A stored row could not be decoded (value not a JSON object, bad timestamp, bad vector).
    #[error("corrupt row {namespace:?}/{key}: {reason}")]
    Corrupt {
        /// The namespace of the row, as stored.
        namespace: String,
        /// The key of the row.
        key: String,
        /// What was wrong.
        reason: String,
    },
    /// The backend failed (SQL error, I/O, a worker task that died).
    #[error("store backend: {0}")]
    Backend(String),
}

impl std::fmt::Debug for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// Short alias for results of this crate.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
