//! `ModelRetryMiddleware` (a model call retried with exponential backoff) and
//! `ModelFallbackMiddleware` (other models tried after a failure).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::middleware::{Hook, Middleware, ModelHandler, ModelRequest, ModelResponse};
use crate::messages::Message;
use crate::prebuilt::chat_model::ChatModel;
use crate::pregel::node_error::NodeError;

/// What happens when the last try fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RetryFailure {
    /// The agent goes on with an AI message saying the call failed (`"continue"`, the
    /// default): `Model call failed after 3 attempts with Kind: message`.
    #[default]
    Continue,
    /// The run fails with the model's error (`"error"`).
    Error,
}

/// Retries a failed model call (an interrupt is never retried), as Python's
/// `ModelRetryMiddleware`: `max_retries` more tries (2), waiting `initial_delay` (1 s)
/// times `backoff_factor` (2) to the power of the retry, at most `max_delay` (60 s),
/// ±25% when `jitter`.
#[derive(Clone, Debug)]
pub struct ModelRetryMiddleware {
    /// Tries after the first.
    pub max_retries: u32,
    /// What the last failure does.
    pub on_failure: RetryFailure,
    /// The factor of each wait over the one before.
    pub backoff_factor: f64,
    /// The first wait.
    pub initial_delay: Duration,
    /// The longest wait.
    pub max_delay: Duration,
    /// Each wait moved by up to 25% at random.
    pub jitter: bool,
}

impl Default for ModelRetryMiddleware {
    fn default() -> Self {
        ModelRetryMiddleware {
            max_retries: 2,
            on_failure: RetryFailure::Continue,
            backoff_factor: 2.0,
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            jitter: true,
        }
    }
}

impl ModelRetryMiddleware {
    /// The wait before retry `n` (0-based).
    fn delay(&self, n: u32) -> Duration {
        let base = self.initial_delay.as_secs_f64();
        let delay = if self.backoff_factor == 0.0 {
            base
        } else {
            base * self.backoff_factor.powi(n as i32)
        };
        let mut delay = delay.min(self.max_delay.as_secs_f64());
        if self.jitter && delay > 0.0 {
            let unit = f64::from(uuid::Uuid::new_v4().as_bytes()[0]) / 255.0;
            delay = (delay + delay * 0.25 * (2.0 * unit - 1.0)).max(0.0);
        }
        Duration::from_secs_f64(delay)
    }
}

/// A failure's Python type name and message, from its stored `Kind('message')`.
pub(crate) fn kind_and_message(repr: &str) -> (String, String) {
    let Some((kind, rest)) = repr.split_once('(') else {
        return ("Exception".to_owned(), repr.to_owned());
    };
    let inner = rest.strip_suffix(')').unwrap_or(rest);
    let inner = inner
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
        .unwrap_or(inner);
    (kind.to_owned(), inner.to_owned())
}

#[async_trait]
impl Middleware for ModelRetryMiddleware {
    fn name(&self) -> String {
        "ModelRetryMiddleware".to_owned()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::WrapModelCall]
    }

    async fn wrap_model_call(
        &self,
        request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        let mut attempt = 0;
        loop {
            let err = match handler.call(request.clone()).await {
                Ok(response) => return Ok(response),
                Err(e) => e,
            };
            let Some(repr) = err.repr().map(str::to_owned) else {
                return Err(err); // an interrupt or a parent command goes up
            };
            if attempt < self.max_retries {
                tokio::time::sleep(self.delay(attempt)).await;
                attempt += 1;
                continue;
            }
            if self.on_failure == RetryFailure::Error {
                return Err(err);
            }
            let (kind, message) = kind_and_message(&repr);
            let tries = attempt + 1;
            let word = if tries == 1 { "attempt" } else { "attempts" };
            let text = format!("Model call failed after {tries} {word} with {kind}: {message}");
            return Ok(ModelResponse::message(Message::ai(text)));
        }
    }
}

/// Tries `models` in turn when the agent's model fails (an interrupt is not a failure),
/// as Python's `ModelFallbackMiddleware`; the last error when every one fails.
#[derive(Clone)]
pub struct ModelFallbackMiddleware {
    models: Vec<Arc<dyn ChatModel>>,
}

impl std::fmt::Debug for ModelFallbackMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelFallbackMiddleware")
            .field("models", &self.models.len())
            .finish()
    }
}

impl ModelFallbackMiddleware {
    /// Falls back to `first`, then to each of `more`.
    pub fn new(first: impl ChatModel, more: Vec<Arc<dyn ChatModel>>) -> Self {
        let mut models: Vec<Arc<dyn ChatModel>> = vec![Arc::new(first)];
        models.extend(more);
        ModelFallbackMiddleware { models }
    }
}

#[async_trait]
impl Middleware for ModelFallbackMiddleware {
    fn name(&self) -> String {
        "ModelFallbackMiddleware".to_owned()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::WrapModelCall]
    }

    async fn wrap_model_call(
        &self,
        request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        let mut last = match handler.call(request.clone()).await {
            Ok(response) => return Ok(response),
            Err(e) if e.repr().is_none() => return Err(e),
            Err(e) => e,
        };
        for model in &self.models {
            let mut fallback = request.clone();
            fallback.model = model.clone();
            match handler.call(fallback).await {
                Ok(response) => return Ok(response),
                Err(e) if e.repr().is_none() => return Err(e),
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}
