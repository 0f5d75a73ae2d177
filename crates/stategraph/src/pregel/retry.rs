//! Retry and timeout policies of nodes (LangGraph's `RetryPolicy`, `timeout`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::node_error::{NodeError, NodeErrorKind};

/// Decides whether a failure is worth another attempt.
pub type RetryOn = Arc<dyn Fn(&NodeError) -> bool + Send + Sync>;

/// How a failing node is retried: up to `max_attempts` runs in all, waiting
/// `min(max_interval, initial_interval * backoff_factor^(attempt-1))` (plus up to one
/// second of random jitter) between them, for the failures `retry_on` accepts.
#[derive(Clone)]
pub struct RetryPolicy {
    /// The wait before the second attempt.
    pub initial_interval: Duration,
    /// The factor the wait grows by after each attempt.
    pub backoff_factor: f64,
    /// The longest wait.
    pub max_interval: Duration,
    /// Attempts in all, the first one included.
    pub max_attempts: usize,
    /// Adds a random wait of up to one second.
    pub jitter: bool,
    /// Which failures are retried. The default retries every failure a node returns
    /// (timeouts included), but not a panic (a bug) or an `InvalidUpdateError`.
    pub retry_on: RetryOn,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            initial_interval: Duration::from_millis(500),
            backoff_factor: 2.0,
            max_interval: Duration::from_secs(128),
            max_attempts: 3,
            jitter: true,
            retry_on: Arc::new(default_retry_on),
        }
    }
}

impl fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("initial_interval", &self.initial_interval)
            .field("backoff_factor", &self.backoff_factor)
            .field("max_interval", &self.max_interval)
            .field("max_attempts", &self.max_attempts)
            .field("jitter", &self.jitter)
            .finish_non_exhaustive()
    }
}

/// The default `retry_on`: every failure but panics and invalid updates.
pub fn default_retry_on(e: &NodeError) -> bool {
    match &e.kind {
        NodeErrorKind::Failed { repr } => {
            // A wrong input (`TypeError`, as a `Send` payload that does not fit the node)
            // fails the same way every time: Python does not retry it either.
            !(repr.starts_with("Panic(")
                || repr.starts_with("InvalidUpdateError(")
                || repr.starts_with("TypeError("))
        }
        _ => false,
    }
}

impl RetryPolicy {
    /// A policy with `max_attempts` attempts and the default waits.
    pub fn attempts(max_attempts: usize) -> RetryPolicy {
        RetryPolicy {
            max_attempts: max_attempts.max(1),
            ..Default::default()
        }
    }

    /// Sets the first wait (builder style).
    pub fn initial_interval(mut self, d: Duration) -> Self {
        self.initial_interval = d;
        self
    }

    /// Sets the backoff factor (builder style).
    pub fn backoff_factor(mut self, f: f64) -> Self {
        self.backoff_factor = f;
        self
    }

    /// Turns jitter on or off (builder style).
    pub fn jitter(mut self, on: bool) -> Self {
        self.jitter = on;
        self
    }

    /// Sets which failures are retried (builder style).
    pub fn retry_on(mut self, f: impl Fn(&NodeError) -> bool + Send + Sync + 'static) -> Self {
        self.retry_on = Arc::new(f);
        self
    }

    /// The wait after attempt number `attempt` (1-based) failed.
    pub fn wait(&self, attempt: usize) -> Duration {
        let exp = self.backoff_factor.powi(attempt.saturating_sub(1) as i32);
        let base = self.initial_interval.as_secs_f64() * exp;
        let mut secs = base.min(self.max_interval.as_secs_f64());
        if self.jitter {
            secs += jitter_fraction();
        }
        Duration::from_secs_f64(secs.max(0.0))
    }
}

/// A uniform number in [0, 1) from the process's random state (no extra dependency).
fn jitter_fraction() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}
