//! The one error type of the command.

/// Why a command failed. Every variant prints as one clear sentence; the process exits
/// with a non-zero code. Its `Debug` is its `Display` and then its causes
/// ([`write_report`](stategraph_checkpoint::error::write_report)).
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The saver or the serializer failed (decoding, the database, the connection).
    #[error("{0}")]
    Checkpoint(#[from] stategraph_checkpoint::Error),
    /// A thread or checkpoint that the command names does not exist.
    #[error("{0}")]
    NotFound(String),
    /// A SQLite file is damaged; the message says where and what to do.
    #[error("{0}")]
    Damaged(String),
    /// A checkpoint reference (an id prefix, `step:N`) matches several checkpoints.
    #[error("{0}")]
    Ambiguous(String),
    /// The command was asked something it refuses to do (e.g. overwrite a thread).
    #[error("{0}")]
    Refused(String),
    /// Writing the output failed.
    #[error("output: {0}")]
    Io(#[from] std::io::Error),
    /// The long-term store failed (a missing `store` table, a bad namespace or filter).
    #[error("store: {0}")]
    Store(#[from] stategraph_store::StoreError),
    /// The Agent Server of `serve` failed (connecting, binding the port, serving).
    #[cfg(feature = "serve")]
    #[error("{0}")]
    Server(#[from] stategraph_server::ServerError),
    /// The command is not in this build (a cargo feature left it out).
    #[error("{0}")]
    Unavailable(String),
    /// The database (a Postgres server) answered with an error.
    #[error("database: {0}")]
    Database(String),
}

/// The command's result type.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

impl std::fmt::Debug for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        stategraph_checkpoint::error::write_report(f, self)
    }
}
