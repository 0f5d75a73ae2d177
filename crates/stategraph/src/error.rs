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
    /// The checkpoint layer failed (saver, serde). A fence's refusal of a run's or
    /// `update_state`'s save is [`Error::Conflict`] instead.
    #[error(transparent)]
    Checkpoint(#[from] checkpoint::Error),
    /// Another writer moved the thread on while this run (or `update_state`) was saving:
    /// the saver's fence refused a save ([`checkpoint::Error::Conflict`]) and the run
    /// stopped there. The refused save stored nothing; `fate` says whether what the run
    /// stored before it is in the thread's history, so that a caller knows whether to give
    /// the input again (README, "Two processes on one thread").
    #[error("conflict: {message}; {fate}")]
    Conflict {
        /// The fence's reason for the refusal.
        message: String,
        /// Whether the run's input is in the thread's history now.
        fate: InputFate,
    },
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
    /// The run's context ([`RunConfig::context`](crate::RunConfig::context)) is not of
    /// the type the graph declares
    /// ([`StateGraph::context_type`](crate::StateGraph::context_type)).
    #[error("the run's context is a `{actual}`, but the graph's context type is `{expected}`")]
    ContextType {
        /// The graph's context type.
        expected: &'static str,
        /// The type of the context the run was given.
        actual: &'static str,
    },
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

/// What became of the input of a run that ended in [`Error::Conflict`], read from the
/// thread's history when the conflict was met: the thread's head then descends from none,
/// or from some, of the checkpoints the run stored, and that does not change afterwards
/// (the fence admits a new checkpoint only as a child of the head, or as a deliberate
/// branch).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputFate {
    /// No checkpoint the run stored is in the thread's history: its input was not applied
    /// (what it stored is on checkpoints nobody descends from, or identical to another
    /// run's writes). Giving the input again applies it once.
    NotApplied,
    /// The thread's history contains `checkpoint_id`, the newest checkpoint the run
    /// stored, past its input: another run continued from there, so the input (and the
    /// run's steps up to that checkpoint) are in the state. Do not give the input again.
    Applied {
        /// The run's newest checkpoint in the thread's history.
        checkpoint_id: String,
    },
    /// The thread's history contains `checkpoint_id`, the run's input checkpoint, but the
    /// run that continued from it gave new input of its own, which (as in LangGraph)
    /// drops the tasks left pending there, this run's start among them: the input is not
    /// in the state. Giving it again applies it once.
    Dropped {
        /// The run's input checkpoint.
        checkpoint_id: String,
    },
    /// The history could not tell: it could not be read, or another writer changed the
    /// run's input checkpoint with `update_state` (its input may still be applied by the
    /// thread's next resume). Read the state before giving the input again.
    Unknown {
        /// Why.
        reason: String,
    },
}

impl InputFate {
    /// `Some(true)` when the input is in the thread's state, `Some(false)` when it is not
    /// (giving it again applies it once), `None` when unknown.
    pub fn applied(&self) -> Option<bool> {
        match self {
            InputFate::Applied { .. } => Some(true),
            InputFate::NotApplied | InputFate::Dropped { .. } => Some(false),
            InputFate::Unknown { .. } => None,
        }
    }
}

impl std::fmt::Display for InputFate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputFate::NotApplied => write!(
                f,
                "nothing this run stored is in the thread's history (its input was not applied)"
            ),
            InputFate::Applied { checkpoint_id } => write!(
                f,
                "another run continued from this run's checkpoint {checkpoint_id} (its input \
                 was applied: do not give it again)"
            ),
            InputFate::Dropped { checkpoint_id } => write!(
                f,
                "another run gave new input on this run's input checkpoint {checkpoint_id}, \
                 dropping this run's start (its input was not applied)"
            ),
            InputFate::Unknown { reason } => {
                write!(f, "whether its input was applied is unknown: {reason}")
            }
        }
    }
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
