//! Channels: the versioned slots of a graph's state, one type per file
//! (docs/runtime.md#channel-types).
//!
//! A channel receives the writes of one super-step at once ([`Channel::update`]) and says
//! whether it changed; a changed channel gets the step's new version. Channels hold
//! [`Value`](stategraph_checkpoint::Value)s, the stored data model, so what a channel checkpoints is exactly what
//! LangGraph stores. A graph keeps one *spec* per channel (an empty instance) and builds the
//! live channels of a run from a checkpoint with [`Channel::from_checkpoint`].

mod any_value;
mod barrier;
mod binop;
mod build;
mod channel;
mod delta;
mod ephemeral;
mod last_value;
mod python;
mod slot;
mod spec;
mod topic;
mod untracked;

pub use any_value::AnyValue;
pub use barrier::{NamedBarrierValue, NamedBarrierValueAfterFinish};
pub(crate) use binop::into_overwrite;
pub use binop::{is_overwrite, BinaryOperatorAggregate};
pub use channel::{Channel, ChannelError, Channels, Reducer};
pub use delta::{batch, max_supersteps_since_snapshot, BatchReducer, DeltaChannel};
pub use ephemeral::EphemeralValue;
pub use last_value::{LastValue, LastValueAfterFinish};
pub use spec::ChannelSpec;
pub use topic::Topic;
pub use untracked::UntrackedValue;
