//! `BinaryOperatorAggregate`: a value folded with a reducer over every write.

use std::fmt;

use stategraph_checkpoint::{Ext, Value};

use super::last_value::concurrent_update_error;
use super::{Channel, ChannelError, Reducer};

/// The marker key and tag of an overwrite (LangGraph's `OVERWRITE` constant).
const OVERWRITE: &str = "__overwrite__";

/// Folds every written value into the current one with a [`Reducer`] (a key annotated
/// with a reducer, such as `operator.add` or `add_messages`).
///
/// The channel starts with `initial`, what Python's `T()` gives for the key's type (`[]`
/// for a list, `0` for an int, `{}` for a dict), or empty when the type cannot be built
/// with no arguments. An empty channel takes the step's first value as is, then folds
/// the rest.
///
/// A written *overwrite* replaces the value instead of being folded, and the writes after
/// it in the same step that are not overwrites are ignored; two overwrites in one step are
/// an error. An overwrite is any of:
///
/// * a map with the single key `"__overwrite__"`: the value is its entry;
/// * a map whose `"type"` is `"__overwrite__"` and that has a `"value"` key (how a
///   `langgraph.types.Overwrite` looks once its class is lost, e.g. through JSON);
/// * a `langgraph.types.Overwrite` object extension whose data has a `"value"` key.
///
/// A failed update (reducer error, two overwrites) leaves the channel as it was; LangGraph
/// may leave it half-updated, but the failing step is abandoned either way.
#[derive(Clone)]
pub struct BinaryOperatorAggregate {
    reducer: Reducer,
    initial: Option<Value>,
    value: Option<Value>,
}

impl BinaryOperatorAggregate {
    /// A channel holding `initial` (`None`: empty) that folds writes with `reducer`.
    pub fn new(reducer: Reducer, initial: Option<Value>) -> BinaryOperatorAggregate {
        BinaryOperatorAggregate {
            reducer,
            value: initial.clone(),
            initial,
        }
    }

    /// The value a new channel of this spec starts with (`None`: empty).
    pub fn initial(&self) -> Option<&Value> {
        self.initial.as_ref()
    }
}

impl fmt::Debug for BinaryOperatorAggregate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BinaryOperatorAggregate")
            .field("initial", &self.initial)
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}

impl Channel for BinaryOperatorAggregate {
    fn kind(&self) -> &'static str {
        "BinaryOperatorAggregate"
    }

    fn spec(&self) -> Option<super::ChannelSpec> {
        Some(super::ChannelSpec::BinaryOperatorAggregate {
            reducer: crate::reducers::name_of(&self.reducer)?.to_owned(),
            initial: self.initial.clone(),
        })
    }

    fn gives_message_ids(&self) -> bool {
        crate::reducers::is_add_messages(&self.reducer)
    }

    fn update(&mut self, values: Vec<Value>) -> Result<bool, ChannelError> {
        if values.is_empty() {
            return Ok(false);
        }
        let mut values = values.into_iter();
        // An empty channel takes the first value verbatim, even an overwrite.
        let mut acc = match &self.value {
            Some(current) => current.clone(),
            None => values.next().unwrap_or_default(),
        };
        let mut seen_overwrite = false;
        for value in values {
            match into_overwrite(value) {
                Ok(replacement) => {
                    if seen_overwrite {
                        return Err(concurrent_update_error(
                            "Can receive only one Overwrite value per super-step.",
                        ));
                    }
                    acc = replacement;
                    seen_overwrite = true;
                }
                Err(value) => {
                    if !seen_overwrite {
                        acc = (self.reducer)(acc, value)?;
                    }
                }
            }
        }
        self.value = Some(acc);
        Ok(true)
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

    /// Restores the stored value; a DeltaChannel snapshot (left by a thread written while
    /// the key was a DeltaChannel) is unwrapped. Nothing stored gives the initial value.
    fn from_checkpoint(&self, value: Option<Value>) -> Result<Box<dyn Channel>, ChannelError> {
        let value = match value {
            None => self.initial.clone(),
            Some(Value::Ext(ext)) => match &*ext {
                Ext::DeltaSnapshot(inner) => Some(inner.clone()),
                _ => Some(Value::Ext(ext)),
            },
            Some(other) => Some(other),
        };
        Ok(Box::new(BinaryOperatorAggregate {
            reducer: self.reducer.clone(),
            initial: self.initial.clone(),
            value,
        }))
    }

    fn clone_box(&self) -> Box<dyn Channel> {
        Box::new(self.clone())
    }
}

/// True when `value` is an overwrite (see [`BinaryOperatorAggregate`]).
pub fn is_overwrite(value: &Value) -> bool {
    match value {
        Value::Map(map) => {
            (map.len() == 1 && map.get(OVERWRITE).is_some())
                || (map.get("type").and_then(Value::as_str) == Some(OVERWRITE)
                    && map.get("value").is_some())
        }
        Value::Ext(ext) => match ext.as_ref() {
            Ext::Object(o) => {
                o.module == "langgraph.types"
                    && o.class == "Overwrite"
                    && matches!(&o.data, Value::Map(d) if d.get("value").is_some())
            }
            _ => false,
        },
        _ => false,
    }
}

/// `Ok(replacement)` when `value` is an overwrite, `Err(value)` (given back) otherwise.
pub(crate) fn into_overwrite(value: Value) -> Result<Value, Value> {
    match value {
        Value::Map(mut map) => {
            let key = if map.len() == 1 && map.get(OVERWRITE).is_some() {
                Some(OVERWRITE)
            } else if map.get("type").and_then(Value::as_str) == Some(OVERWRITE) {
                Some("value")
            } else {
                None
            };
            match key.and_then(|k| map.remove(k)) {
                Some(replacement) => Ok(replacement),
                None => Err(Value::Map(map)),
            }
        }
        Value::Ext(mut ext) => {
            if let Ext::Object(object) = std::sync::Arc::make_mut(&mut ext) {
                if object.module == "langgraph.types" && object.class == "Overwrite" {
                    if let Value::Map(data) = &mut object.data {
                        if let Some(replacement) = data.remove("value") {
                            return Ok(replacement);
                        }
                    }
                }
            }
            Err(Value::Ext(ext))
        }
        other => Err(other),
    }
}
