//! [`Slot`]: the one value a single-value channel holds (`LastValue`,
//! `LastValueAfterFinish`, `EphemeralValue`, `UntrackedValue`, `AnyValue`), how a step's
//! writes replace it, and [`slot_reads!`], the `Channel` methods that only read it. Below
//! those channel files; imports only the `Channel` trait's file.

use std::fmt;

use stategraph_checkpoint::Value;

use super::channel::ChannelError;

/// The value of a single-value channel, `None` when empty. Its `Debug` is the inner
/// `Option`'s, so a channel's `Debug` reads as before it held a `Slot`.
#[derive(Clone, Default, PartialEq)]
pub(super) struct Slot(Option<Value>);

impl Slot {
    /// A slot holding `value` (a stored value, or `None`: empty).
    pub(super) fn new(value: Option<Value>) -> Slot {
        Slot(value)
    }

    /// A copy of the value, `None` when empty.
    pub(super) fn get(&self) -> Option<Value> {
        self.0.clone()
    }

    /// True when the slot holds a value.
    pub(super) fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// Empties the slot; true when it held a value.
    pub(super) fn clear(&mut self) -> bool {
        self.0.take().is_some()
    }

    /// Keeps the last of a step's `values`; true when there was one. A step without
    /// writes leaves the slot as it is.
    pub(super) fn keep_last(&mut self, mut values: Vec<Value>) -> bool {
        match values.pop() {
            None => false,
            last => {
                self.0 = last;
                true
            }
        }
    }

    /// Keeps the last of a step's `values`; a step without writes (the "new step"
    /// notification) empties the slot. True when the slot changed (a write, or a value
    /// cleared).
    pub(super) fn keep_last_or_clear(&mut self, values: Vec<Value>) -> bool {
        if values.is_empty() {
            self.clear()
        } else {
            self.keep_last(values)
        }
    }
}

impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The error of a guarded channel (`guard=True`) given more than one value in a step,
/// as LangGraph words it for `kind` (`EphemeralValue`, `UntrackedValue`); `Ok` otherwise.
pub(super) fn check_guard(kind: &str, guard: bool, values: &[Value]) -> Result<(), ChannelError> {
    if guard && values.len() > 1 {
        return Err(ChannelError::InvalidUpdate(format!(
            "{kind}(guard=True) can receive only one value per step. Use guard=False if you want to store any one of multiple values."
        )));
    }
    Ok(())
}

/// The `Channel` methods of a single-value channel whose `value` field is a [`Slot`] read
/// as is: `get`, `is_available` and `clone_box` (the type is `Clone`); with `checkpoint`,
/// also `checkpoint`, storing the value itself. Used inside `impl Channel for …`, where
/// `Value` and `Channel` are in scope.
macro_rules! slot_reads {
    () => {
        fn get(&self) -> Option<Value> {
            self.value.get()
        }

        fn is_available(&self) -> bool {
            self.value.is_set()
        }

        fn clone_box(&self) -> Box<dyn Channel> {
            Box::new(self.clone())
        }
    };
    (checkpoint) => {
        $crate::channels::slot::slot_reads!();

        fn checkpoint(&self) -> Option<Value> {
            self.value.get()
        }
    };
}
pub(super) use slot_reads;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_last_keeps_the_last_write_and_ignores_an_empty_step() {
        let mut slot = Slot::default();
        assert!(!slot.keep_last(vec![]));
        assert!(slot.keep_last(vec![Value::Int(1), Value::Int(2)]));
        assert_eq!(slot.get(), Some(Value::Int(2)));
        assert!(!slot.keep_last(vec![]));
        assert_eq!(slot.get(), Some(Value::Int(2)));
    }

    #[test]
    fn keep_last_or_clear_empties_on_a_step_without_writes() {
        let mut slot = Slot::new(Some(Value::Int(1)));
        assert!(slot.keep_last_or_clear(vec![]));
        assert!(!slot.is_set());
        assert!(!slot.keep_last_or_clear(vec![]));
        assert!(slot.keep_last_or_clear(vec![Value::Int(3)]));
        assert_eq!(slot.get(), Some(Value::Int(3)));
    }

    #[test]
    fn a_slot_debugs_as_its_option() {
        assert_eq!(format!("{:?}", Slot::new(None)), "None");
    }

    #[test]
    fn a_guard_refuses_two_values_only_when_set() {
        let two = [Value::Int(1), Value::Int(2)];
        assert!(check_guard("EphemeralValue", false, &two).is_ok());
        assert!(check_guard("EphemeralValue", true, &two[..1]).is_ok());
        let err = check_guard("UntrackedValue", true, &two).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("UntrackedValue(guard=True) can receive"),
            "{err}"
        );
    }
}
