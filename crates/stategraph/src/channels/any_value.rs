//! `AnyValue`: the last value written, assuming all writes of a step are equal.

use stategraph_checkpoint::Value;

use super::{Channel, ChannelError};

/// Stores the last value received, without checking that a step wrote only one; a step
/// with no write clears it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnyValue {
    value: Option<Value>,
}

impl AnyValue {
    /// An empty channel.
    pub fn new() -> AnyValue {
        AnyValue { value: None }
    }
}

impl Channel for AnyValue {
    fn kind(&self) -> &'static str {
        "AnyValue"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::AnyValue)
    }

    fn update(&mut self, mut values: Vec<Value>) -> Result<bool, ChannelError> {
        match values.pop() {
            // The "new step" notification empties a set channel.
            None => Ok(self.value.take().is_some()),
            Some(last) => {
                self.value = Some(last);
                Ok(true)
            }
        }
    }

    fn get(&self) -> Option<Value> {
        self.value.clone()
    }

    fn is_available(&self) -> bool {
        self.value.is_some()
    }

    fn checkpoint(&self) -> Option<Value> {
        self.value.clone()
    }

    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        Ok(Box::new(AnyValue { value }))
    }

    fn clone_box(&self) -> Box<dyn Channel> {
        Box::new(self.clone())
    }
}
