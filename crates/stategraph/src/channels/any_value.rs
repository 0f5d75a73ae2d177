//! `AnyValue`: the last value written, assuming all writes of a step are equal.

use stategraph_checkpoint::Value;

use super::slot::{slot_reads, Slot};
use super::{Channel, ChannelError};

/// Stores the last value received, without checking that a step wrote only one; a step
/// with no write clears it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnyValue {
    value: Slot,
}

impl AnyValue {
    /// An empty channel.
    pub fn new() -> AnyValue {
        AnyValue::default()
    }
}

impl Channel for AnyValue {
    fn kind(&self) -> &'static str {
        "AnyValue"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::AnyValue)
    }

    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        // The "new step" notification empties a set channel.
        Ok(self.value.keep_last_or_clear(values))
    }

    slot_reads!(checkpoint);

    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        Ok(Box::new(AnyValue {
            value: Slot::new(value),
        }))
    }
}
