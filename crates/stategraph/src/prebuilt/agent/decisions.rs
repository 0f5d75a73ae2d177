//! langchain-core's `Noul` question (the probability of yes) and its answer, asked of a
//! [`DecisionModel`](super::DecisionModel) beside the router's `Choice`.

use stategraph_checkpoint::{Map, Value};

use crate::messages::Message;

/// Where langchain-core defines the decision types (the stored answer's class).
const DECISIONS: &str = "langchain_core.decisions.types";

/// Descriptions of a [`Noul`]'s two outcomes (langchain-core's `NoulCriteria`; each
/// text, or any JSON, `None` by default).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NoulCriteria {
    /// What a yes means.
    pub r#true: Value,
    /// What a no means.
    pub r#false: Value,
}

impl NoulCriteria {
    /// `yes` and `no` described.
    pub fn new(yes: impl Into<Value>, no: impl Into<Value>) -> NoulCriteria {
        NoulCriteria {
            r#true: yes.into(),
            r#false: no.into(),
        }
    }
}

/// A yes/no question answered with the probability of yes (langchain-core's `Noul`).
#[derive(Clone, Debug, PartialEq)]
pub struct Noul {
    /// The judgment to make (text, or any JSON).
    pub instructions: Value,
    /// The outcomes' descriptions, if given.
    pub criteria: Option<NoulCriteria>,
}

impl Noul {
    /// The question as Python's `model_dump()` gives it: `type`, `instructions`,
    /// `criteria` (`None`, or `true` and `false`).
    pub fn to_value(&self) -> Value {
        let criteria = self.criteria.as_ref().map_or(Value::Nil, |c| {
            let mut m = Map::with_capacity(2);
            m.insert("true", c.r#true.clone());
            m.insert("false", c.r#false.clone());
            Value::Map(m)
        });
        let mut m = Map::with_capacity(3);
        m.insert("type", "noul");
        m.insert("instructions", self.instructions.clone());
        m.insert("criteria", criteria);
        Value::Map(m)
    }
}

/// The probability that a [`Noul`]'s answer is yes (langchain-core's `NoulAnswer`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoulAnswer {
    /// From 0 to 1.
    pub noul: f64,
}

impl NoulAnswer {
    /// The stored form: a pydantic `NoulAnswer`, as Python would store it.
    pub fn to_value(&self) -> Value {
        let mut m = Map::with_capacity(2);
        m.insert("type", "noul");
        m.insert("noul", self.noul);
        Value::pydantic_v2(DECISIONS, "NoulAnswer", m)
    }

    /// `Some(self)` when `noul` is within 0..=1, as pydantic's `ge=0, le=1` checks.
    pub fn checked(self) -> Option<NoulAnswer> {
        (0.0..=1.0).contains(&self.noul).then_some(self)
    }
}

/// The state a decision model judges (langchain-core's `State`, a mapping): the
/// messages, and other fields by name in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DecisionState {
    /// The `messages` field.
    pub messages: Vec<Message>,
    /// The other fields (`tool_call`, `tool_description`, ...).
    pub fields: Map,
}
