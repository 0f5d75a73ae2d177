//! `ModelCallLimitMiddleware`: at most so many model calls in a thread or in a run.

use async_trait::async_trait;
use stategraph_checkpoint::Value;

use super::error::MiddlewareConfigError;
use super::middleware::{Hook, Middleware};
use super::state::{AgentState, AgentUpdate, JumpTo};
use crate::channels::{Channel, LastValue, UntrackedValue};
use crate::messages::Message;
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// What happens at the limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LimitExit {
    /// The agent ends with an AI message saying which limit was reached (Python's
    /// `exit_behavior="end"`, the default).
    #[default]
    End,
    /// The run fails (`ModelCallLimitExceededError`).
    Error,
}

/// Counts model calls (`thread_model_call_count`, stored; `run_model_call_count`, not
/// stored) and stops the agent before a call past a limit, as Python's
/// `ModelCallLimitMiddleware`.
#[derive(Clone, Debug)]
pub struct ModelCallLimitMiddleware {
    thread_limit: Option<i64>,
    run_limit: Option<i64>,
    exit: LimitExit,
}

impl ModelCallLimitMiddleware {
    /// Limits per thread and per run (at least one).
    pub fn new(
        thread_limit: Option<i64>,
        run_limit: Option<i64>,
        exit: LimitExit,
    ) -> Result<Self, MiddlewareConfigError> {
        if thread_limit.is_none() && run_limit.is_none() {
            return Err(MiddlewareConfigError::new(
                "ModelCallLimitMiddleware",
                "At least one limit must be specified (thread_limit or run_limit)",
            ));
        }
        Ok(ModelCallLimitMiddleware {
            thread_limit,
            run_limit,
            exit,
        })
    }
}

/// Python's message naming the limits reached.
fn exceeded(thread: i64, run: i64, thread_limit: Option<i64>, run_limit: Option<i64>) -> String {
    let mut parts = Vec::new();
    if let Some(limit) = thread_limit.filter(|&l| thread >= l) {
        parts.push(format!("thread limit ({thread}/{limit})"));
    }
    if let Some(limit) = run_limit.filter(|&l| run >= l) {
        parts.push(format!("run limit ({run}/{limit})"));
    }
    format!("Model call limits exceeded: {}", parts.join(", "))
}

fn count(state: &AgentState, key: &str) -> i64 {
    state.get(key).and_then(Value::as_i64).unwrap_or(0)
}

#[async_trait]
impl Middleware for ModelCallLimitMiddleware {
    fn name(&self) -> String {
        "ModelCallLimitMiddleware".to_owned()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::BeforeModel, Hook::AfterModel]
    }

    fn can_jump_to(&self, hook: Hook) -> Vec<JumpTo> {
        if hook == Hook::BeforeModel {
            vec![JumpTo::End]
        } else {
            Vec::new()
        }
    }

    fn channels(&self) -> Vec<(String, Box<dyn Channel>)> {
        vec![
            (
                "thread_model_call_count".to_owned(),
                Box::new(LastValue::new()),
            ),
            (
                "run_model_call_count".to_owned(),
                Box::new(UntrackedValue::new(true)),
            ),
        ]
    }

    async fn before_model(
        &self,
        state: &AgentState,
        _: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let thread = count(state, "thread_model_call_count");
        let run = count(state, "run_model_call_count");
        let over = self.thread_limit.is_some_and(|l| thread >= l)
            || self.run_limit.is_some_and(|l| run >= l);
        if !over {
            return Ok(AgentUpdate::none());
        }
        let text = exceeded(thread, run, self.thread_limit, self.run_limit);
        match self.exit {
            LimitExit::Error => Err(NodeError::named("ModelCallLimitExceededError", text)),
            LimitExit::End => Ok(AgentUpdate::none()
                .jump_to(JumpTo::End)
                .messages(vec![Message::ai(text)])),
        }
    }

    async fn after_model(
        &self,
        state: &AgentState,
        _: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        Ok(AgentUpdate::none()
            .set(
                "thread_model_call_count",
                count(state, "thread_model_call_count") + 1,
            )
            .set(
                "run_model_call_count",
                count(state, "run_model_call_count") + 1,
            ))
    }
}
