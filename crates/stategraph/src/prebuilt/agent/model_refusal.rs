//! `ModelRefusalMiddleware`: a model's refusal made an error (langchain's
//! `model_refusal.py`).

use async_trait::async_trait;

use super::middleware::{Hook, Middleware, ModelHandler, ModelRequest, ModelResponse};
use crate::messages::Message;
use crate::pregel::node_error::NodeError;
use crate::Value;

/// Fails the model call with Python's `ModelRefusalError` when an answer holds a
/// refusal: a `{"type": "refusal", "refusal": ..}` content block, or OpenAI's
/// `additional_kwargs["refusal"]` (with `response_metadata.model_provider: "openai"`).
/// The error's text is Python's: `Model refused to produce the requested output
/// (category='..'): text`. List it after a
/// [`ModelFallbackMiddleware`](super::ModelFallbackMiddleware) so the fallback sees it.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelRefusalMiddleware;

impl ModelRefusalMiddleware {
    /// The middleware (it has no options).
    pub fn new() -> Self {
        ModelRefusalMiddleware
    }
}

/// The refusal blocks of `message`'s content, as Python's `content_blocks` gives them.
fn refusals(message: &Message) -> Vec<Value> {
    let mut found: Vec<Value> = message
        .content
        .as_list()
        .map(|blocks| {
            let refusal = |b: &&Value| b.get("type").and_then(Value::as_str) == Some("refusal");
            blocks.iter().filter(refusal).cloned().collect()
        })
        .unwrap_or_default();
    let openai = message
        .response_metadata
        .get("model_provider")
        .and_then(Value::as_str)
        == Some("openai");
    if let Some(text) = message.additional_kwargs.get("refusal").filter(|_| openai) {
        if text.as_str().is_some_and(|s| !s.is_empty()) {
            found.push(crate::map! {"type" => "refusal", "refusal" => text.clone()});
        }
    }
    found
}

/// Python's `ModelRefusalError.from_refusal` text.
fn refusal_error(block: &Value) -> NodeError {
    let mut text = "Model refused to produce the requested output".to_owned();
    let category = block.get("extras").and_then(|e| e.get("category"));
    if let Some(category) = category.filter(|c| python_truthy(c)) {
        text.push_str(&format!(" (category={})", category.repr()));
    }
    if let Some(refusal) = block.get("refusal").filter(|r| python_truthy(r)) {
        match refusal.as_str() {
            Some(s) => text.push_str(&format!(": {s}")),
            None => text.push_str(&format!(": {}", refusal.repr())),
        }
    }
    NodeError::named("ModelRefusalError", text)
}

/// Python's truth of a value (`None`, `False`, `0` and `""` are false).
fn python_truthy(v: &Value) -> bool {
    match v {
        Value::Nil | Value::Bool(false) | Value::Int(0) => false,
        _ => v.as_str().is_none_or(|s| !s.is_empty()),
    }
}

#[async_trait]
impl Middleware for ModelRefusalMiddleware {
    fn name(&self) -> String {
        "ModelRefusalMiddleware".to_owned()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::WrapModelCall]
    }

    async fn wrap_model_call(
        &self,
        request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        let response = handler.call(request).await?;
        for message in &response.messages {
            if let Some(block) = refusals(message).first() {
                return Err(refusal_error(block));
            }
        }
        Ok(response)
    }
}
