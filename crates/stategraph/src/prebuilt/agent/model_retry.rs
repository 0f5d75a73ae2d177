//! `ModelRetryMiddleware` (a model call retried with exponential backoff) and
//! `ModelFallbackMiddleware` (other models tried after a failure).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::error::MiddlewareConfigError;
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

/// Which failures [`ModelRetryMiddleware`] retries (Python's `retry_on`: a tuple of
/// exception types or a callable over the exception).
#[derive(Clone, Default)]
pub enum RetryOn {
    /// Every failure (Python's default, `(Exception,)`).
    #[default]
    All,
    /// Failures of these Python kinds (`"ValueError"`, `"TimeoutError"`, ...: the type
    /// name of the stored `Kind('message')`, matched exactly, without subclasses).
    Kinds(Vec<String>),
    /// Failures the closure says yes to (Python's callable `retry_on`).
    Predicate(Arc<dyn Fn(&NodeError) -> bool + Send + Sync>),
}

impl RetryOn {
    /// Failures of any of `kinds`.
    pub fn kinds<I, S>(kinds: I) -> RetryOn
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        RetryOn::Kinds(kinds.into_iter().map(Into::into).collect())
    }

    /// Failures `f` says yes to.
    pub fn predicate(f: impl Fn(&NodeError) -> bool + Send + Sync + 'static) -> RetryOn {
        RetryOn::Predicate(Arc::new(f))
    }

    /// Whether `err` (a failure whose stored form is `repr`) is retried.
    fn retries(&self, err: &NodeError, repr: &str) -> bool {
        match self {
            RetryOn::All => true,
            RetryOn::Kinds(kinds) => {
                let (kind, _) = kind_and_message(repr);
                kinds.contains(&kind)
            }
            RetryOn::Predicate(f) => f(err),
        }
    }
}

impl std::fmt::Debug for RetryOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RetryOn::All => f.write_str("All"),
            RetryOn::Kinds(kinds) => f.debug_tuple("Kinds").field(kinds).finish(),
            RetryOn::Predicate(_) => f.write_str("Predicate(..)"),
        }
    }
}

/// Retries a failed model call (an interrupt is never retried), as Python's
/// `ModelRetryMiddleware`: `max_retries` more tries (2), waiting `initial_delay` (1 s)
/// times `backoff_factor` (2) to the power of the retry, at most `max_delay` (60 s),
/// ±25% when `jitter`; only the failures `retry_on` names (all by default): another
/// fails the call at once, whatever `on_failure` says.
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
    /// The failures retried.
    pub retry_on: RetryOn,
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
            retry_on: RetryOn::All,
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
            if !self.retry_on.retries(&err, &repr) {
                return Err(err); // not retryable: up at once, `on_failure` not consulted
            }
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

    /// Falls back to the models `names` give, in turn, each made by
    /// [`init_chat_model`](crate::models::init_chat_model) (`"openai:gpt-4o-mini"`), as
    /// Python's `ModelFallbackMiddleware("openai:gpt-4o-mini", ...)`; none given, or a
    /// name it cannot make, is refused.
    #[cfg(feature = "models")]
    pub fn from_names<I, S>(names: I) -> Result<Self, MiddlewareConfigError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut models = Vec::new();
        for name in names {
            let name = name.as_ref();
            let model = crate::models::init_chat_model(name).map_err(|e| {
                MiddlewareConfigError::new(
                    "ModelFallbackMiddleware",
                    format!("model {name:?}: {e}"),
                )
            })?;
            models.push(model);
        }
        if models.is_empty() {
            let msg = "at least one fallback model is needed";
            return Err(MiddlewareConfigError::new("ModelFallbackMiddleware", msg));
        }
        Ok(ModelFallbackMiddleware { models })
    }

    /// Falls back to `models`, in turn (models already shared).
    pub fn from_models(models: Vec<Arc<dyn ChatModel>>) -> Self {
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
