//! How a model call fails: [`ModelError`], typed by what went wrong, with the HTTP status
//! and the provider's own error type and message when the server sent them.

use std::fmt;
use std::time::Duration;

use crate::pregel::node_error::NodeError;

/// What kind of failure a [`ModelError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// 401: the API key is missing or wrong.
    Authentication,
    /// 403: the key may not use this model or endpoint.
    PermissionDenied,
    /// 404: no such model (or endpoint: check the base URL).
    NotFound,
    /// 429: too many requests; [`ModelError::retry_after`] says when to come back.
    RateLimited,
    /// Another 4xx: the request itself is wrong (bad parameters, context too long...).
    BadRequest,
    /// A 5xx (or Anthropic's 529 `overloaded_error`), or an error event in a stream.
    Server,
    /// The connection failed: refused, reset, or closed before the answer's headers.
    Connection,
    /// The answer's stream ended (or broke) before the message was complete.
    StreamCut,
    /// The server did not answer (connect, or any read) within the request timeout.
    Timeout,
    /// The server answered 2xx with a body that is not the provider's format.
    InvalidResponse,
    /// The client could not be set up (e.g. a base URL that is not a URL).
    Config,
}

impl ModelErrorKind {
    /// The name of the matching exception of the provider's Python SDK (`openai` and
    /// `anthropic` use the same names), used as the stored error's type.
    pub fn python_name(self) -> &'static str {
        match self {
            ModelErrorKind::Authentication => "AuthenticationError",
            ModelErrorKind::PermissionDenied => "PermissionDeniedError",
            ModelErrorKind::NotFound => "NotFoundError",
            ModelErrorKind::RateLimited => "RateLimitError",
            ModelErrorKind::BadRequest => "BadRequestError",
            ModelErrorKind::Server => "InternalServerError",
            ModelErrorKind::Connection | ModelErrorKind::StreamCut => "APIConnectionError",
            ModelErrorKind::Timeout => "APITimeoutError",
            ModelErrorKind::InvalidResponse => "APIResponseValidationError",
            ModelErrorKind::Config => "ValueError",
        }
    }

    /// The kind of an HTTP error status.
    pub fn from_status(status: u16) -> ModelErrorKind {
        match status {
            401 => ModelErrorKind::Authentication,
            403 => ModelErrorKind::PermissionDenied,
            404 => ModelErrorKind::NotFound,
            429 => ModelErrorKind::RateLimited,
            500..=599 => ModelErrorKind::Server,
            _ => ModelErrorKind::BadRequest,
        }
    }
}

/// A failed model call. Its text names the provider, the HTTP status (when there was an
/// answer) and the provider's error type and message, e.g.
/// `openai: HTTP 404 (not_found_error): model 'x' not found`.
#[derive(Clone, Debug)]
pub struct ModelError {
    /// What went wrong.
    pub kind: ModelErrorKind,
    /// `"openai"` or `"anthropic"`.
    pub provider: &'static str,
    /// The HTTP status, when the server answered with an error status.
    pub status: Option<u16>,
    /// The provider's error type (`error.type` of the body, e.g. `invalid_request_error`,
    /// `rate_limit_error`), when it sent one.
    pub error_type: Option<String>,
    /// The provider's message, or ours when the server said nothing.
    pub message: String,
    /// How long the server asked to wait (`Retry-After` / `retry-after-ms`).
    pub retry_after: Option<Duration>,
}

impl ModelError {
    /// An error of `kind` with our own message (no status, no provider type).
    pub(crate) fn new(
        kind: ModelErrorKind,
        provider: &'static str,
        message: impl Into<String>,
    ) -> ModelError {
        ModelError {
            kind,
            provider,
            status: None,
            error_type: None,
            message: message.into(),
            retry_after: None,
        }
    }

    /// Whether another attempt may succeed: rate limits, server errors, connection
    /// failures, cut streams and timeouts.
    pub fn is_transient(&self) -> bool {
        matches!(
            self.kind,
            ModelErrorKind::RateLimited
                | ModelErrorKind::Server
                | ModelErrorKind::Connection
                | ModelErrorKind::StreamCut
                | ModelErrorKind::Timeout
        )
    }

    /// The node failure this error is stored as: `RateLimitError('openai: HTTP 429 ...')`
    /// (the provider SDK's exception name), carrying [`ModelError::retry_after`] so that a
    /// node's [`RetryPolicy`](crate::pregel::retry::RetryPolicy) waits at least that long.
    pub fn into_node_error(self) -> NodeError {
        let retry_after = self.retry_after;
        let e = NodeError::named(self.kind.python_name(), &self);
        match retry_after {
            Some(d) => e.with_retry_after(d),
            None => e,
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.provider)?;
        if let Some(status) = self.status {
            write!(f, "HTTP {status} ")?;
        }
        match &self.error_type {
            Some(t) => write!(f, "({t}): ")?,
            None if self.status.is_none() => write!(f, "{:?}: ", self.kind)?,
            None => f.write_str(": ")?,
        }
        f.write_str(&self.message)?;
        if let Some(d) = self.retry_after {
            write!(f, " (retry after {:.3}s)", d.as_secs_f64())?;
        }
        Ok(())
    }
}

impl std::error::Error for ModelError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_names_status_type_and_message() {
        let e = ModelError {
            kind: ModelErrorKind::NotFound,
            provider: "openai",
            status: Some(404),
            error_type: Some("not_found_error".into()),
            message: "no model x".into(),
            retry_after: None,
        };
        assert_eq!(
            e.to_string(),
            "openai: HTTP 404 (not_found_error): no model x"
        );
        let node = e.into_node_error();
        assert_eq!(
            node.repr(),
            Some("NotFoundError('openai: HTTP 404 (not_found_error): no model x')")
        );
        let t = ModelError::new(ModelErrorKind::Timeout, "anthropic", "no answer in 1s");
        assert_eq!(t.to_string(), "anthropic: Timeout: no answer in 1s");
        assert!(t.is_transient());
    }

    #[test]
    fn retry_after_travels_to_the_node_error() {
        let mut e = ModelError::new(ModelErrorKind::RateLimited, "openai", "slow down");
        e.status = Some(429);
        e.retry_after = Some(Duration::from_secs(2));
        assert_eq!(
            e.into_node_error().retry_after(),
            Some(Duration::from_secs(2))
        );
    }
}
