//! [`ChannelSpec::build`]: the channel a spec describes, its reducer found by its
//! built-in name. Above every channel type and the reducers, which it names; below none.

use super::spec::ChannelSpec;
use super::{
    AnyValue, BinaryOperatorAggregate, Channel, ChannelError, DeltaChannel, EphemeralValue,
    LastValue, LastValueAfterFinish, NamedBarrierValue, NamedBarrierValueAfterFinish, Topic,
    UntrackedValue,
};

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
    use stategraph_checkpoint::Value;

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
