//! `ToolRetryMiddleware`: a failing tool call retried with exponential backoff, and what
//! the last failure gives (langchain's `tool_retry.py` with `_retry.py`).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::error::MiddlewareConfigError;
use super::middleware::{Hook, Middleware, ToolCallRequest, ToolHandler};
use super::model_retry::kind_and_message;
use crate::messages::Message;
use crate::pregel::node_error::NodeError;

type Predicate = dyn Fn(&NodeError) -> bool + Send + Sync;
type Formatter = dyn Fn(&NodeError) -> String + Send + Sync;

/// What a tool call's last failed try gives (Python's `on_failure`).
#[derive(Clone, Default)]
pub enum ToolRetryFailure {
    /// An error tool message the model reads (`"continue"`, the default):
    /// `Tool 'NAME' failed after 3 attempts with Kind: message. Please try again.`
    #[default]
    Continue,
    /// The tool's error fails the run (`"error"`).
    Error,
    /// An error tool message with this text of the error (Python's callable).
    Message(Arc<Formatter>),
}

impl std::fmt::Debug for ToolRetryFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ToolRetryFailure::Continue => "Continue",
            ToolRetryFailure::Error => "Error",
            ToolRetryFailure::Message(_) => "Message(..)",
        })
    }
}

/// Retries a failed tool call (an interrupt or a parent command is never retried), as
/// Python's `ToolRetryMiddleware`: `max_retries` more tries (2), waiting
/// `initial_delay` (1 s) times `backoff_factor` (2) to the power of the retry, at most
/// `max_delay` (60 s), ±25% when `jitter`; only for the tools named in
/// [`ToolRetryMiddleware::tools`] when given, and only errors that
/// [`ToolRetryMiddleware::retry_on`] accepts (the others fail the run at once).
///
/// ```
/// use stategraph::prebuilt::agent::{ToolRetryFailure, ToolRetryMiddleware};
/// let retry = ToolRetryMiddleware::new()
///     .max_retries(3)
///     .delays(0.5, 10.0, 1.5)
///     .unwrap()
///     .tools(["search"])
///     .retry_on_kinds(["TimeoutError"])
///     .on_failure(ToolRetryFailure::Error);
/// assert!(ToolRetryMiddleware::new().delays(-1.0, 60.0, 2.0).is_err());
/// ```
#[derive(Clone)]
pub struct ToolRetryMiddleware {
    max_retries: u32,
    tools: Option<Vec<String>>,
    retry_on: Option<Arc<Predicate>>,
    on_failure: ToolRetryFailure,
    backoff_factor: f64,
    initial_delay: f64,
    max_delay: f64,
    jitter: bool,
}

impl std::fmt::Debug for ToolRetryMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRetryMiddleware")
            .field("max_retries", &self.max_retries)
            .field("tools", &self.tools)
            .field("on_failure", &self.on_failure)
            .field("backoff_factor", &self.backoff_factor)
            .field("initial_delay", &self.initial_delay)
            .field("max_delay", &self.max_delay)
            .field("jitter", &self.jitter)
            .finish_non_exhaustive()
    }
}

impl Default for ToolRetryMiddleware {
    fn default() -> Self {
        ToolRetryMiddleware {
            max_retries: 2,
            tools: None,
            retry_on: None,
            on_failure: ToolRetryFailure::Continue,
            backoff_factor: 2.0,
            initial_delay: 1.0,
            max_delay: 60.0,
            jitter: true,
        }
    }
}

/// Python's `validate_retry_params` for the delays (a count cannot be negative here).
pub(crate) fn check_delays(
    middleware: &'static str,
    initial_delay: f64,
    max_delay: f64,
    backoff_factor: f64,
) -> Result<(), MiddlewareConfigError> {
    for (name, value) in [
        ("initial_delay", initial_delay),
        ("max_delay", max_delay),
        ("backoff_factor", backoff_factor),
    ] {
        if value.is_nan() || value < 0.0 {
            return Err(MiddlewareConfigError::new(
                middleware,
                format!("{name} must be >= 0"),
            ));
        }
    }
    Ok(())
}

/// Python's `calculate_delay`: the wait before retry `n` (0-based), in seconds.
pub(crate) fn backoff(n: u32, factor: f64, initial: f64, max: f64, jitter: bool) -> Duration {
    let delay = if factor == 0.0 {
        initial
    } else {
        initial * factor.powi(i32::try_from(n).unwrap_or(i32::MAX))
    };
    let mut delay = delay.min(max);
    if jitter && delay > 0.0 {
        let unit = f64::from(uuid::Uuid::new_v4().as_bytes()[0]) / 255.0;
        delay = (delay + delay * 0.25 * (2.0 * unit - 1.0)).max(0.0);
    }
    Duration::try_from_secs_f64(delay).unwrap_or(Duration::MAX)
}

