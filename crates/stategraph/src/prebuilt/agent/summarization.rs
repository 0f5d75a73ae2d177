//! `SummarizationMiddleware`: past a budget of tokens or messages, the older messages
//! are replaced by a summary the model writes, the recent ones kept.

use std::sync::Arc;

use async_trait::async_trait;
use stategraph_checkpoint::Map;

use super::error::MiddlewareConfigError;
use super::middleware::{Hook, Middleware};
use super::state::{AgentState, AgentUpdate};
use super::summary_text::{
    buffer_string_xml, count_tokens_approximately, trim_for_summary, DEFAULT_SUMMARY_PROMPT,
};
use crate::messages::{Message, Role};
use crate::prebuilt::chat_model::ChatModel;
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// A budget: a number of tokens (counted as LangChain's `count_tokens_approximately`
/// counts them), a fraction of the model's input tokens, or a number of messages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContextSize {
    /// Python's `("tokens", n)`.
    Tokens(usize),
    /// Python's `("messages", n)`.
    Messages(usize),
    /// Python's `("fraction", x)`, `0 < x <= 1`: that part of the model's
    /// `max_input_tokens` (Python reads it from the model's profile; here
    /// [`SummarizationMiddleware::with_max_input_tokens`] gives it).
    Fraction(f64),
}

/// Summarizes the conversation before a model call once any `trigger` is reached,
/// keeping the last `keep` (20 messages by default) and never splitting an AI message
/// from its tool messages, as Python's `SummarizationMiddleware`: the stored
/// conversation becomes `RemoveMessage(REMOVE_ALL)`, a human message `Here is a summary
/// of the conversation to date:\n\n<summary>`, then the kept messages.
///
/// The model gets Python's request: [`DEFAULT_SUMMARY_PROMPT`] around the messages to
/// summarize, trimmed first to the last `trim_tokens_to_summarize` tokens (4000) and
/// written in Python's XML form.
#[derive(Clone)]
pub struct SummarizationMiddleware {
    model: Arc<dyn ChatModel>,
    trigger: Vec<ContextSize>,
    keep: ContextSize,
    summary_prompt: String,
    max_input_tokens: Option<usize>,
    trim_tokens: Option<usize>,
}

impl std::fmt::Debug for SummarizationMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummarizationMiddleware")
            .field("trigger", &self.trigger)
            .field("keep", &self.keep)
            .finish_non_exhaustive()
    }
}

impl SummarizationMiddleware {
    /// Summarizes with `model` when any of `trigger` is reached, keeping `keep`; a
    /// `Fraction` budget is refused (the model's input limit is unknown: see
    /// [`Self::with_max_input_tokens`]), as Python refuses it for a model without a
    /// profile.
    pub fn new(
        model: impl ChatModel,
        trigger: Vec<ContextSize>,
        keep: ContextSize,
    ) -> Result<Self, MiddlewareConfigError> {
        Self::build(Arc::new(model), None, trigger, keep)
    }

    /// [`Self::new`] for a model taking at most `max_input_tokens` (Python's
    /// `model.profile["max_input_tokens"]`), which `Fraction` budgets are parts of.
    pub fn with_max_input_tokens(
        model: impl ChatModel,
        max_input_tokens: usize,
        trigger: Vec<ContextSize>,
        keep: ContextSize,
    ) -> Result<Self, MiddlewareConfigError> {
        Self::build(Arc::new(model), Some(max_input_tokens), trigger, keep)
    }

    fn build(
        model: Arc<dyn ChatModel>,
        max_input_tokens: Option<usize>,
        trigger: Vec<ContextSize>,
        keep: ContextSize,
    ) -> Result<Self, MiddlewareConfigError> {
        let fail = |msg: String| Err(MiddlewareConfigError::new("SummarizationMiddleware", msg));
        for (size, name) in trigger
            .iter()
            .map(|t| (t, "trigger"))
            .chain([(&keep, "keep")])
        {
            match *size {
                ContextSize::Tokens(0) | ContextSize::Messages(0) => {
                    return fail(format!("{name} thresholds must be greater than 0, got 0."));
                }
                ContextSize::Fraction(x) if !(x > 0.0 && x <= 1.0) => {
                    return fail(format!(
                        "Fractional {name} values must be between 0 and 1, got {x}."
                    ));
                }
                ContextSize::Fraction(_) if max_input_tokens.is_none() => {
                    return fail("Model profile information is required to use fractional token limits, and is unavailable for the specified model. Please use absolute token counts instead, or pass the model's `max_input_tokens` (`SummarizationMiddleware::with_max_input_tokens`).".to_owned());
                }
                _ => {}
            }
        }
        Ok(SummarizationMiddleware {
            model,
            trigger,
            keep,
            summary_prompt: DEFAULT_SUMMARY_PROMPT.to_owned(),
            max_input_tokens,
            trim_tokens: Some(4000),
        })
    }

