//! `NamedBarrierValue` and `NamedBarrierValueAfterFinish`: wait until every named source
//! has written.

use stategraph_checkpoint::Value;

use super::python::{python_name_set, python_set, python_set_items, python_str, unpack_pair};
use super::{Channel, ChannelError};

/// The set of names seen so far, checked against the expected names.
///
/// `seen` keeps the order in which names arrived and is stored as a Python `set` in that
/// order. Python stores a set in its iteration order, which depends on the interpreter's
/// hash seed (docs/runtime.md#python-sets), so the order of a stored set is not meaningful and
/// readers
/// must not rely on it.
#[derive(Clone, Debug, PartialEq)]
struct Barrier {
    names: Vec<String>,
    seen: Vec<Value>,
}

impl Barrier {
    fn new(names: Vec<String>) -> Barrier {
        let mut unique: Vec<String> = Vec::with_capacity(names.len());
        for name in names {
            if !unique.contains(&name) {
                unique.push(name);
            }
        }
        Barrier {
            names: unique,
            seen: Vec::new(),
        }
    }

    /// Adds the written names; every value must be one of `names`. Changed when a name
    /// was new. A bad value fails the whole update and leaves `seen` as it was.
    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        if let Some(bad) = values.iter().find(|v| !self.is_name(v)) {
            return Err(ChannelError::InvalidUpdate(format!(
                "Value {} not in {}",
                python_str(bad),
                python_name_set(&self.names)
            )));
        }
        let mut changed = false;
        for value in values {
            if !self.seen.contains(&value) {
                self.seen.push(value);
                changed = true;
            }
        }
        Ok(changed)
    }

    fn is_name(&self, value: &Value) -> bool {
        value
            .as_str()
            .is_some_and(|s| self.names.iter().any(|n| n == s))
    }

    /// True when `seen` equals `names` as sets.
    fn complete(&self) -> bool {
        self.seen.len() == self.names.len() && self.seen.iter().all(|v| self.is_name(v))
    }

    /// Restores `seen` from a stored set, frozenset or plain list (duplicates dropped).
    fn restore(&self, stored: Value, kind: &str) -> Result<Barrier, ChannelError> {
        let items = match stored {
            Value::List(items) => items,
            other => (python_set_items(&other)
                .map(<[Value]>::to_vec)
                .ok_or_else(|| {
                    ChannelError::InvalidCheckpoint(format!(
                        "{kind}: expected a set or a list, got {other:?}"
                    ))
                })?)
            .into(),
        };
        let mut seen: Vec<Value> = Vec::with_capacity(items.len());
        for item in items {
            if !seen.contains(&item) {
                seen.push(item);
            }
        }
        Ok(Barrier {
            names: self.names.clone(),
            seen,
        })
    }

    fn seen_set(&self) -> Value {
        python_set(self.seen.clone())
    }
}

/// Available once every name in `names` has written: the join of `add_edge([a, b], c)`.
///
/// Values must be names (strings) from `names`; anything else fails the update.
/// `consume` (the waiting node ran) resets it. `get` gives `Nil` when complete.
/// Checkpoints `seen` as a Python `set`, even when empty.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedBarrierValue {
    barrier: Barrier,
}

impl NamedBarrierValue {
    /// A barrier waiting for `names` (duplicates are ignored).
    pub fn new(names: Vec<String>) -> NamedBarrierValue {
        NamedBarrierValue {
            barrier: Barrier::new(names),
        }
    }

    /// The names the barrier waits for.
    pub fn names(&self) -> &[String] {
        &self.barrier.names
    }

    /// The names seen so far, in the order they arrived.
    pub fn seen(&self) -> &[Value] {
        &self.barrier.seen
    }
}

impl Channel for NamedBarrierValue {
    fn kind(&self) -> &'static str {
        "NamedBarrierValue"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::NamedBarrierValue {
            names: self.barrier.names.clone(),
        })
    }

    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        self.barrier.update(values)
    }

    fn get(&self) -> Option<Value> {
        self.barrier.complete().then_some(Value::Nil)
    }

    fn is_available(&self) -> bool {
        self.barrier.complete()
    }

    fn consume(&mut self) -> bool {
        if !self.barrier.complete() {
            return false;
        }
        self.barrier.seen.clear();
        true
    }

    fn checkpoint(&self) -> Option<Value> {
        Some(self.barrier.seen_set())
    }

    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        let barrier = match value {
            None => Barrier::new(self.barrier.names.clone()),
            Some(stored) => self.barrier.restore(stored, "NamedBarrierValue")?,
        };
        Ok(Box::new(NamedBarrierValue { barrier }))
    }

    fn clone_box(&self) -> Box<dyn Channel> {
        Box::new(self.clone())
    }
}

/// A [`NamedBarrierValue`] that becomes available only after `finish`: the join of a
/// deferred node. Checkpoints as the pair `[seen_set, finished]`.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedBarrierValueAfterFinish {
    barrier: Barrier,
    finished: bool,
}

impl NamedBarrierValueAfterFinish {
    /// A barrier waiting for `names` (duplicates are ignored).
    pub fn new(names: Vec<String>) -> NamedBarrierValueAfterFinish {
        NamedBarrierValueAfterFinish {
            barrier: Barrier::new(names),
            finished: false,
        }
    }

    /// The names the barrier waits for.
    pub fn names(&self) -> &[String] {
        &self.barrier.names
    }

    /// The names seen so far, in the order they arrived.
    pub fn seen(&self) -> &[Value] {
        &self.barrier.seen
    }
}

impl Channel for NamedBarrierValueAfterFinish {
    fn kind(&self) -> &'static str {
        "NamedBarrierValueAfterFinish"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::NamedBarrierValueAfterFinish {
            names: self.barrier.names.clone(),
        })
    }

    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        self.barrier.update(values)
    }

    fn get(&self) -> Option<Value> {
        self.is_available().then_some(Value::Nil)
    }

    fn is_available(&self) -> bool {
        self.finished && self.barrier.complete()
    }

    fn consume(&mut self) -> bool {
        if !self.is_available() {
            return false;
        }
        self.finished = false;
        self.barrier.seen.clear();
        true
    }

    fn finish(&mut self) -> bool {
        if self.finished || !self.barrier.complete() {
            return false;
        }
        self.finished = true;
        true
    }

    fn checkpoint(&self) -> Option<Value> {
        Some(Value::list(vec![
            self.barrier.seen_set(),
            Value::Bool(self.finished),
        ]))
    }

    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        const KIND: &str = "NamedBarrierValueAfterFinish";
        let Some(stored) = value else {
            return Ok(Box::new(NamedBarrierValueAfterFinish::new(
                self.barrier.names.clone(),
            )));
        };
        let (seen, finished) = unpack_pair(stored, KIND)?;
        let finished = finished.as_bool().ok_or_else(|| {
            ChannelError::InvalidCheckpoint(format!(
                "{KIND}: `finished` must be a boolean, got {finished:?}"
            ))
        })?;
        Ok(Box::new(NamedBarrierValueAfterFinish {
            barrier: self.barrier.restore(seen, KIND)?,
            finished,
        }))
    }

    fn clone_box(&self) -> Box<dyn Channel> {
        Box::new(self.clone())
    }
}
