//! A channel's description: its type and parameters as data, so that a process without a
//! graph's code (an API process of the Agent Server) can rebuild the graph's channels
//! from what a process with the code recorded.

use serde::{Deserialize, Serialize};
use stategraph_checkpoint::Value;

use super::{
    AnyValue, BinaryOperatorAggregate, Channel, ChannelError, DeltaChannel, EphemeralValue,
    LastValue, LastValueAfterFinish, NamedBarrierValue, NamedBarrierValueAfterFinish, Topic,
    UntrackedValue,
};

/// An empty channel of a graph, as data ([`Channel::spec`]); [`ChannelSpec::build`] makes
/// the channel again. A reducer is recorded by its built-in name
/// ([`crate::reducers::name_of`]); a channel with a reducer of one's own has no spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind")]
#[non_exhaustive]
pub enum ChannelSpec {
    /// [`LastValue`].
    LastValue,
    /// [`LastValueAfterFinish`].
    LastValueAfterFinish,
    /// [`AnyValue`].
    AnyValue,
    /// [`EphemeralValue`].
    EphemeralValue {
        /// At most one value per step.
        guard: bool,
    },
    /// [`UntrackedValue`].
    UntrackedValue {
        /// At most one value per step.
        guard: bool,
    },
    /// [`Topic`].
    Topic {
        /// Values are kept across steps.
        accumulate: bool,
    },
    /// [`NamedBarrierValue`].
    NamedBarrierValue {
        /// The names it waits for.
        names: Vec<String>,
    },
    /// [`NamedBarrierValueAfterFinish`].
    NamedBarrierValueAfterFinish {
        /// The names it waits for.
        names: Vec<String>,
    },
    /// [`BinaryOperatorAggregate`].
    BinaryOperatorAggregate {
        /// The reducer's built-in name.
        reducer: String,
        /// The value a new channel starts with.
        initial: Option<Value>,
    },
    /// [`DeltaChannel`] built with [`DeltaChannel::from_pairwise`].
    DeltaChannel {
        /// The pairwise reducer's built-in name.
        reducer: String,
        /// Updates between two stored snapshots.
        snapshot_frequency: u64,
        /// The value a new channel starts with.
        initial: Value,
    },
}

impl ChannelSpec {
    /// The empty channel this spec describes; an unknown reducer name is
    /// [`ChannelError::InvalidUpdate`] naming it.
    pub fn build(&self) -> Result<Box<dyn Channel>, ChannelError> {
        let reducer = |name: &str| {
            crate::reducers::by_name(name).ok_or_else(|| {
                ChannelError::InvalidUpdate(format!("unknown built-in reducer {name:?}"))
            })
        };
        Ok(match self {
            ChannelSpec::LastValue => Box::new(LastValue::new()),
            ChannelSpec::LastValueAfterFinish => Box::new(LastValueAfterFinish::new()),
            ChannelSpec::AnyValue => Box::new(AnyValue::new()),
            ChannelSpec::EphemeralValue { guard } => Box::new(EphemeralValue::new(*guard)),
            ChannelSpec::UntrackedValue { guard } => Box::new(UntrackedValue::new(*guard)),
            ChannelSpec::Topic { accumulate } => Box::new(Topic::new(*accumulate)),
            ChannelSpec::NamedBarrierValue { names } => {
                Box::new(NamedBarrierValue::new(names.clone()))
            }
            ChannelSpec::NamedBarrierValueAfterFinish { names } => {
                Box::new(NamedBarrierValueAfterFinish::new(names.clone()))
            }
            ChannelSpec::BinaryOperatorAggregate {
                reducer: r,
                initial,
            } => Box::new(BinaryOperatorAggregate::new(reducer(r)?, initial.clone())),
            ChannelSpec::DeltaChannel {
                reducer: r,
                snapshot_frequency,
                initial,
            } => Box::new(
                DeltaChannel::from_pairwise(reducer(r)?, *snapshot_frequency)
                    .with_initial(initial.clone()),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_builds_a_channel_with_the_same_spec() {
        let specs = [
            ChannelSpec::LastValue,
            ChannelSpec::LastValueAfterFinish,
            ChannelSpec::AnyValue,
            ChannelSpec::EphemeralValue { guard: true },
            ChannelSpec::UntrackedValue { guard: false },
            ChannelSpec::Topic { accumulate: true },
            ChannelSpec::NamedBarrierValue {
                names: vec!["a".into(), "b".into()],
            },
            ChannelSpec::NamedBarrierValueAfterFinish {
                names: vec!["a".into()],
            },
            ChannelSpec::BinaryOperatorAggregate {
                reducer: "add".into(),
                initial: Some(Value::list(Vec::new())),
            },
            ChannelSpec::DeltaChannel {
                reducer: "add_messages".into(),
                snapshot_frequency: 7,
                initial: Value::list(Vec::new()),
            },
        ];
        for spec in specs {
            let built = spec.build().expect("a built-in spec builds");
            assert_eq!(built.spec(), Some(spec));
        }
    }

    #[test]
    fn a_reducer_of_ones_own_has_no_spec_and_an_unknown_name_is_an_error() {
        let own = BinaryOperatorAggregate::new(std::sync::Arc::new(|a, _| Ok(a)), None);
        assert_eq!(own.spec(), None);
        let unknown = ChannelSpec::BinaryOperatorAggregate {
            reducer: "mine".into(),
            initial: None,
        };
        assert!(unknown.build().is_err());
    }
}
