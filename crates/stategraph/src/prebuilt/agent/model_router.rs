//! [`ModelRouterMiddleware`] (langchain's `ModelRouterMiddleware`, beta): a decision
//! model picks one of several models from the latest human message when the agent
//! starts; every model call of the run goes to that model.

use std::sync::Arc;

use async_trait::async_trait;
use stategraph_checkpoint::{Map, Value};

use super::decisions::{DecisionState, Noul, NoulAnswer};
use super::error::MiddlewareConfigError;
use super::middleware::{Hook, Middleware, ModelHandler, ModelRequest, ModelResponse};
use super::state::{AgentState, AgentUpdate};
use crate::channels::{Channel, LastValue};
use crate::messages::{Message, Role};
use crate::prebuilt::chat_model::ChatModel;
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// The channel (and question id) holding the routing answer.
const ROUTE: &str = "model_route";

/// Where langchain-core defines the decision types (the stored answer's class).
const DECISIONS: &str = "langchain_core.decisions.types";

/// A model the router may pick and when to pick it (Python's `ModelChoice`).
#[derive(Clone)]
pub struct ModelChoice {
    /// The model.
    pub model: Arc<dyn ChatModel>,
    /// When it fits (text, or any JSON), as the decision model reads it.
    pub criteria: Value,
}

impl std::fmt::Debug for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelChoice")
            .field("criteria", &self.criteria)
            .finish_non_exhaustive()
    }
}

impl ModelChoice {
    /// `model`, picked when `criteria` fit.
    pub fn new(model: impl ChatModel, criteria: impl Into<Value>) -> ModelChoice {
        ModelChoice {
            model: Arc::new(model),
            criteria: criteria.into(),
        }
    }
}

/// A question asking for one label of several (langchain-core's `Choice`).
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The judgment to make (text, or any JSON).
    pub instructions: Value,
    /// Each label with its description, in order.
    pub criteria: Vec<(String, Value)>,
}

impl Choice {
    /// The question as Python's `model_dump()` gives it: `type`, `criteria`,
    /// `instructions`.
    pub fn to_value(&self) -> Value {
        let mut criteria = Map::with_capacity(self.criteria.len());
        for (label, c) in &self.criteria {
            criteria.insert(label.as_str(), c.clone());
        }
        let mut m = Map::with_capacity(3);
        m.insert("type", "choice");
        m.insert("criteria", Value::Map(criteria));
        m.insert("instructions", self.instructions.clone());
        Value::Map(m)
    }
}

/// The label a decision model picked, with each label's probability and its
/// confidence (langchain-core's `ChoiceAnswer`).
#[derive(Clone, Debug, PartialEq)]
pub struct ChoiceAnswer {
    /// The label picked.
    pub choice: String,
    /// Each label's probability.
    pub probabilities: Vec<(String, f64)>,
    /// How sure the model is, from 0 to 1.
    pub confidence: f64,
}

impl ChoiceAnswer {
    /// The stored form: a pydantic `ChoiceAnswer`, as Python stores it.
    pub fn to_value(&self) -> Value {
        let mut probabilities = Map::with_capacity(self.probabilities.len());
        for (label, p) in &self.probabilities {
            probabilities.insert(label.as_str(), *p);
        }
        let mut m = Map::with_capacity(4);
        m.insert("type", "choice");
        m.insert("choice", self.choice.as_str());
        m.insert("probabilities", Value::Map(probabilities));
        m.insert("confidence", self.confidence);
        Value::pydantic_v2(DECISIONS, "ChoiceAnswer", m)
    }

    /// Reads the stored form (a pydantic `ChoiceAnswer`, or a plain map of its fields).
    pub fn from_value(value: &Value) -> Option<ChoiceAnswer> {
        let fields = match value.as_pydantic_v2() {
            Some((_, _, fields)) => fields,
            None => value.as_map()?,
        };
        let probabilities = fields.get("probabilities").and_then(Value::as_map);
        let probabilities = probabilities.map_or_else(Vec::new, |m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), number(v)?)))
                .collect()
        });
        Some(ChoiceAnswer {
            choice: fields.get("choice")?.as_str()?.to_owned(),
            probabilities,
            confidence: fields.get("confidence").and_then(number).unwrap_or(0.0),
        })
    }
}

/// A number as `f64`.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Float(f) => Some(*f),
        Value::Int(i) => Some(*i as f64),
        Value::UInt(u) => Some(*u as f64),
        _ => None,
    }
}

