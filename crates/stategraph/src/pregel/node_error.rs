//! How a node fails: [`NodeError`] (a failure, an interrupt, or a command for the parent
//! graph), as the runtime records it.

use std::fmt;

use crate::types::{Command, Interrupt};

/// Why a node did not produce an output.
pub struct NodeError {
    pub(crate) kind: NodeErrorKind,
    /// The shortest wait before another attempt, when the failure says so (a model
    /// server's `Retry-After`).
    retry_after: Option<std::time::Duration>,
}

pub(crate) enum NodeErrorKind {
    /// The node called `interrupt` and no answer is available yet.
    Interrupt(Vec<Interrupt>),
    /// The node failed.
    Failed {
        /// `repr`-like text, stored in the `__error__` write.
        repr: String,
    },
    /// The node sent a command to the parent graph.
    ParentCommand(Box<Command>),
}

impl NodeError {
    /// A failure with a message; stored as `NodeError('message')`.
    pub fn msg(message: impl fmt::Display) -> NodeError {
        NodeError::named("NodeError", message)
    }

    /// A failure with an error type name and a message; stored as `Name('message')`,
    /// the way LangGraph stores `repr(exception)`.
    pub fn named(type_name: &str, message: impl fmt::Display) -> NodeError {
        NodeError {
            retry_after: None,
            kind: NodeErrorKind::Failed {
                repr: python_repr_call(type_name, &message.to_string()),
            },
        }
    }

    /// A failure whose stored text is given as is.
    pub(crate) fn repr_only(repr: String) -> NodeError {
        NodeError {
            retry_after: None,
            kind: NodeErrorKind::Failed { repr },
        }
    }

    /// A pause with these interrupts (what [`NodeContext::interrupt`] returns).
    pub(crate) fn interrupt(interrupts: Vec<Interrupt>) -> NodeError {
        NodeError {
            retry_after: None,
            kind: NodeErrorKind::Interrupt(interrupts),
        }
    }

    /// A command for the parent graph.
    pub fn parent_command(command: Command) -> NodeError {
        NodeError {
            retry_after: None,
            kind: NodeErrorKind::ParentCommand(Box::new(command)),
        }
    }

    /// This failure with the shortest wait before another attempt (builder style): a
    /// node's [`RetryPolicy`](super::retry::RetryPolicy) waits at least `wait` before it
    /// runs the node again (its own backoff if that is longer). Set by a model client
    /// from the server's `Retry-After`; not stored with the error.
    pub fn with_retry_after(mut self, wait: std::time::Duration) -> NodeError {
        self.retry_after = Some(wait);
        self
    }

    /// The shortest wait before another attempt, if the failure gave one
    /// ([`NodeError::with_retry_after`]).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        self.retry_after
    }

    /// The stored text of a failure, `None` for interrupts and parent commands.
    pub fn repr(&self) -> Option<&str> {
        match &self.kind {
            NodeErrorKind::Failed { repr } => Some(repr),
            _ => None,
        }
    }
}

fn python_repr_call(type_name: &str, message: &str) -> String {
    let quote = if message.contains('\'') && !message.contains('"') {
        '"'
    } else {
        '\''
    };
    let escaped = if quote == '\'' {
        message.replace('\\', "\\\\").replace('\'', "\\'")
    } else {
        message.replace('\\', "\\\\")
    };
    format!("{type_name}({quote}{escaped}{quote})")
}

impl fmt::Debug for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            NodeErrorKind::Interrupt(i) => write!(f, "Interrupt({i:?})"),
            NodeErrorKind::Failed { repr } => f.write_str(repr),
            NodeErrorKind::ParentCommand(c) => write!(f, "ParentCommand({c:?})"),
        }
    }
}

impl fmt::Display for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for NodeError {
    fn from(e: E) -> NodeError {
        let full = std::any::type_name::<E>();
        let short = full.rsplit("::").next().unwrap_or(full);
        let short = short.split('<').next().unwrap_or(short);
        NodeError {
            retry_after: None,
            kind: NodeErrorKind::Failed {
                repr: python_repr_call(short, &e.to_string()),
            },
        }
    }
}
