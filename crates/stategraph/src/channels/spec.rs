//! A channel's description: its type and parameters as data, so that a process without a
//! graph's code (an API process of the Agent Server) can rebuild the graph's channels
//! from what a process with the code recorded.

//!
//! The description alone, below the [`Channel`](super::Channel) trait that returns it;
//! `build.rs` makes a channel of one.

use serde::{Deserialize, Serialize};
use stategraph_checkpoint::Value;

/// An empty channel of a graph, as data ([`Channel::spec`](super::Channel::spec)); [`ChannelSpec::build`] makes
/// the channel again. A reducer is recorded by its built-in name
/// ([`crate::reducers::name_of`]); a channel with a reducer of one's own has no spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
#[non_exhaustive]
pub enum ChannelSpec {
    /// [`LastValue`](super::LastValue).
    LastValue,
    /// [`LastValueAfterFinish`](super::LastValueAfterFinish).
    LastValueAfterFinish,
    /// [`AnyValue`](super::AnyValue).
    AnyValue,
    /// [`EphemeralValue`](super::EphemeralValue).
    EphemeralValue {
        /// At most one value per step.
        guard: bool,
    },
    /// [`UntrackedValue`](super::UntrackedValue).
    UntrackedValue {
        /// At most one value per step.
        guard: bool,
    },
    /// [`Topic`](super::Topic).
    Topic {
        /// Values are kept across steps.
        accumulate: bool,
    },
    /// [`NamedBarrierValue`](super::NamedBarrierValue).
    NamedBarrierValue {
        /// The names it waits for.
        names: Vec<String>,
    },
    /// [`NamedBarrierValueAfterFinish`](super::NamedBarrierValueAfterFinish).
    NamedBarrierValueAfterFinish {
        /// The names it waits for.
        names: Vec<String>,
    },
    /// [`BinaryOperatorAggregate`](super::BinaryOperatorAggregate).
    BinaryOperatorAggregate {
        /// The reducer's built-in name.
        reducer: String,
        /// The value a new channel starts with.
        initial: Option<Value>,
    },
    /// [`DeltaChannel`](super::DeltaChannel) built with
    /// [`DeltaChannel::from_pairwise`](super::DeltaChannel::from_pairwise).
    DeltaChannel {
        /// The pairwise reducer's built-in name.
        reducer: String,
        /// Updates between two stored snapshots.
        snapshot_frequency: u64,
        /// The value a new channel starts with.
        initial: Value,
    },
}
