//! `EphemeralValue`: a value visible only in the step right after it was written.

use stategraph_checkpoint::Value;

use super::slot::{check_guard, slot_reads, Slot};
use super::{Channel, ChannelError};

/// Stores the value written in the previous step and clears it on the next "new step"
/// notification (an update with no values).
///
/// LangGraph uses it for `__start__` (`guard = true`: two values in one step are an
/// error) and for the `branch:to:*` triggers (`guard = false`: the last value wins).
#[derive(Clone, Debug, PartialEq)]
pub struct EphemeralValue {
    guard: bool,
    value: Slot,
}

impl EphemeralValue {
    /// An empty channel; with `guard`, a step may write at most one value.
    pub fn new(guard: bool) -> EphemeralValue {
        EphemeralValue {
            guard,
            value: Slot::default(),
        }
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

    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        check_guard("EphemeralValue", self.guard, &values)?;
        Ok(self.value.keep_last_or_clear(values))
    }

    slot_reads!(checkpoint);

    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        Ok(Box::new(EphemeralValue {
            guard: self.guard,
            value: Slot::new(value),
        }))
    }
}
