//! `ToolCallLimitMiddleware`: at most so many tool calls (of one tool, or of all) in a
//! thread or in a run.

use async_trait::async_trait;
use stategraph_checkpoint::{Map, Value};

use super::error::MiddlewareConfigError;
use super::middleware::{Hook, Middleware};
use super::state::{AgentState, AgentUpdate, JumpTo};
use crate::channels::{Channel, LastValue, UntrackedValue};
use crate::messages::{Message, ToolCall};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// What happens to a call past the limit (Python's `exit_behavior`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolLimitExit {
    /// The blocked calls are answered with an error message; the others run (default).
    #[default]
    Continue,
    /// The run fails (`ToolCallLimitExceededError`).
    Error,
    /// The agent ends: every pending call is answered, and an AI message says why.
    End,
}

/// Counts tool calls per thread (`thread_tool_call_count`, stored) and per run
/// (`run_tool_call_count`, not stored), keyed by the tool's name or `__all__`, and
/// blocks the calls past a limit, as Python's `ToolCallLimitMiddleware`. Its name is
/// `ToolCallLimitMiddleware[tool]` when it counts one tool.
#[derive(Clone, Debug)]
pub struct ToolCallLimitMiddleware {
    tool_name: Option<String>,
    thread_limit: Option<i64>,
    run_limit: Option<i64>,
    exit: ToolLimitExit,
}

impl ToolCallLimitMiddleware {
    /// Limits for `tool_name` (every tool when `None`), per thread and per run.
    pub fn new(
        tool_name: Option<&str>,
        thread_limit: Option<i64>,
        run_limit: Option<i64>,
        exit: ToolLimitExit,
    ) -> Result<Self, MiddlewareConfigError> {
        let error = |m: String| Err(MiddlewareConfigError::new("ToolCallLimitMiddleware", m));
        if thread_limit.is_none() && run_limit.is_none() {
            return error(
                "At least one limit must be specified (thread_limit or run_limit)".into(),
            );
        }
        if let (Some(t), Some(r)) = (thread_limit, run_limit) {
            if r > t {
                return error(format!("run_limit ({r}) cannot exceed thread_limit ({t}). The run limit should be less than or equal to the thread limit."));
            }
        }
        Ok(ToolCallLimitMiddleware {
            tool_name: tool_name.map(str::to_owned),
            thread_limit,
            run_limit,
            exit,
        })
    }

    fn would_exceed(&self, thread: i64, run: i64) -> bool {
        self.thread_limit.is_some_and(|l| thread + 1 > l)
            || self.run_limit.is_some_and(|l| run + 1 > l)
    }

    fn final_message(&self, thread: i64, run: i64) -> String {
        let tool = match &self.tool_name {
            Some(name) => format!("'{name}' tool"),
            None => "Tool".to_owned(),
        };
        let mut parts = Vec::new();
        if let Some(l) = self.thread_limit.filter(|&l| thread > l) {
            parts.push(format!("thread limit exceeded ({thread}/{l} calls)"));
        }
        if let Some(l) = self.run_limit.filter(|&l| run > l) {
            parts.push(format!("run limit exceeded ({run}/{l} calls)"));
        }
        format!("{tool} call limit reached: {}.", parts.join(" and "))
    }
}

/// An error tool message answering `call`.
fn blocked(call: &ToolCall, text: &str) -> Message {
    let mut m = Message::tool(text, call.id.clone().unwrap_or_default()).with_name(&call.name);
    m.status = "error".to_owned();
    m
}

/// A counter map's entry.
fn counts(state: &AgentState, key: &str) -> Map {
    state
        .get(key)
        .and_then(Value::as_map)
        .cloned()
        .unwrap_or_default()
}

#[async_trait]
impl Middleware for ToolCallLimitMiddleware {
    fn name(&self) -> String {
        match &self.tool_name {
            Some(tool) => format!("ToolCallLimitMiddleware[{tool}]"),
            None => "ToolCallLimitMiddleware".to_owned(),
        }
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::AfterModel]
    }

    fn can_jump_to(&self, _: Hook) -> Vec<JumpTo> {
        vec![JumpTo::End]
    }

    fn channels(&self) -> Vec<(String, Box<dyn Channel>)> {
        vec![
            (
                "thread_tool_call_count".to_owned(),
                Box::new(LastValue::new()),
            ),
            (
                "run_tool_call_count".to_owned(),
                Box::new(UntrackedValue::new(true)),
            ),
        ]
    }

    async fn after_model(
        &self,
        state: &AgentState,
        _: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let Some((ai, _)) = state.last_ai_and_tool_messages() else {
            return Ok(AgentUpdate::none());
        };
        if ai.tool_calls.is_empty() {
            return Ok(AgentUpdate::none());
        }
        let key = self
            .tool_name
            .clone()
            .unwrap_or_else(|| "__all__".to_owned());
        let (mut threads, mut runs) = (
            counts(state, "thread_tool_call_count"),
            counts(state, "run_tool_call_count"),
        );
        let thread_now = threads.get(&key).and_then(Value::as_i64).unwrap_or(0);
        let run_now = runs.get(&key).and_then(Value::as_i64).unwrap_or(0);
        let (mut thread, mut run) = (thread_now, run_now);
        let (mut allowed, mut blocked_calls) = (0, Vec::new());
        let matching = ai
            .tool_calls
            .iter()
            .filter(|c| self.tool_name.as_ref().is_none_or(|n| *n == c.name));
        for call in matching {
            if self.would_exceed(thread, run) {
                blocked_calls.push(call.clone());
            } else {
                allowed += 1;
                thread += 1;
                run += 1;
            }
        }
        threads.insert(key.as_str(), thread);
        runs.insert(key.as_str(), run + blocked_calls.len() as i64);
        let run_final = run + blocked_calls.len() as i64;
        if blocked_calls.is_empty() {
            if allowed == 0 {
                return Ok(AgentUpdate::none());
            }
            return Ok(AgentUpdate::none()
                .set("thread_tool_call_count", Value::Map(threads))
                .set("run_tool_call_count", Value::Map(runs)));
        }
        let hypothetical = thread + blocked_calls.len() as i64;
        if self.exit == ToolLimitExit::Error {
            return Err(NodeError::named(
                "ToolCallLimitExceededError",
                self.final_message(hypothetical, run_final),
            ));
        }
        let text = match &self.tool_name {
            Some(name) => format!("Tool call limit exceeded. Do not call '{name}' again."),
            None => "Tool call limit exceeded. Do not make additional tool calls.".to_owned(),
        };
        let mut messages: Vec<Message> = blocked_calls.iter().map(|c| blocked(c, &text)).collect();
        if self.exit == ToolLimitExit::End {
            let ids: Vec<&Option<String>> = blocked_calls.iter().map(|c| &c.id).collect();
            let stopped = "Execution stopped before this tool call could run because another tool call in the same batch exceeded the limit.";
            messages.extend(
                ai.tool_calls
                    .iter()
                    .filter(|c| !ids.contains(&&c.id))
                    .map(|c| blocked(c, stopped)),
            );
            messages.push(Message::ai(self.final_message(hypothetical, run_final)));
            threads.insert(key.as_str(), thread_now);
            return Ok(AgentUpdate::none()
                .set("thread_tool_call_count", Value::Map(threads))
                .set("run_tool_call_count", Value::Map(runs))
                .jump_to(JumpTo::End)
                .messages(messages));
        }
        Ok(AgentUpdate::none()
            .set("thread_tool_call_count", Value::Map(threads))
            .set("run_tool_call_count", Value::Map(runs))
            .messages(messages))
    }
}
