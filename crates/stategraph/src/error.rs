//! The one error type of the engine.

use stategraph_checkpoint as checkpoint;

/// Everything that can go wrong building or running a graph.
///
/// Its `Debug` is its `Display` and then its causes
/// ([`write_report`](stategraph_checkpoint::error::write_report)), so `main` returning
/// it with `?` prints a readable report, not the fields.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The graph is malformed (unknown node, no entry point, reserved name, ...).
    #[error("invalid graph: {0}")]
    InvalidGraph(String),
    /// A write that a channel refused (`InvalidUpdateError` in LangGraph).
    #[error("{0}")]
    InvalidUpdate(String),
    /// The run hit the recursion limit (`GraphRecursionError`).
    #[error("Recursion limit of {0} reached without hitting a stop condition. You can increase the limit by setting the `recursion_limit` config key.")]
    RecursionLimit(usize),
    /// No input was given where the graph needs some (`EmptyInputError`).
    #[error("empty input: {0}")]
    EmptyInput(String),
    /// A node failed: its name and the error it returned (or its panic message).
    #[error("node {node:?} failed: {message}")]
    Node {
        /// The node.
        node: String,
        /// `repr`-like text of the error, as stored in the `__error__` write.
        message: String,
    },
    /// Converting between a Rust state type and stored values failed.
    #[error("state conversion: {0}")]
    State(String),
    /// The checkpoint layer failed (saver, serde).
    #[error(transparent)]
    Checkpoint(#[from] checkpoint::Error),
    /// A subgraph's node sent a command to its parent graph; the parent's task handles it.
    #[error("a command for the parent graph escaped to the root")]
    ParentCommand(Box<crate::types::Command>),
    /// An operation that needs a checkpointer was used without one.
    #[error("this operation needs a checkpointer")]
    NoCheckpointer,
    /// The run config cannot be used: a checkpointer without a thread id, a recursion
    /// limit below 1, mismatched `batch` lengths.
    #[error("invalid config: {0}")]
    InvalidConfig(String),
    /// Resuming a thread that has nothing to resume: `Command::resume` with no pending
    /// interrupt, or [`NoInput`](crate::NoInput) on a thread whose run finished.
    #[error("nothing to resume on thread {thread_id:?}: {reason}")]
    NothingToResume {
        /// The thread.
        thread_id: String,
        /// Why: no checkpoint, no pending interrupt, or nothing left to run.
        reason: String,
    },
    /// The config names a checkpoint the thread does not have.
    #[error("checkpoint {checkpoint_id:?} not found on thread {thread_id:?}")]
    CheckpointNotFound {
        /// The thread.
        thread_id: String,
        /// The checkpoint id asked for.
        checkpoint_id: String,
    },
    /// A write addressed a node the graph does not have: a `Command::goto`, a conditional
    /// edge's result, a `Send` (LangGraph logs a warning and drops the write, as
    /// [`CompileOptions::lenient_writes`](crate::CompileOptions::lenient_writes) does), or
    /// `update_state`'s `as_node` (an error in LangGraph too).
    #[error("unknown node {node:?} (addressed by {by})")]
    UnknownNode {
        /// The node name that was written to.
        node: String,
        /// Who wrote it: a node's name, `input` or `update_state`.
        by: String,
    },
    /// A write addressed a state key (channel) the graph does not have: a `Command`
    /// update given as input, or `update_state` values. (LangGraph warns or drops it;
    /// see [`CompileOptions::lenient_writes`](crate::CompileOptions::lenient_writes).)
    #[error("unknown channel {channel:?} (written by {by})")]
    UnknownChannel {
        /// The channel name that was written to.
        channel: String,
        /// Who wrote it: a node's name, `input` or `update_state`.
        by: String,
    },
    /// [`Outcome::done`](crate::Outcome::done) on a run that paused instead of finishing.
    #[error("{}", interrupted_text(interrupts, next))]
    Interrupted {
        /// The interrupts raised by nodes, waiting for an answer.
        interrupts: Vec<crate::types::Interrupt>,
        /// The nodes that run when the thread is resumed.
        next: Vec<String>,
    },
}

/// The result type of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        checkpoint::error::write_report(f, self)
    }
}

fn interrupted_text(interrupts: &[crate::types::Interrupt], next: &[String]) -> String {
    let mut text = if interrupts.is_empty() {
        "the run paused".to_owned()
    } else {
        format!("the run paused on {} interrupt(s)", interrupts.len())
    };
    if !next.is_empty() {
        text.push_str(&format!(" before {}", next.join(", ")));
    }
    text.push_str("; resume the thread to continue");
    text
}
