//! The crate's error type, and how each error answers over HTTP.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// What can go wrong in the server: each variant answers with its HTTP status and
/// `{"detail": "..."}`, the shape LangGraph's server uses. Its `Debug` is its `Display`
/// and then its causes ([`write_report`](stategraph_checkpoint::error::write_report)).
#[derive(thiserror::Error)]
pub enum ServerError {
    /// An unknown assistant, thread, run or checkpoint (404).
    #[error("{0}")]
    NotFound(String),
    /// A body or parameter that does not fit the endpoint (422).
    #[error("{0}")]
    Invalid(String),
    /// The thread is busy and the run's multitask strategy is `reject`, or a thread id
    /// that already exists (409).
    #[error("{0}")]
    Conflict(String),
    /// The graph failed (500).
    #[error("graph error: {0}")]
    Graph(#[from] stategraph::Error),
    /// The database failed (500).
    #[error("database error: {0}")]
    Db(#[from] tokio_postgres::Error),
    /// No database connection could be had (503).
    #[error("database pool error: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    /// The checkpoint saver failed (500).
    #[error("checkpoint error: {0}")]
    Checkpoint(#[from] stategraph_checkpoint::Error),
    /// The store failed, or refused the request (422 for a bad namespace or filter).
    #[error("store: {0}")]
    Store(#[from] stategraph_store::StoreError),
    /// The request needs the code of a graph that this process does not have
    /// (`update_state` as a node with conditional edges, or the state of a graph
    /// registered without a description) (501).
    #[error("{0}")]
    NotHere(String),
    /// A task of the server itself failed (it panicked, or the runtime is stopping) (500).
    #[error("internal: {0}")]
    Internal(String),
    /// Starting the server failed (binding the port, connecting, registering graphs).
    #[error("startup: {0}")]
    Startup(String),
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, ServerError>;

impl std::fmt::Debug for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        stategraph_checkpoint::error::write_report(f, self)
    }
}

impl ServerError {
    /// The HTTP status the error answers with.
    pub fn status(&self) -> StatusCode {
        match self {
            ServerError::NotFound(_) => StatusCode::NOT_FOUND,
            ServerError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ServerError::Conflict(_) => StatusCode::CONFLICT,
            ServerError::Pool(_) => StatusCode::SERVICE_UNAVAILABLE,
            ServerError::NotHere(_) => StatusCode::NOT_IMPLEMENTED,
            ServerError::Store(
                stategraph_store::StoreError::InvalidNamespace { .. }
                | stategraph_store::StoreError::InvalidFilter(_)
                | stategraph_store::StoreError::Ttl(_),
            ) => StatusCode::UNPROCESSABLE_ENTITY,
            ServerError::Graph(stategraph::Error::CheckpointNotFound { .. }) => {
                StatusCode::NOT_FOUND
            }
            ServerError::Graph(
                stategraph::Error::InvalidConfig(_)
                | stategraph::Error::UnknownNode { .. }
                | stategraph::Error::UnknownChannel { .. }
                | stategraph::Error::NothingToResume { .. },
            ) => StatusCode::UNPROCESSABLE_ENTITY,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ServerError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(error = %self, "request failed");
        }
        let body = serde_json::json!({ "detail": self.to_string() });
        (status, axum::Json(body)).into_response()
    }
}
