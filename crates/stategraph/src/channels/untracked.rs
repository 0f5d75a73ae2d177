//! `UntrackedValue`: the last value written, never stored in a checkpoint.

use stategraph_checkpoint::Value;

use super::{Channel, ChannelError};

/// Stores the last value received but never checkpoints it: a run restored from a
/// checkpoint starts with it empty, and the engine leaves writes to it out of
/// `put_writes`. Unlike [`EphemeralValue`](super::EphemeralValue), a step without
/// writes keeps the value. A copy ([`Channel::clone_box`]) keeps the value.
#[derive(Clone, Debug, PartialEq)]
pub struct UntrackedValue {
    guard: bool,
    value: Option<Value>,
}

impl UntrackedValue {
    /// An empty channel; with `guard`, a step may write at most one value.
    pub fn new(guard: bool) -> UntrackedValue {
        UntrackedValue { guard, value: None }
    }

    /// Whether a step may write at most one value.
    pub fn guard(&self) -> bool {
        self.guard
    }
}

impl Channel for UntrackedValue {
    fn kind(&self) -> &'static str {
        "UntrackedValue"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::UntrackedValue { guard: self.guard })
    }

    fn update(&mut self, mut values: Vec<Value>) -> Result<bool, ChannelError> {
        if values.len() > 1 && self.guard {
            return Err(ChannelError::InvalidUpdate(
                "UntrackedValue(guard=True) can receive only one value per step. Use guard=False if you want to store any one of multiple values.".to_owned(),
            ));
        }
        match values.pop() {
            None => Ok(false),
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
        None
    }

    fn from_checkpoint(&self, _value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        Ok(Box::new(UntrackedValue::new(self.guard)))
    }

    fn clone_box(&self) -> Box<dyn Channel> {
        Box::new(self.clone())
    }
}
