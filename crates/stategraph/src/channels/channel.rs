//! The [`Channel`] trait every channel type implements, the [`Reducer`] a reducer channel
//! applies and the [`ChannelError`] an update fails with. Below every channel type and
//! the reducers (which name `Reducer` and `ChannelError`); imports only the spec.

use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;
use stategraph_checkpoint::version::NameHasher;
use stategraph_checkpoint::Value;

use super::spec::ChannelSpec;

/// Why a channel refused an update. The caller adds the channel key to the message.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ChannelError {
    /// The update is not allowed (e.g. two values for a LastValue in one step).
    #[error("{0}")]
    InvalidUpdate(String),
    /// A reducer failed.
    #[error("reducer failed: {0}")]
    Reducer(String),
    /// A stored value does not have the shape this channel stores.
    #[error("invalid checkpoint value: {0}")]
    InvalidCheckpoint(String),
}

/// A reducer: combines the current value with one written value (`operator.add`,
/// `add_messages`, or any function).
pub type Reducer = Arc<dyn Fn(Value, Value) -> Result<Value, ChannelError> + Send + Sync>;

/// The live channels of a run, in graph order (hashed with [`NameHasher`]: a step looks
/// channels up by name for every write, trigger and read).
pub type Channels = IndexMap<String, Box<dyn Channel>, NameHasher>;

/// One channel: its state, how writes change it, and what it stores.
pub trait Channel: Send + Sync + fmt::Debug {
    /// The type's name as LangGraph spells it (`LastValue`, `Topic`, ...).
    fn kind(&self) -> &'static str;

    /// Applies the writes of one step (possibly none: the "new step" notification).
    /// Returns true when the channel changed (it then gets the step's new version).
    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError>;

    /// The current value, `None` when empty. Barriers return `Some(Value::Nil)` when
    /// complete.
    fn get(&self) -> Option<Value>;

    /// True when the channel has a value that a node may read or be triggered by.
    fn is_available(&self) -> bool;

    /// Called for the trigger channels of the tasks that ran; true when changed.
    fn consume(&mut self) -> bool {
        false
    }

    /// Called when nothing else would run; true when changed.
    fn finish(&mut self) -> bool {
        false
    }

    /// The value to store in a checkpoint, `None` for "nothing" (MISSING).
    fn checkpoint(&self) -> Option<Value>;

    /// A new live channel of the same type and parameters, restored from a stored value
    /// (`None`: the channel had no stored value).
    #[allow(clippy::wrong_self_convention)] // LangGraph's name; `self` is the spec.
    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError>;

    /// A copy of this channel with its current state.
    fn clone_box(&self) -> Box<dyn Channel>;

    /// The channel's type and parameters as data, from which [`ChannelSpec::build`](super::ChannelSpec::build) makes
    /// an empty channel of the same spec; `None` (the default) for a channel that cannot
    /// be described (a channel type of one's own, a reducer that is not built in).
    fn spec(&self) -> Option<ChannelSpec> {
        None
    }

    /// True when the channel merges its writes with `add_messages`: a message written to
    /// it gets its id as it is written (before the write is stored), so the stored write
    /// holds the id the channel keeps, as in Python.
    fn gives_message_ids(&self) -> bool {
        false
    }

    /// For a [`DeltaChannel`](super::DeltaChannel): the number of updates between two stored snapshots.
    /// `None` (the default) for every channel that stores its value at every version.
    fn delta_snapshot_frequency(&self) -> Option<u64> {
        None
    }

    /// The value to store when the engine decides on a snapshot of a [`DeltaChannel`](super::DeltaChannel)
    /// (a `_DeltaSnapshot` ext); `None` when empty. Other channels: their checkpoint.
    fn snapshot(&self) -> Option<Value> {
        self.checkpoint()
    }

    /// A new live channel rebuilt from a stored `seed` (see [`Channel::from_checkpoint`])
    /// and the writes stored after it, oldest first (docs/format.md#deltachannel). Provided: one
    /// update per
    /// write, which is how a reducer channel that stored nothing replays a thread written
    /// while its key was a [`DeltaChannel`](super::DeltaChannel).
    #[allow(clippy::wrong_self_convention)] // `self` is the spec, as in `from_checkpoint`.
    fn from_history(
        &self,
        seed: Option<Value>,
        writes: Vec<Value>,
    ) -> Result<Box<dyn Channel>, ChannelError> {
        let mut ch = self.from_checkpoint(seed)?;
        for w in writes {
            ch.update(vec![w])?;
        }
        Ok(ch)
    }
}

impl Clone for Box<dyn Channel> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}
