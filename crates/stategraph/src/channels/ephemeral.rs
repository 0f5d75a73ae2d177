//! `EphemeralValue`: a value visible only in the step right after it was written.

use stategraph_checkpoint::Value;

use super::{Channel, ChannelError};

/// Stores the value written in the previous step and clears it on the next "new step"
/// notification (an update with no values).
///
/// LangGraph uses it for `__start__` (`guard = true`: two values in one step are an
/// error) and for the `branch:to:*` triggers (`guard = false`: the last value wins).
#[derive(Clone, Debug, PartialEq)]
pub struct EphemeralValue {
    guard: bool,
    value: Option<Value>,
}

impl EphemeralValue {
    /// An empty channel; with `guard`, a step may write at most one value.
    pub fn new(guard: bool) -> EphemeralValue {
        EphemeralValue { guard, value: None }
    }

    /// Whether a step may write at most one value.
    pub fn guard(&self) -> bool {
        self.guard
    }
}

impl Channel for EphemeralValue {
    fn kind(&self) -> &'static str {
        "EphemeralValue"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::EphemeralValue { guard: self.guard })
    }

    fn update(&mut self, mut values: Vec<Value>) -> Result<bool, ChannelError> {
        if values.len() > 1 && self.guard {
            return Err(ChannelError::InvalidUpdate(
                "EphemeralValue(guard=True) can receive only one value per step. Use guard=False if you want to store any one of multiple values.".to_owned(),
            ));
        }
        match values.pop() {
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
        Ok(Box::new(EphemeralValue {
            guard: self.guard,
            value,
        }))
    }

    fn clone_box(&self) -> Box<dyn Channel> {
        Box::new(self.clone())
    }
}
