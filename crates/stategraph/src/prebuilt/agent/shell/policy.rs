//! The shell tool's execution policy (Python's `HostExecutionPolicy`) and its
//! redaction rules (`RedactionRule` with a regex detector).

use regex::Regex;
use serde_json::{json, Value as Json};

/// A shell middleware configuration Python refuses (its `ValueError`s).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellConfigError {
    /// An empty `shell_command`.
    #[error("Shell command must contain at least one argument.")]
    EmptyShellCommand,
    /// A redaction rule's detector is not a valid regular expression.
    #[error("redaction rule {pii_type}: invalid detector pattern: {message}")]
    BadDetector {
        /// The rule's PII type.
        pii_type: String,
        /// The `regex` crate's message.
        message: String,
    },
    /// A timeout that is not a positive number of seconds.
    #[error("{0} must be a positive number of seconds")]
    BadTimeout(&'static str),
}

/// Python's `HostExecutionPolicy`: the shell runs on this host, in a process group of
/// its own, with these limits. Python's `cpu_time_seconds` / `memory_bytes` (rlimits)
/// are not offered.
#[derive(Debug, Clone, PartialEq)]
pub struct HostExecutionPolicy {
    /// Seconds a command may run before it is cut off and the session restarted (30).
    pub command_timeout: f64,
    /// Seconds each startup command may run (30).
    pub startup_timeout: f64,
    /// Seconds the shell gets to exit before it is killed (10).
    pub termination_timeout: f64,
    /// Output lines kept; the rest are counted (100).
    pub max_output_lines: usize,
    /// Output bytes kept, if limited (no limit).
    pub max_output_bytes: Option<usize>,
    /// Start the shell in a new process group, killed as a whole (true).
    pub create_process_group: bool,
}

impl Default for HostExecutionPolicy {
    fn default() -> Self {
        HostExecutionPolicy {
            command_timeout: 30.0,
            startup_timeout: 30.0,
            termination_timeout: 10.0,
            max_output_lines: 100,
            max_output_bytes: None,
            create_process_group: true,
        }
    }
}

impl HostExecutionPolicy {
    /// Checks the timeouts are positive (an invalid one is a [`ShellConfigError`]).
    pub(super) fn check(&self) -> Result<(), ShellConfigError> {
        for (name, v) in [
            ("command_timeout", self.command_timeout),
            ("startup_timeout", self.startup_timeout),
            ("termination_timeout", self.termination_timeout),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(ShellConfigError::BadTimeout(name));
            }
        }
        Ok(())
    }
}

/// What a [`RedactionRule`] does with what it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedactionStrategy {
    /// Replace each match by `[REDACTED_<TYPE>]` (Python's `"redact"`).
    Redact,
    /// Answer `Output blocked: detected <type>.` instead of the output (`"block"`).
    Block,
}

/// Python's `RedactionRule(pii_type, strategy, detector=<regex>)`: applied to a
/// command's output before the model reads it. Python's built-in detectors (email,
/// credit card, ...) and the `mask` / `hash` strategies are not offered.
#[derive(Debug, Clone)]
pub struct RedactionRule {
    pii_type: String,
    strategy: RedactionStrategy,
    detector: Regex,
}

impl RedactionRule {
    /// A rule finding `pattern` (Rust `regex` syntax) as `pii_type`.
    pub fn new(
        pii_type: impl Into<String>,
        strategy: RedactionStrategy,
        pattern: &str,
    ) -> Result<RedactionRule, ShellConfigError> {
        let pii_type = pii_type.into();
        let detector = Regex::new(pattern).map_err(|e| ShellConfigError::BadDetector {
            pii_type: pii_type.clone(),
            message: e.to_string(),
        })?;
        Ok(RedactionRule {
            pii_type,
            strategy,
            detector,
        })
    }

    /// Python's `PIIMatch`es in `text` (offsets in characters).
    fn matches(&self, text: &str) -> Vec<(usize, usize, String)> {
        self.detector
            .find_iter(text)
            .map(|m| {
                let start = text[..m.start()].chars().count();
                (
                    start,
                    start + m.as_str().chars().count(),
                    m.as_str().to_owned(),
                )
            })
            .collect()
    }
}

/// Output blocked by a `Block` rule: its type and matches (as JSON `PIIMatch`es).
pub(super) struct Blocked {
    pub(super) pii_type: String,
    pub(super) matches: Json,
}

/// Applies `rules` in order: the redacted text and the matches by type, or the
/// first blocking rule that matched.
pub(super) fn redact(rules: &[RedactionRule], text: &str) -> Result<(String, Json), Blocked> {
    let mut out = text.to_owned();
    let mut by_type = serde_json::Map::new();
    for rule in rules {
        let found = rule.matches(&out);
        if found.is_empty() {
            continue;
        }
        let as_json: Vec<Json> = found
            .iter()
            .map(|(s, e, v)| json!({"type": rule.pii_type, "value": v, "start": s, "end": e}))
            .collect();
        if rule.strategy == RedactionStrategy::Block {
            return Err(Blocked {
                pii_type: rule.pii_type.clone(),
                matches: Json::Array(as_json),
            });
        }
        let mut chars: Vec<char> = out.chars().collect();
        let tag: Vec<char> = format!("[REDACTED_{}]", rule.pii_type.to_uppercase())
            .chars()
            .collect();
        for (s, e, _) in found.iter().rev() {
            chars.splice(*s..*e, tag.iter().copied());
        }
        out = chars.into_iter().collect();
        let entry = by_type
            .entry(rule.pii_type.clone())
            .or_insert_with(|| Json::Array(Vec::new()));
        if let Json::Array(list) = entry {
            list.extend(as_json);
        }
    }
    Ok((out, Json::Object(by_type)))
}
