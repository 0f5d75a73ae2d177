//! The one error type of this crate, and [`write_report`], the readable `Debug` that every
//! error type of stategraph's crates prints.
//!
//! `fn main() -> Result<(), Box<dyn Error>>` prints an error returned with `?` by its
//! `Debug`. A derived `Debug` dumps the driver's internals there (for a Postgres failure a
//! `DbError { severity, file: Some("postinit.c"), line, routine, .. }`); ours reads as the
//! error's `Display` followed by its causes, as anyhow prints a report. Match the variants
//! (or downcast a backend's error) to reach the details.

use std::fmt;

/// Everything that can go wrong in the checkpoint contract: serde, savers, configs.
#[derive(thiserror::Error)]
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
    /// A stored value that Python's own reader refuses (a legacy `json` constructor outside
    /// LangChain's allowlist, a `not_implemented` object, ...): refused here too, with the
    /// path of the offending part inside the value.
    #[error("refused at {path}: {reason}")]
    Refused {
        /// Where in the value: `$`, `$.key`, `$.list[2]`, ...
        path: String,
        /// What was refused and why.
        reason: String,
    },
    /// Strict mode: a stored Python object outside LangGraph's safe types and the allowlist.
    #[error("strict mode: {0}")]
    Unsafe(Box<crate::serde::unsafe_object::UnsafeObject>),
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

impl fmt::Debug for Error {
    /// The `Display` text, then the `Caused by:` chain ([`write_report`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_report(f, self)
    }
}

/// Writes `error` as a report: its `Display`, then, if it has causes (`source()`), a
/// `Caused by:` line for each, as anyhow prints one:
///
/// ```text
/// database error: db error: ERROR: database "x" does not exist
///
/// Caused by:
///     ...
/// ```
///
/// A cause whose text the previous text already ends with (an error that prints its
/// source after a colon) is not repeated. The `Debug` of each error type of stategraph's
/// crates is this report.
pub fn write_report(f: &mut fmt::Formatter<'_>, error: &dyn std::error::Error) -> fmt::Result {
    let mut previous = error.to_string();
    f.write_str(&previous)?;
    let mut heading = true;
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !previous.ends_with(&text) {
            if heading {
                f.write_str("\n\nCaused by:")?;
                heading = false;
            }
            write!(f, "\n    {text}")?;
        }
        previous = text;
        source = cause.source();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a message and an optional cause, printed alone or after a colon.
    #[derive(Debug)]
    struct Layer {
        text: &'static str,
        cause: Option<Box<Layer>>,
        prints_cause: bool,
    }

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.text)?;
            match &self.cause {
                Some(c) if self.prints_cause => write!(f, ": {c}"),
                _ => Ok(()),
            }
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.cause.as_deref().map(|c| c as _)
        }
    }

    struct Report<'a>(&'a dyn std::error::Error);

    impl fmt::Debug for Report<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_report(f, self.0)
        }
    }

    fn layer(text: &'static str, cause: Option<Layer>, prints_cause: bool) -> Layer {
        Layer {
            text,
            cause: cause.map(Box::new),
            prints_cause,
        }
    }

    #[test]
    fn a_report_lists_each_cause_once_under_caused_by() {
        let root = layer("connection refused", None, false);
        let mid = layer("db error", Some(root), true);
        let top = layer("could not connect", Some(mid), false);
        assert_eq!(
            format!("{:?}", Report(&top)),
            "could not connect\n\nCaused by:\n    db error: connection refused"
        );
        assert_eq!(
            format!("{:?}", Error::Timeout("connect".into())),
            "timeout: connect"
        );
        let backend = Error::Backend(Box::new(layer("disk full", None, false)));
        assert_eq!(format!("{backend:?}"), "backend error: disk full");
    }
}
