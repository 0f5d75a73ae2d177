//! `PIIMiddleware`: finds one type of personal data in the conversation and blocks,
//! redacts, masks or hashes it (langchain's `agents/middleware/pii.py`).

use async_trait::async_trait;
use stategraph_checkpoint::{Map, Value};

use super::error::MiddlewareConfigError;
use super::middleware::{Hook, Middleware};
use super::redaction::{apply_strategy, Detector, RedactionStrategy, BUILTIN_PII_TYPES};
use super::state::{AgentState, AgentUpdate, JumpTo};
use crate::messages::{Message, Role};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// Handles one type of PII, as Python's `PIIMiddleware(pii_type, strategy=..,
/// detector=.., apply_to_input=.., apply_to_output=.., apply_to_tool_results=..)`:
/// before each model call, the last human message (`apply_to_input`, on by default)
/// and the tool messages after the last AI message (`apply_to_tool_results`); after
/// each model call, the last AI message's content (`apply_to_output`). The changed
/// messages are stored in place (same ids); with [`RedactionStrategy::Block`] the hook
/// fails with `PIIDetectionError`.
///
/// Its name is `PIIMiddleware[<type>]`, so several can be listed. Not done: Python's
/// stream transformer (the redaction of streamed deltas and tool events when
/// `apply_to_output` or `apply_to_tool_results` is on); the stored thread is the same.
///
/// ```
/// use stategraph::prebuilt::agent::{apply_strategy, detect_email, PiiMiddleware, RedactionStrategy};
///
/// let text = "Mail jo@corp.com.";
/// let hashed = apply_strategy(text, &detect_email(text), RedactionStrategy::Hash).unwrap();
/// assert_eq!(hashed, "Mail <email_hash:2cfa1c66>."); // Python's, for the same text
/// let pii = PiiMiddleware::new("email").unwrap().strategy(RedactionStrategy::Mask);
/// # let _ = pii;
/// assert!(PiiMiddleware::new("phone").is_err());
/// ```
#[derive(Clone, Debug)]
pub struct PiiMiddleware {
    pii_type: String,
    strategy: RedactionStrategy,
    detector: Detector,
    apply_to_input: bool,
    apply_to_output: bool,
    apply_to_tool_results: bool,
}

impl PiiMiddleware {
    /// Handles the built-in type `pii_type` (`email`, `credit_card`, `ip`,
    /// `mac_address`, `url`) with the `redact` strategy; another name is a
    /// [`MiddlewareConfigError`] (give it a detector with [`PiiMiddleware::with_detector`]
    /// or [`PiiMiddleware::with_regex`]).
    pub fn new(pii_type: &str) -> Result<PiiMiddleware, MiddlewareConfigError> {
        let detector = Detector::builtin(pii_type).ok_or_else(|| {
            let known = BUILTIN_PII_TYPES.map(|t| format!("'{t}'")).join(", ");
            MiddlewareConfigError::new(
                "PIIMiddleware",
                format!("Unknown PII type: {pii_type}. Must be one of [{known}] or provide a custom detector."),
            )
        })?;
        Ok(PiiMiddleware::with_detector(pii_type, detector))
    }

    /// Handles `pii_type` found by `pattern` (a pattern the `regex` crate refuses is a
    /// [`MiddlewareConfigError`]).
    pub fn with_regex(
        pii_type: &str,
        pattern: &str,
    ) -> Result<PiiMiddleware, MiddlewareConfigError> {
        Ok(PiiMiddleware::with_detector(
            pii_type,
            Detector::regex(pii_type, pattern)?,
        ))
    }

    /// Handles `pii_type` found by `detector` (matches with an empty type get `pii_type`).
    pub fn with_detector(pii_type: &str, detector: Detector) -> PiiMiddleware {
        PiiMiddleware {
            pii_type: pii_type.to_owned(),
            strategy: RedactionStrategy::Redact,
            detector,
            apply_to_input: true,
            apply_to_output: false,
            apply_to_tool_results: false,
        }
    }