    /// The token budget the messages to summarize are trimmed to, keeping the last
    /// (Python's `trim_tokens_to_summarize`, 4000; `None`: no trimming).
    #[must_use]
    pub fn trim_tokens_to_summarize(mut self, tokens: Option<usize>) -> Self {
        self.trim_tokens = tokens;
        self
    }

    /// `fraction` of the model's input tokens (at least 1).
    fn part(&self, fraction: f64) -> usize {
        let limit = self.max_input_tokens.unwrap_or(0);
        ((limit as f64 * fraction) as usize).max(1)
    }

    /// The prompt, with `{messages}` where the conversation goes.
    #[must_use]
    pub fn summary_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.summary_prompt = prompt.into();
        self
    }

    fn should_summarize(&self, messages: &[Message]) -> bool {
        let tokens = count_tokens_approximately(messages);
        self.trigger.iter().any(|t| match *t {
            ContextSize::Tokens(n) => tokens >= n,
            ContextSize::Fraction(x) => tokens >= self.part(x),
            ContextSize::Messages(n) => messages.len() >= n,
        })
    }

    fn cutoff(&self, messages: &[Message]) -> usize {
        let target = match self.keep {
            ContextSize::Messages(n) => return safe_cutoff(messages, n),
            ContextSize::Tokens(n) => n,
            ContextSize::Fraction(x) => (self.max_input_tokens.unwrap_or(0) as f64 * x) as usize,
        };
        if count_tokens_approximately(messages) <= target {
            return 0;
        }
        let (mut left, mut right) = (0, messages.len());
        let mut candidate = messages.len();
        while left < right {
            let mid = (left + right) / 2;
            if count_tokens_approximately(&messages[mid..]) <= target {
                candidate = mid;
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        if candidate == messages.len() {
            candidate = left;
        }
        if candidate >= messages.len() {
            if messages.len() == 1 {
                return 0;
            }
            candidate = messages.len() - 1;
        }
        safe_cutoff_point(messages, candidate)
    }
}

/// Where to cut to keep `keep` messages.
fn safe_cutoff(messages: &[Message], keep: usize) -> usize {
    if messages.len() <= keep {
        return 0;
    }
    safe_cutoff_point(messages, messages.len() - keep)
}

/// `cutoff`, moved back to the AI message whose tool messages it would split from it.
fn safe_cutoff_point(messages: &[Message], cutoff: usize) -> usize {
    if cutoff >= messages.len() || messages[cutoff].role != Role::Tool {
        return cutoff;
    }
    let mut idx = cutoff;
    let mut ids = Vec::new();
    while idx < messages.len() && messages[idx].role == Role::Tool {
        ids.extend(messages[idx].tool_call_id.clone());
        idx += 1;
    }
    for i in (0..cutoff).rev() {
        let m = &messages[i];
        if m.role == Role::Ai
            && m.tool_calls
                .iter()
                .any(|c| c.id.as_ref().is_some_and(|id| ids.contains(id)))
        {
            return i;
        }
    }
    idx
}

#[async_trait]
impl Middleware for SummarizationMiddleware {
    fn name(&self) -> String {
        "SummarizationMiddleware".to_owned()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::BeforeModel]
    }

    async fn before_model(
        &self,
        state: &AgentState,
        ctx: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let messages = state.messages();
        if !self.should_summarize(messages) {
            return Ok(AgentUpdate::none());
        }
        let cutoff = self.cutoff(messages);
        if cutoff == 0 {
            return Ok(AgentUpdate::none());
        }
        let (old, kept) = messages.split_at(cutoff);
        let trimmed = match self.trim_tokens {
            Some(max) => trim_for_summary(old, max),
            None => old.to_vec(),
        };
        let text = if trimmed.is_empty() {
            "Previous conversation was too long to summarize.".to_owned()
        } else {
            let body = buffer_string_xml(&trimmed);
            let prompt = self.summary_prompt.replace("{messages}", &body);
            let answer = self
                .model
                .invoke(&[Message::human(prompt.trim_end())], ctx)
                .await?;
            answer.text().trim().to_owned()
        };
        let mut summary = Message::human(format!(
            "Here is a summary of the conversation to date:\n\n{text}"
        ));
        let mut kwargs = Map::new();
        kwargs.insert("lc_source", "summarization");
        summary.additional_kwargs = kwargs;
        let mut out = vec![Message::remove_all(), summary];
        out.extend_from_slice(kept);
        Ok(AgentUpdate::none().messages(out))
    }
}
