//! `UntrackedValue`: the last value written, never stored in a checkpoint.

use stategraph_checkpoint::Value;

use super::slot::{check_guard, slot_reads, Slot};
use super::{Channel, ChannelError};

/// Stores the last value received but never checkpoints it: a run restored from a
/// checkpoint starts with it empty, and the engine leaves writes to it out of
/// `put_writes`. Unlike [`EphemeralValue`](super::EphemeralValue), a step without
/// writes keeps the value. A copy ([`Channel::clone_box`]) keeps the value.
#[derive(Clone, Debug, PartialEq)]
pub struct UntrackedValue {
    guard: bool,
    value: Slot,
}

impl UntrackedValue {
    /// An empty channel; with `guard`, a step may write at most one value.
    pub fn new(guard: bool) -> UntrackedValue {
        UntrackedValue {
            guard,
            value: Slot::default(),
        }
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

    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        check_guard("UntrackedValue", self.guard, &values)?;
        Ok(self.value.keep_last(values))
    }

    slot_reads!();

    fn checkpoint(&self) -> Option<Value> {
        None
    }

    fn from_checkpoint(&self, _value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        Ok(Box::new(UntrackedValue::new(self.guard)))
    }
}
