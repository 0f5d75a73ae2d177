//! The agent's conditional edges: Python's `model_to_tools`, `tools_to_model`,
//! `model_to_model` and the middleware jump edge.

use super::nodes::pending_tool_calls;
use super::state::{AgentState, JumpTo};
use crate::graph::BranchTargets;
use crate::messages::Role;
use crate::state::DynState;
use crate::types::Send as SendPacket;
use stategraph_checkpoint::Value;

/// Where a jump goes: `model` is the loop's entry (first `before_model`, or `model`),
/// `end` its exit (last `after_agent`, or `END`).
#[derive(Clone, Debug)]
pub(crate) struct Routes {
    pub model: String,
    pub end: String,
}

/// The state a path function reads (one it cannot read ends the loop's routing with
/// no messages).
fn view(state: &DynState) -> AgentState {
    AgentState::from_values(state.0.clone()).unwrap_or_default()
}

impl Routes {
    /// The node a jump names.
    fn resolve(&self, jump: Option<JumpTo>) -> Option<String> {
        match jump? {
            JumpTo::Model => Some(self.model.clone()),
            JumpTo::End => Some(self.end.clone()),
            JumpTo::Tools => Some("tools".to_owned()),
        }
    }

    /// A middleware node's edge: the jump it set, else `default`.
    pub(crate) fn jump(
        self,
        default: String,
    ) -> impl Fn(&DynState) -> BranchTargets + Send + Sync + 'static {
        move |state| {
            let jump = view(state).jump_to();
            BranchTargets::from(self.resolve(jump).unwrap_or_else(|| default.clone()))
        }
    }

    /// With a structured-output tool and no tools: again until a structured answer.
    pub(crate) fn model_to_model(self) -> impl Fn(&DynState) -> BranchTargets + Send + Sync {
        move |state| {
            let state = view(state);
            if let Some(to) = self.resolve(state.jump_to()) {
                return to.into();
            }
            if state.structured_response().is_some() {
                return self.end.clone().into();
            }
            self.model.clone().into()
        }
    }
}

/// The edges out of the loop's exit and out of `tools`.
#[derive(Clone, Debug)]
pub(crate) struct ToolsEdge {
    pub routes: Routes,
    pub structured: Option<String>,
}

impl ToolsEdge {
    /// After the model (or its last `after_model` hook): a jump, the end when the model
    /// called no tool, `tools` while calls are pending, else the model again.
    pub(crate) fn model_to_tools(self) -> impl Fn(&DynState) -> BranchTargets + Send + Sync {
        move |state| {
            let state = view(state);
            let routes = &self.routes;
            if let Some(to) = routes.resolve(state.jump_to()) {
                return to.into();
            }
            let Some((ai, _)) = state.last_ai_and_tool_messages() else {
                return routes.end.clone().into();
            };
            if ai.tool_calls.is_empty() {
                return routes.end.clone().into();
            }
            let pending = pending_tool_calls(&state, self.structured.as_deref());
            if !pending.is_empty() {
                // langchain's `Send("tools", [tool_call])`, one per call.
                let sends = pending
                    .iter()
                    .map(|c| SendPacket::new("tools", Value::list(vec![c.to_value()])));
                return sends.collect::<Vec<_>>().into();
            }
            if state.structured_response().is_some() {
                return routes.end.clone().into();
            }
            routes.model.clone().into()
        }
    }

    /// After `tools`: the end when the structured-output tool answered, else the model.
    pub(crate) fn tools_to_model(self) -> impl Fn(&DynState) -> BranchTargets + Send + Sync {
        move |state| {
            let state = view(state);
            let Some((_, tools)) = state.last_ai_and_tool_messages() else {
                return self.routes.model.clone().into();
            };
            let done = tools.iter().any(|m| {
                m.role == Role::Tool
                    && m.name.is_some()
                    && m.name == self.structured
                    && m.status != "error"
            });
            if done {
                return self.routes.end.clone().into();
            }
            self.routes.model.clone().into()
        }
    }
}
