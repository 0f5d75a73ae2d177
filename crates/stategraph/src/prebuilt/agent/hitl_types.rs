//! The values a client of [`HumanInTheLoopMiddleware`](super::HumanInTheLoopMiddleware)
//! reads and sends: the interrupt's `HITLRequest` and the `{"decisions": [...]}` resume,
//! typed (their stored forms are Python's).

use stategraph_checkpoint::{Map, Value};

use crate::error::{Error, Result};
use crate::types::Interrupt;

/// One tool call waiting for a decision (Python's `ActionRequest`).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct ActionRequest {
    /// The tool's name.
    pub name: String,
    /// The call's arguments.
    pub args: Value,
    /// The text shown to the reviewer.
    #[serde(default)]
    pub description: Option<String>,
}

/// The decisions allowed for one action (Python's `ReviewConfig`).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct ReviewConfig {
    /// The tool's name.
    pub action_name: String,
    /// `approve`, `edit`, `reject`, `respond`: those allowed.
    pub allowed_decisions: Vec<String>,
}

/// The value of the middleware's interrupt (Python's `HITLRequest`).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct HitlRequest {
    /// The calls to review, in the order the decisions answer them.
    pub action_requests: Vec<ActionRequest>,
    /// Their review configs, in the same order.
    pub review_configs: Vec<ReviewConfig>,
}

impl HitlRequest {
    /// Reads an interrupt's value (`Error::State` naming what does not fit).
    pub fn from_value(value: &Value) -> Result<HitlRequest> {
        serde_json::from_value(value.to_json())
            .map_err(|e| Error::State(format!("not a HITLRequest: {e}")))
    }

    /// The request of the first of a run's `interrupts`.
    pub fn from_interrupts(interrupts: &[Interrupt]) -> Result<HitlRequest> {
        let first = interrupts
            .first()
            .ok_or_else(|| Error::State("no interrupt: the run did not pause".into()))?;
        HitlRequest::from_value(&first.value)
    }
}

/// A reviewer's decision on one call.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Run the call as it is.
    Approve,
    /// Run this call instead (`edited_action`: a tool's name and arguments).
    Edit {
        /// The tool to run.
        name: String,
        /// Its arguments.
        args: Value,
    },
    /// Do not run it; the optional reason is told to the model.
    Reject(Option<String>),
    /// Do not run it; this text is the tool's answer.
    Respond(String),
}

impl Decision {
    /// The stored form (`{"type": "approve"}`, ...).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        match self {
            Decision::Approve => {
                m.insert("type", "approve");
            }
            Decision::Edit { name, args } => {
                m.insert("type", "edit");
                let mut action = Map::new();
                action.insert("name", name.as_str());
                action.insert("args", args.clone());
                m.insert("edited_action", Value::Map(action));
            }
            Decision::Reject(reason) => {
                m.insert("type", "reject");
                if let Some(reason) = reason {
                    m.insert("message", reason.as_str());
                }
            }
            Decision::Respond(text) => {
                m.insert("type", "respond");
                m.insert("message", text.as_str());
            }
        }
        Value::Map(m)
    }
}

/// The resume value answering a `HITLRequest`: `{"decisions": [...]}` (Python's
/// `HITLResponse`), one decision per action request, in order:
/// `agent.invoke(Command::resume(hitl_response([Decision::Approve])), &thread)`.
pub fn hitl_response(decisions: impl IntoIterator<Item = Decision>) -> Value {
    let list: Vec<Value> = decisions.into_iter().map(|d| d.to_value()).collect();
    let mut m = Map::new();
    m.insert("decisions", Value::list(list));
    Value::Map(m)
}
