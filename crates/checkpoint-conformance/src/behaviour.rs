//! What the suite is made of: capabilities, behaviours, and how one behaviour ends.

use std::fmt;

use futures::future::BoxFuture;
use stategraph_checkpoint::{Capabilities, CheckpointSaver, Error};

/// One capability of a saver: a group of behaviours that exercise one operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capability {
    /// `put` (required).
    Put,
    /// `put_writes` (required).
    PutWrites,
    /// `get_tuple` (required).
    GetTuple,
    /// `list` (required).
    List,
    /// `delete_thread` (required).
    DeleteThread,
    /// `delete_for_runs` (optional).
    DeleteForRuns,
    /// `copy_thread` (optional).
    CopyThread,
    /// `prune` (optional).
    Prune,
    /// The one-writer-per-thread fence of `put`, `put_writes` and `put_batch` (optional,
    /// declared by [`Capabilities::fence`]).
    Fence,
}

impl Capability {
    /// Every capability, in the order the suite runs them.
    pub const ALL: [Capability; 9] = [
        Capability::Put,
        Capability::PutWrites,
        Capability::GetTuple,
        Capability::List,
        Capability::DeleteThread,
        Capability::DeleteForRuns,
        Capability::CopyThread,
        Capability::Prune,
        Capability::Fence,
    ];

    /// The operation's name, as in the trait (`"put_writes"`).
    pub fn name(self) -> &'static str {
        match self {
            Capability::Put => "put",
            Capability::PutWrites => "put_writes",
            Capability::GetTuple => "get_tuple",
            Capability::List => "list",
            Capability::DeleteThread => "delete_thread",
            Capability::DeleteForRuns => "delete_for_runs",
            Capability::CopyThread => "copy_thread",
            Capability::Prune => "prune",
            Capability::Fence => "fence",
        }
    }

    /// True for the five operations every saver must implement.
    pub fn is_required(self) -> bool {
        !matches!(
            self,
            Capability::DeleteForRuns
                | Capability::CopyThread
                | Capability::Prune
                | Capability::Fence
        )
    }

    /// True when a saver declaring `capabilities` implements this one (required ones always).
    pub fn declared_by(self, capabilities: Capabilities) -> bool {
        match self {
            Capability::DeleteForRuns => capabilities.delete_for_runs,
            Capability::CopyThread => capabilities.copy_thread,
            Capability::Prune => capabilities.prune,
            Capability::Fence => capabilities.fence,
            _ => true,
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a behaviour failed: a broken expectation or an error the saver returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    message: String,
}

impl Failure {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure::new(format!("the saver returned an error: {error}"))
    }
}

/// How one behaviour ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It ran and held.
    Passed,
    /// It did not run, for the reason given (an optional capability not declared or skipped).
    Skipped(String),
    /// It ran and did not hold.
    Failed(Failure),
}

/// The body of a behaviour: an async check of one saver.
pub type BehaviourFn = for<'a> fn(&'a dyn CheckpointSaver) -> BoxFuture<'a, Result<(), Failure>>;

/// One behaviour of the suite.
#[derive(Clone, Copy, Debug)]
pub struct Behaviour {
    /// The capability it belongs to (it is skipped when that one is optional and undeclared).
    pub capability: Capability,
    /// `module::function`, e.g. `"put::returns_config"`.
    pub name: &'static str,
    /// The check itself.
    pub run: BehaviourFn,
}

/// Builds the behaviour table from the list in [`crate::spec`].
macro_rules! behaviour_table {
    ([] $( $module:ident { $( $name:ident : $cap:ident ),* $(,)? } )*) => {
        vec![$($(
            Behaviour {
                capability: Capability::$cap,
                name: concat!(stringify!($module), "::", stringify!($name)),
                run: |saver| Box::pin(crate::spec::$module::$name(saver)),
            },
        )*)*]
    };
}

/// Every behaviour of the suite, grouped by spec file in capability order.
pub fn behaviours() -> Vec<Behaviour> {
    __with_behaviours!([behaviour_table])
}