/// A model answering [`Choice`] and [`Noul`] questions about a state (langchain-core's
/// `BaseDecisionModel`, for the questions [`ModelRouterMiddleware`] and
/// [`AutoModeMiddleware`](super::AutoModeMiddleware) ask).
#[async_trait]
pub trait DecisionModel: Send + Sync + 'static {
    /// Answers `question` (id `model_route`) about `state`, the latest human message.
    async fn choose(
        &self,
        state: &Message,
        question: &Choice,
        ctx: &NodeContext,
    ) -> Result<ChoiceAnswer, NodeError>;

    /// Answers the [`Noul`] `question` (id `id`) about `state` with the probability of
    /// yes ([`AutoModeMiddleware`](super::AutoModeMiddleware) asks `is_risky` per gated
    /// tool call). By default a model answers none: `NotImplementedError`.
    async fn noul(
        &self,
        state: &DecisionState,
        id: &str,
        question: &Noul,
        ctx: &NodeContext,
    ) -> Result<NoulAnswer, NodeError> {
        let _ = (state, question, ctx);
        let msg = format!("this decision model answers no Noul question ({id:?})");
        Err(NodeError::named("NotImplementedError", msg))
    }
}

/// Picks the agent's model for a run (langchain's `ModelRouterMiddleware`, beta there):
/// when the agent starts, the [`DecisionModel`] answers a [`Choice`] (the instructions,
/// each route's criteria) about the latest human message; the whole answer is stored in
/// the `model_route` channel (a pydantic `ChoiceAnswer`, as Python's) and each model
/// call of the run goes to the route's model.
///
/// A state without a human message fails the `before_agent` node with Python's
/// `ValueError`; an answer naming no route fails the model call (`KeyError`).
#[derive(Clone)]
pub struct ModelRouterMiddleware {
    choices: Vec<(String, ModelChoice)>,
    instructions: Value,
    classifier: Arc<dyn DecisionModel>,
}

impl std::fmt::Debug for ModelRouterMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelRouterMiddleware")
            .field("choices", &self.choices)
            .field("instructions", &self.instructions)
            .finish_non_exhaustive()
    }
}

impl ModelRouterMiddleware {
    /// Routes among `choices` (name, choice; at least one, names unique) as
    /// `classifier` answers `instructions`.
    pub fn new<I, S>(
        choices: I,
        instructions: impl Into<Value>,
        classifier: impl DecisionModel,
    ) -> Result<ModelRouterMiddleware, MiddlewareConfigError>
    where
        I: IntoIterator<Item = (S, ModelChoice)>,
        S: Into<String>,
    {
        let err = |m: String| MiddlewareConfigError::new("ModelRouterMiddleware", m);
        let choices: Vec<(String, ModelChoice)> =
            choices.into_iter().map(|(k, c)| (k.into(), c)).collect();
        if choices.is_empty() {
            return Err(err(
                "choices: Dictionary should have at least 1 item after validation, not 0".into(),
            ));
        }
        for (i, (name, _)) in choices.iter().enumerate() {
            if choices[..i].iter().any(|(n, _)| n == name) {
                return Err(err(format!("choices: the route {name:?} is given twice")));
            }
        }
        Ok(ModelRouterMiddleware {
            choices,
            instructions: instructions.into(),
            classifier: Arc::new(classifier),
        })
    }

    /// The question the decision model answers.
    pub fn question(&self) -> Choice {
        Choice {
            instructions: self.instructions.clone(),
            criteria: self
                .choices
                .iter()
                .map(|(name, c)| (name.clone(), c.criteria.clone()))
                .collect(),
        }
    }
}

#[async_trait]
impl Middleware for ModelRouterMiddleware {
    fn name(&self) -> String {
        "ModelRouterMiddleware".into()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::BeforeAgent, Hook::WrapModelCall]
    }

    fn channels(&self) -> Vec<(String, Box<dyn Channel>)> {
        vec![(ROUTE.to_owned(), Box::new(LastValue::new()))]
    }

    async fn before_agent(
        &self,
        state: &AgentState,
        ctx: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let Some(human) = state
            .messages()
            .iter()
            .rev()
            .find(|m| m.role == Role::Human)
        else {
            let msg =
                "ModelRouterMiddleware requires a HumanMessage in the agent state to route on.";
            return Err(NodeError::named("ValueError", msg));
        };
        let answer = self.classifier.choose(human, &self.question(), ctx).await?;
        Ok(AgentUpdate::none().set(ROUTE, answer.to_value()))
    }

    async fn wrap_model_call(
        &self,
        mut request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        let key_error = |key: &str| NodeError::named("KeyError", Value::from(key).repr());
        let answer = request
            .state
            .get(ROUTE)
            .and_then(ChoiceAnswer::from_value)
            .ok_or_else(|| key_error(ROUTE))?;
        let (_, choice) = self
            .choices
            .iter()
            .find(|(name, _)| *name == answer.choice)
            .ok_or_else(|| key_error(&answer.choice))?;
        request.model = choice.model.clone();
        handler.call(request).await
    }
}
