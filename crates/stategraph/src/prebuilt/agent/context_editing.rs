//! `ContextEditingMiddleware` with `ClearToolUsesEdit`: past a number of tokens, the
//! model is sent older tool results replaced by a placeholder (langchain's
//! `agents/middleware/context_editing.py`). The stored conversation is not changed.

use std::sync::Arc;

use async_trait::async_trait;
use stategraph_checkpoint::{Map, Value};

use super::middleware::{Hook, Middleware, ModelHandler, ModelRequest, ModelResponse};
use super::summary_text::count_tokens_approximately;
use crate::messages::{Message, Role};
use crate::pregel::node_error::NodeError;

/// Counts the tokens of a conversation.
pub type TokenCounter = Arc<dyn Fn(&[Message]) -> usize + Send + Sync>;

/// Clears older tool results once the conversation passes `trigger` tokens, as Python's
/// `ClearToolUsesEdit` (its defaults: `trigger` 100 000, `keep` 3, `clear_at_least` 0,
/// placeholder `[cleared]`). A cleared tool message gets the placeholder as content,
/// no artifact, and `response_metadata["context_editing"] = {"cleared": true,
/// "strategy": "clear_tool_uses"}`; with `clear_tool_inputs` its call's arguments on
/// the AI message become `{}` and that message's `response_metadata["context_editing"]
/// ["cleared_tool_inputs"]` lists the ids cleared.
#[derive(Clone, Debug, PartialEq)]
pub struct ClearToolUsesEdit {
    /// Clear when the conversation has more tokens than this.
    pub trigger: usize,
    /// Stop once at least this many tokens were cleared (0: clear every candidate).
    pub clear_at_least: usize,
    /// The number of most recent tool results never cleared.
    pub keep: usize,
    /// Whether the cleared results' calls lose their arguments too.
    pub clear_tool_inputs: bool,
    /// Tools whose results are never cleared.
    pub exclude_tools: Vec<String>,
    /// The content a cleared tool message gets.
    pub placeholder: String,
}

impl Default for ClearToolUsesEdit {
    fn default() -> Self {
        ClearToolUsesEdit {
            trigger: 100_000,
            clear_at_least: 0,
            keep: 3,
            clear_tool_inputs: false,
            exclude_tools: Vec::new(),
            placeholder: "[cleared]".to_owned(),
        }
    }
}

fn context_entry(metadata: &Map) -> Map {
    metadata
        .get("context_editing")
        .and_then(Value::as_map)
        .cloned()
        .unwrap_or_default()
}

impl ClearToolUsesEdit {
    /// Applies the edit to `messages` in place.
    pub fn apply(&self, messages: &mut [Message], count_tokens: &dyn Fn(&[Message]) -> usize) {
        let tokens = count_tokens(messages);
        if tokens <= self.trigger {
            return;
        }
        let mut candidates: Vec<usize> = (0..messages.len())
            .filter(|&i| messages[i].role == Role::Tool)
            .collect();
        candidates.truncate(candidates.len().saturating_sub(self.keep));
        for idx in candidates {
            let tool = &messages[idx];
            let cleared = context_entry(&tool.response_metadata)
                .get("cleared")
                .is_some_and(truthy);
            if cleared {
                continue;
            }
            let Some(ai) = messages[..idx].iter().rposition(|m| m.role == Role::Ai) else {
                continue;
            };
            let call_id = tool.tool_call_id.clone();
            let Some(call) = messages[ai].tool_calls.iter().find(|c| c.id == call_id) else {
                continue;
            };
            let name = tool
                .name
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| call.name.clone());
            if self.exclude_tools.contains(&name) {
                continue;
            }
            let mut edited = tool.clone();
            edited.artifact = Value::Nil;
            edited.content = Value::from(self.placeholder.as_str());
            let mut entry = Map::new();
            entry.insert("cleared", true);
            entry.insert("strategy", "clear_tool_uses");
            edited
                .response_metadata
                .insert("context_editing", Value::Map(entry));
            messages[idx] = edited;
            if self.clear_tool_inputs {
                clear_tool_input(&mut messages[ai], call_id.as_deref());
            }
            if self.clear_at_least > 0 {
                let cleared = tokens.saturating_sub(count_tokens(messages));
                if cleared >= self.clear_at_least {
                    break;
                }
            }
        }
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Nil => false,
        Value::Bool(b) => *b,
        other => other.as_i64().is_none_or(|n| n != 0),
    }
}

/// The call `call_id` of `ai` without arguments, and the id noted in its metadata.
fn clear_tool_input(ai: &mut Message, call_id: Option<&str>) {
    let mut any = false;
    for call in ai
        .tool_calls
        .iter_mut()
        .filter(|c| c.id.as_deref() == call_id)
    {
        call.args = Value::Map(Map::new());
        any = true;
    }
    if !any {
        return;
    }
    let mut entry = context_entry(&ai.response_metadata);
    let mut ids: Vec<String> = entry
        .get("cleared_tool_inputs")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    ids.push(call_id.unwrap_or_default().to_owned());
    ids.sort();
    ids.dedup();
    entry.insert(
        "cleared_tool_inputs",
        Value::list(ids.into_iter().map(Value::from).collect::<Vec<_>>()),
    );
    ai.response_metadata
        .insert("context_editing", Value::Map(entry));
}

/// Edits what the model is sent once the conversation grows (Python's
/// `ContextEditingMiddleware`): before each model call, the request's messages (not the
/// system message) are copied and each edit applied in turn, tokens counted as
/// LangChain's `count_tokens_approximately` (or by [`ContextEditingMiddleware::token_counter`]).
/// Not done: `token_count_method="model"` (a [`ChatModel`](crate::prebuilt::ChatModel)
/// has no token counter).
#[derive(Clone)]
pub struct ContextEditingMiddleware {
    edits: Vec<ClearToolUsesEdit>,
    token_counter: TokenCounter,
}

impl std::fmt::Debug for ContextEditingMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextEditingMiddleware")
            .field("edits", &self.edits)
            .finish_non_exhaustive()
    }
}

impl Default for ContextEditingMiddleware {
    fn default() -> Self {
        ContextEditingMiddleware::new(Vec::new())
    }
}

impl ContextEditingMiddleware {
    /// Applies `edits` in order (none given: one [`ClearToolUsesEdit::default`], as Python).
    pub fn new(edits: Vec<ClearToolUsesEdit>) -> Self {
        let edits = if edits.is_empty() {
            vec![ClearToolUsesEdit::default()]
        } else {
            edits
        };
        ContextEditingMiddleware {
            edits,
            token_counter: Arc::new(count_tokens_approximately),
        }
    }

    /// Counts tokens with `counter` (Python's `token_counter=`).
    pub fn token_counter(
        mut self,
        counter: impl Fn(&[Message]) -> usize + Send + Sync + 'static,
    ) -> Self {
        self.token_counter = Arc::new(counter);
        self
    }
}

#[async_trait]
impl Middleware for ContextEditingMiddleware {
    fn name(&self) -> String {
        "ContextEditingMiddleware".into()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::WrapModelCall]
    }

    async fn wrap_model_call(
        &self,
        mut request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        if !request.messages.is_empty() {
            for edit in &self.edits {
                edit.apply(&mut request.messages, &*self.token_counter);
            }
        }
        handler.call(request).await
    }
}
