//! The typed `Overwrite` of a reducer channel (LangGraph's `langgraph.types.Overwrite`),
//! stored as Python stores it (docs/format.md#value-encoding).

use stategraph_checkpoint::{Ext, Map, ObjectCode, Value};

/// Replaces the value of a reducer channel instead of folding the write into it
/// (LangGraph's `Overwrite(value)`): write `Overwrite::new(v)` where the channel's update
/// goes, e.g. `update([("trail", Overwrite::new(list!["z"]))])`. Two overwrites of one
/// channel in one step are an error; the other writes of that step to it are ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct Overwrite {
    /// The channel's new value.
    pub value: Value,
}

impl Overwrite {
    /// An overwrite setting the channel to `value`.
    pub fn new(value: impl Into<Value>) -> Overwrite {
        Overwrite {
            value: value.into(),
        }
    }

    /// The stored form, as Python stores an `Overwrite`: `langgraph.types.Overwrite`, a
    /// dataclass (msgpack extension 2) with fields `value, type` (`type` is always
    /// `"__overwrite__"`).
    pub fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(2);
        m.insert("value", self.value.clone());
        m.insert("type", Value::from("__overwrite__"));
        Value::from(Ext::object(
            ObjectCode::ConstructorKwArgs,
            "langgraph.types",
            "Overwrite",
            Value::Map(m),
            None,
        ))
    }

    /// The overwrite `value` is, in any form a reducer channel takes as one (the object
    /// above, `{"__overwrite__": v}` or `{"type": "__overwrite__", "value": v}`).
    pub fn from_value(value: &Value) -> Option<Overwrite> {
        crate::channels::into_overwrite(value.clone())
            .ok()
            .map(|value| Overwrite { value })
    }
}

impl From<Overwrite> for Value {
    fn from(overwrite: Overwrite) -> Value {
        overwrite.to_value()
    }
}