impl ToolRetryMiddleware {
    /// Python's defaults: 2 retries of every tool, on every error, an error tool
    /// message after the last.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tries after the first (Python's `max_retries`).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// The waits, in seconds: the first, the longest, and the factor of each over the
    /// one before (`0` for a constant wait). A negative one is a
    /// [`MiddlewareConfigError`] (Python's `ValueError`: "initial_delay must be >= 0").
    pub fn delays(
        mut self,
        initial_delay: f64,
        max_delay: f64,
        backoff_factor: f64,
    ) -> Result<Self, MiddlewareConfigError> {
        check_delays(
            "ToolRetryMiddleware",
            initial_delay,
            max_delay,
            backoff_factor,
        )?;
        (self.initial_delay, self.max_delay) = (initial_delay, max_delay);
        self.backoff_factor = backoff_factor;
        Ok(self)
    }

    /// Each wait moved by up to 25% at random (the default), or not.
    pub fn jitter(mut self, jitter: bool) -> Self {
        self.jitter = jitter;
        self
    }

    /// Retries only the calls of these tools (Python's `tools=[..]`).
    pub fn tools<I: IntoIterator<Item = T>, T: Into<String>>(mut self, names: I) -> Self {
        self.tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Retries only the errors `retry_on` accepts (Python's callable `retry_on`); the
    /// others fail the run at once, without `on_failure`.
    pub fn retry_on(
        mut self,
        retry_on: impl Fn(&NodeError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.retry_on = Some(Arc::new(retry_on));
        self
    }

    /// Retries only errors of these Python types (`retry_on=(TimeoutError,)`, matched by
    /// name: a subclass is not its base here).
    pub fn retry_on_kinds<I: IntoIterator<Item = T>, T: Into<String>>(self, kinds: I) -> Self {
        let kinds: Vec<String> = kinds.into_iter().map(Into::into).collect();
        self.retry_on(move |err| {
            let kind = err.repr().map(|r| kind_and_message(r).0);
            kind.is_some_and(|k| kinds.contains(&k))
        })
    }

    /// What the last failure gives.
    pub fn on_failure(mut self, on_failure: ToolRetryFailure) -> Self {
        self.on_failure = on_failure;
        self
    }

    /// The failure's error tool message, or the error itself (`on_failure="error"`).
    fn fail(
        &self,
        request: &ToolCallRequest,
        err: NodeError,
        tries: u32,
    ) -> Result<Message, NodeError> {
        let repr = err.repr().unwrap_or_default().to_owned();
        let text = match &self.on_failure {
            ToolRetryFailure::Error => return Err(err),
            ToolRetryFailure::Message(format) => format(&err),
            ToolRetryFailure::Continue => {
                let (kind, message) = kind_and_message(&repr);
                let word = if tries == 1 { "attempt" } else { "attempts" };
                let name = &request.call.name;
                format!("Tool '{name}' failed after {tries} {word} with {kind}: {message}. Please try again.")
            }
        };
        Ok(error_tool_message(request, text))
    }
}

/// An error tool message answering `request`'s call.
pub(crate) fn error_tool_message(
    request: &ToolCallRequest,
    content: impl Into<crate::Value>,
) -> Message {
    let id = request.call.id.clone().unwrap_or_default();
    let mut message = Message::tool(content, id).with_name(request.call.name.clone());
    if request.call.id.is_none() {
        message.tool_call_id = None;
    }
    message.status = "error".to_owned();
    message
}

#[async_trait]
impl Middleware for ToolRetryMiddleware {
    fn name(&self) -> String {
        "ToolRetryMiddleware".to_owned()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::WrapToolCall]
    }

    async fn wrap_tool_call(
        &self,
        request: ToolCallRequest,
        handler: ToolHandler,
    ) -> Result<Message, NodeError> {
        if let Some(tools) = &self.tools {
            if !tools.contains(&request.call.name) {
                return handler.call(request).await;
            }
        }
        let mut attempt = 0;
        loop {
            let err = match handler.call(request.clone()).await {
                Ok(message) => return Ok(message),
                Err(e) if e.repr().is_none() => return Err(e), // an interrupt goes up
                Err(e) => e,
            };
            if self.retry_on.as_ref().is_some_and(|accept| !accept(&err)) {
                return Err(err);
            }
            if attempt >= self.max_retries {
                return self.fail(&request, err, attempt + 1);
            }
            let wait = backoff(
                attempt,
                self.backoff_factor,
                self.initial_delay,
                self.max_delay,
                self.jitter,
            );
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            attempt += 1;
        }
    }
}
