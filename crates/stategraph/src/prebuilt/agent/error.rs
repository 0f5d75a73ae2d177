//! The error a built-in middleware's constructor gives for options that do not fit.

/// Options a middleware refuses (Python raises `ValueError` in its constructor).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{middleware}: {message}")]
pub struct MiddlewareConfigError {
    /// The middleware (`ModelCallLimitMiddleware`, ...).
    pub middleware: &'static str,
    /// What does not fit (Python's words).
    pub message: String,
}

impl MiddlewareConfigError {
    pub(crate) fn new(middleware: &'static str, message: impl Into<String>) -> Self {
        MiddlewareConfigError {
            middleware,
            message: message.into(),
        }
    }
}
