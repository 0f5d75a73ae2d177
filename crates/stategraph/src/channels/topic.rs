//! `Topic`: a pub/sub list of values, emptied every step or accumulated.

use stategraph_checkpoint::Value;

use super::python::python_set_items;
use super::{Channel, ChannelError};

/// A list of the values written, flattened one level (a written list contributes its
/// items).
///
/// Without `accumulate` the list holds only the previous step's writes: every update
/// first empties it (`__pregel_tasks`, the `Send` queue, is such a topic). With
/// `accumulate` values pile up across steps. The checkpoint is the list itself, stored
/// even when empty (`[]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Topic {
    accumulate: bool,
    values: Vec<Value>,
}

impl Topic {
    /// An empty topic; with `accumulate`, values are kept across steps.
    pub fn new(accumulate: bool) -> Topic {
        Topic {
            accumulate,
            values: Vec::new(),
        }
    }

    /// Whether values are kept across steps.
    pub fn accumulate(&self) -> bool {
        self.accumulate
    }
}

impl Channel for Topic {
    fn kind(&self) -> &'static str {
        "Topic"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::Topic {
            accumulate: self.accumulate,
        })
    }

    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        let mut changed = false;
        if !self.accumulate {
            changed = !self.values.is_empty();
            self.values.clear();
        }
        for value in values {
            match value {
                Value::List(items) => {
                    changed |= !items.is_empty();
                    self.values.extend(items);
                }
                other => {
                    changed = true;
                    self.values.push(other);
                }
            }
        }
        Ok(changed)
    }

    fn get(&self) -> Option<Value> {
        if self.values.is_empty() {
            None
        } else {
            Some(Value::List(self.values.clone().into()))
        }
    }

    fn is_available(&self) -> bool {
        !self.values.is_empty()
    }

    fn checkpoint(&self) -> Option<Value> {
        Some(Value::List(self.values.clone().into()))
    }

    /// Accepts the stored list, or the legacy pair `(seen, values)` that topics wrote
    /// when they had a `unique` option. Msgpack stores a tuple as a list, so the legacy
    /// pair is recognised by its shape: exactly two elements, a Python set (or
    /// frozenset) followed by a list.
    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        let values = match value {
            None => Vec::new(),
            Some(Value::List(mut items)) => (if is_legacy_pair(&items) {
                match items.pop() {
                    Some(Value::List(values)) => values,
                    _ => Vec::new().into(),
                }
            } else {
                items
            })
            .to_vec(),
            Some(other) => {
                return Err(ChannelError::InvalidCheckpoint(format!(
                    "Topic: expected a list, got {other:?}"
                )))
            }
        };
        Ok(Box::new(Topic {
            accumulate: self.accumulate,
            values,
        }))
    }

    fn clone_box(&self) -> Box<dyn Channel> {
        Box::new(self.clone())
    }
}

/// True for `[set, list]`: the `(seen, values)` tuple of old topics.
fn is_legacy_pair(items: &[Value]) -> bool {
    matches!(items, [seen, Value::List(_)] if python_set_items(seen).is_some())
}
