//! The one error type of this crate.

/// Everything that can go wrong in the checkpoint contract: serde, savers, configs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Bytes that do not decode: truncated, malformed, hostile or too deeply nested.
    #[error("decode error: {0}")]
    Decode(String),
    /// A value that cannot be encoded (for example an integer outside the 64-bit range).
    #[error("encode error: {0}")]
    Encode(String),
    /// A serialization type tag this serializer does not know (`loads_typed`).
    #[error("unknown serialization type: {0:?}")]
    UnknownTag(String),
    /// A msgpack extension code outside 0..=7.
    #[error("unknown msgpack extension code {0}")]
    UnknownExtension(i8),
    /// Encryption or decryption failed (wrong key, tampered bytes, bad key length).
    #[error("cipher error: {0}")]
    Cipher(String),
    /// A config that lacks something the operation needs (e.g. `thread_id`).
    #[error("invalid config: {0}")]
    InvalidConfig(String),
    /// A stored value that does not have the shape the reader expects.
    #[error("invalid data: {0}")]
    InvalidData(String),
    /// An extended operation that this saver does not implement.
    #[error("operation not supported by this saver: {0}")]
    Unsupported(&'static str),
    /// Another writer moved the thread on since this writer's parent checkpoint.
    #[error("conflict: {0}")]
    Conflict(String),
    /// A backend that did not answer within the time it was given (a connection that
    /// could not be opened, a pool with no free connection, a statement without reply).
    /// Nothing is known about the outcome of a write that timed out: read before retrying.
    #[error("timeout: {0}")]
    Timeout(String),
    /// A failure inside a backend (database driver, I/O).
    ///
    /// The backend's error is part of this one's `Display` and is therefore not also
    /// returned by `source()` (which would print its text twice in a report of the
    /// chain); match the variant to reach it, e.g. to downcast it.
    #[error("backend error: {0}")]
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
