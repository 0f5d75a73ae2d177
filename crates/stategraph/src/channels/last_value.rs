//! `LastValue` and `LastValueAfterFinish`: a channel holding the one value written last.

use stategraph_checkpoint::Value;

use super::python::unpack_pair;
use super::slot::{slot_reads, Slot};
use super::{Channel, ChannelError};

/// The troubleshooting link LangGraph appends to an `INVALID_CONCURRENT_GRAPH_UPDATE` error.
const CONCURRENT_UPDATE_HINT: &str = "For troubleshooting, visit: https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE";

/// LangGraph's `INVALID_CONCURRENT_GRAPH_UPDATE` message: `message`, then the
/// troubleshooting link on its own line.
pub(crate) fn concurrent_update_error(message: &str) -> ChannelError {
    ChannelError::InvalidUpdate(format!("{message}\n{CONCURRENT_UPDATE_HINT}"))
}

/// Stores the last value received; accepts at most one value per step.
///
/// A plain state key without a reducer. Two writes in one step fail with LangGraph's
/// `INVALID_CONCURRENT_GRAPH_UPDATE` message (the caller prefixes `At key '…': `).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LastValue {
    value: Slot,
}

impl LastValue {
    /// An empty channel.
    pub fn new() -> LastValue {
        LastValue::default()
    }
}

impl Channel for LastValue {
    fn kind(&self) -> &'static str {
        "LastValue"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::LastValue)
    }

    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        if values.len() > 1 {
            return Err(concurrent_update_error(
                "Can receive only one value per step. Use an Annotated key to handle multiple values.",
            ));
        }
        Ok(self.value.keep_last(values))
    }

    slot_reads!(checkpoint);

    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        Ok(Box::new(LastValue {
            value: Slot::new(value),
        }))
    }
}

/// Stores the last value received, readable only after the run would otherwise finish.
///
/// The trigger of a deferred node: a write sets the value (not yet available), `finish`
/// makes it available, and `consume` (the deferred node ran) clears it. Any number of
/// values may arrive in a step; the last one wins. Checkpoints as the pair
/// `[value, finished]`, or nothing while empty.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LastValueAfterFinish {
    value: Slot,
    finished: bool,
}

impl LastValueAfterFinish {
    /// An empty channel.
    pub fn new() -> LastValueAfterFinish {
        LastValueAfterFinish::default()
    }
}

impl Channel for LastValueAfterFinish {
    fn kind(&self) -> &'static str {
        "LastValueAfterFinish"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::LastValueAfterFinish)
    }

    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        if !self.value.keep_last(values) {
            return Ok(false);
        }
        self.finished = false;
        Ok(true)
    }

    fn get(&self) -> Option<Value> {
        if self.finished {
            self.value.get()
        } else {
            None
        }
    }

    fn is_available(&self) -> bool {
        self.finished && self.value.is_set()
    }

    fn consume(&mut self) -> bool {
        if !self.finished {
            return false;
        }
        self.finished = false;
        self.value.clear();
        true
    }

    fn finish(&mut self) -> bool {
        if self.finished || !self.value.is_set() {
            return false;
        }
        self.finished = true;
        true
    }

    fn checkpoint(&self) -> Option<Value> {
        let value = self.value.get()?;
        Some(Value::list(vec![value, Value::Bool(self.finished)]))
    }

    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        let Some(stored) = value else {
            return Ok(Box::new(LastValueAfterFinish::new()));
        };
        let (value, finished) = unpack_pair(stored, "LastValueAfterFinish")?;
        let finished = finished.as_bool().ok_or_else(|| {
            ChannelError::InvalidCheckpoint(format!(
                "LastValueAfterFinish: `finished` must be a boolean, got {finished:?}"
            ))
        })?;
        Ok(Box::new(LastValueAfterFinish {
            value: Slot::new(Some(value)),
            finished,
        }))
    }

    fn clone_box(&self) -> Box<dyn Channel> {
        Box::new(self.clone())
    }
}