    /// How matches are handled (`redact` by default).
    pub fn strategy(mut self, strategy: RedactionStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Whether the last human message is checked before each model call (on by default).
    pub fn apply_to_input(mut self, on: bool) -> Self {
        self.apply_to_input = on;
        self
    }

    /// Whether the last AI message is checked after each model call (off by default).
    pub fn apply_to_output(mut self, on: bool) -> Self {
        self.apply_to_output = on;
        self
    }

    /// Whether the tool messages after the last AI message are checked before each
    /// model call (off by default).
    pub fn apply_to_tool_results(mut self, on: bool) -> Self {
        self.apply_to_tool_results = on;
        self
    }

    /// The type handled.
    pub fn pii_type(&self) -> &str {
        &self.pii_type
    }

    fn redact(&self, text: &str) -> Result<Option<String>, NodeError> {
        let mut matches = self.detector.detect(text);
        if matches.is_empty() {
            return Ok(None);
        }
        for m in matches.iter_mut().filter(|m| m.pii_type.is_empty()) {
            m.pii_type.clone_from(&self.pii_type);
        }
        apply_strategy(text, &matches, self.strategy)
            .map(Some)
            .map_err(|e| NodeError::named("PIIDetectionError", e.to_string()))
    }

    /// The content redacted (a string, or the `text` of each block), `None` when
    /// nothing matched.
    fn process_content(&self, content: &Value) -> Result<Option<Value>, NodeError> {
        if let Some(text) = content.as_str() {
            return Ok(self.redact(text)?.map(Value::from));
        }
        let Some(blocks) = content.as_list() else {
            return Ok(None);
        };
        let mut changed = false;
        let mut out = Vec::with_capacity(blocks.len());
        for block in blocks {
            let text = block.as_str().or_else(|| {
                block
                    .as_map()
                    .and_then(|m| m.get("text"))
                    .and_then(Value::as_str)
            });
            let redacted = match text {
                Some(t) => self.redact(t)?,
                None => None,
            };
            out.push(match (redacted, block.as_map()) {
                (None, _) => block.clone(),
                (Some(r), Some(map)) => {
                    let mut map: Map = map.clone();
                    map.insert("text", r);
                    Value::Map(map)
                }
                (Some(r), None) => Value::from(r),
            });
            changed |= out.last() != Some(block);
        }
        Ok(changed.then(|| Value::list(out)))
    }

    /// `message` with its content processed, `None` when unchanged or empty.
    fn process_message(&self, message: &Message) -> Result<Option<Message>, NodeError> {
        if is_empty(&message.content) {
            return Ok(None);
        }
        Ok(self
            .process_content(&message.content)?
            .map(|content| Message {
                content,
                ..message.clone()
            }))
    }
}

fn is_empty(content: &Value) -> bool {
    content.is_nil()
        || content.as_str().is_some_and(str::is_empty)
        || content.as_list().is_some_and(<[Value]>::is_empty)
}

#[async_trait]
impl Middleware for PiiMiddleware {
    fn name(&self) -> String {
        format!("PIIMiddleware[{}]", self.pii_type)
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::BeforeModel, Hook::AfterModel]
    }

    fn can_jump_to(&self, hook: Hook) -> Vec<JumpTo> {
        match hook {
            Hook::BeforeModel => vec![JumpTo::End],
            _ => Vec::new(),
        }
    }

    async fn before_model(
        &self,
        state: &AgentState,
        _: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let messages = state.messages();
        let mut changed = Vec::new();
        if self.apply_to_input {
            if let Some(i) = messages.iter().rposition(|m| m.role == Role::Human) {
                changed.extend(self.process_message(&messages[i])?.map(|m| (i, m)));
            }
        }
        if self.apply_to_tool_results {
            if let Some(ai) = messages.iter().rposition(|m| m.role == Role::Ai) {
                for (i, m) in messages.iter().enumerate().skip(ai + 1) {
                    if m.role == Role::Tool {
                        changed.extend(self.process_message(m)?.map(|m| (i, m)));
                    }
                }
            }
        }
        Ok(update(messages, changed))
    }

    async fn after_model(
        &self,
        state: &AgentState,
        _: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        if !self.apply_to_output {
            return Ok(AgentUpdate::none());
        }
        let messages = state.messages();
        let Some(i) = messages.iter().rposition(|m| m.role == Role::Ai) else {
            return Ok(AgentUpdate::none());
        };
        let changed = self.process_message(&messages[i])?.map(|m| (i, m));
        Ok(update(messages, changed.into_iter().collect()))
    }
}

/// The whole conversation with the changed messages (at their index) in place, as
/// Python writes it (`add_messages` replaces each by id); no write when none changed.
fn update(messages: &[Message], changed: Vec<(usize, Message)>) -> AgentUpdate {
    if changed.is_empty() {
        return AgentUpdate::none();
    }
    let mut all = messages.to_vec();
    for (i, m) in changed {
        all[i] = m;
    }
    AgentUpdate::none().messages(all)
}
