//! A scripted chat model for tests and examples: it answers with the next message of
//! its script, streamed word by word (LangChain's `GenericFakeChatModel`).

use std::collections::VecDeque;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;

use super::chat_model::{run_message_id, ChatModel};
use super::tool::Tool;
use crate::messages::Message;
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

/// A chat model that answers each call with the next message of a script.
///
/// Each answer is streamed as chunks, as `GenericFakeChatModel` streams: the content
/// split at whitespace (the whitespace kept as chunks of its own), then, when the
/// answer calls tools, one more chunk with empty content carrying the tool calls
/// (Python's fake drops them when it streams). An answer without an id gets one
/// ([`run_message_id`]), shared by its chunks. Clones and [`ChatModel::bind_tools`]
/// share the script and the record of calls.
///
/// Three forms: [`FakeChatModel::new`] answers with its script once through (then fails
/// the node, as Python's iterator raises `StopIteration`); [`FakeChatModel::cycle`] starts
/// the script again when it ends (Python's `GenericFakeChatModel(messages=itertools.cycle(..))`),
/// for a model that serves any number of runs, e.g. a graph behind the Agent Server;
/// [`FakeChatModel::responder`] computes each answer from the conversation.
#[derive(Clone, Default)]
pub struct FakeChatModel {
    script: Arc<Mutex<Script>>,
    seen: Arc<Mutex<Vec<Vec<Message>>>>,
    tools: Vec<String>,
}

/// A function answering a conversation, for [`FakeChatModel::responder`].
type Responder = Arc<dyn Fn(&[Message]) -> Message + Send + Sync>;

/// Where the answers come from.
enum Script {
    /// Each answer once, in order.
    Once(VecDeque<Message>),
    /// The answers in order, again from the first after the last; `next` is the next one.
    Cycle { answers: Vec<Message>, next: usize },
    /// An answer computed from the conversation.
    Responder(Responder),
}

impl Default for Script {
    fn default() -> Self {
        Script::Once(VecDeque::new())
    }
}

impl Script {
    /// The next answer (`None` when the script has run out), or `Err` with the function
    /// that computes it, to be called outside the lock.
    fn next(&mut self) -> Result<Option<Message>, Responder> {
        match self {
            Script::Once(answers) => Ok(answers.pop_front()),
            Script::Cycle { answers, next } => {
                let answer = answers.get(*next).cloned();
                *next = (*next + 1) % answers.len().max(1);
                Ok(answer)
            }
            Script::Responder(respond) => Err(respond.clone()),
        }
    }

    fn remaining(&self) -> usize {
        match self {
            Script::Once(answers) => answers.len(),
            Script::Cycle { answers, .. } if answers.is_empty() => 0,
            Script::Cycle { .. } | Script::Responder(_) => usize::MAX,
        }
    }
}

impl std::fmt::Debug for FakeChatModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let form = match &*self.script.lock() {
            Script::Once(answers) => format!("{} left", answers.len()),
            Script::Cycle { answers, .. } => format!("cycling {}", answers.len()),
            Script::Responder(_) => "responder".to_owned(),
        };
        f.debug_struct("FakeChatModel")
            .field("script", &form)
            .field("tools", &self.tools)
            .finish()
    }
}

impl FakeChatModel {
    /// A model answering with `responses`, in order, once.
    pub fn new<I, M>(responses: I) -> FakeChatModel
    where
        I: IntoIterator<Item = M>,
        M: Into<Message>,
    {
        let answers = responses.into_iter().map(Into::into).collect();
        FakeChatModel::with_script(Script::Once(answers))
    }

    /// A model answering with `responses` in order, and from the first again after the
    /// last: it never runs out (unless `responses` is empty). Each answer without an id
    /// gets a new one every time it is given.
    pub fn cycle<I, M>(responses: I) -> FakeChatModel
    where
        I: IntoIterator<Item = M>,
        M: Into<Message>,
    {
        let answers = responses.into_iter().map(Into::into).collect();
        FakeChatModel::with_script(Script::Cycle { answers, next: 0 })
    }

    /// A model whose answer is `respond(conversation)`: the messages it is called with
    /// (the prompt first, if the agent has one). For example an echo:
    /// `FakeChatModel::responder(|m| Message::ai(m.last().map(Message::text).unwrap_or_default()))`.
    pub fn responder<F>(respond: F) -> FakeChatModel
    where
        F: Fn(&[Message]) -> Message + Send + Sync + 'static,
    {
        FakeChatModel::with_script(Script::Responder(Arc::new(respond)))
    }

    fn with_script(script: Script) -> FakeChatModel {
        FakeChatModel {
            script: Arc::new(Mutex::new(script)),
            ..FakeChatModel::default()
        }
    }

    /// The names of the tools bound to this model.
    pub fn bound_tools(&self) -> &[String] {
        &self.tools
    }

    /// The conversations the model was called with, in order.
    pub fn calls(&self) -> Vec<Vec<Message>> {
        self.seen.lock().clone()
    }

    /// How many scripted answers are left: `usize::MAX` for a model that does not run out
    /// ([`FakeChatModel::cycle`] of a non-empty script, [`FakeChatModel::responder`]).
    pub fn remaining(&self) -> usize {
        self.script.lock().remaining()
    }
}

/// `re.split(r"(\s)", text)`: the words, and each whitespace character on its own.
fn split_words(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in text.chars() {
        if c.is_whitespace() {
            out.push(c.to_string());
            out.push(String::new());
        } else if let Some(last) = out.last_mut() {
            last.push(c);
        }
    }
    out
}

#[async_trait]
impl ChatModel for FakeChatModel {
    async fn invoke(&self, messages: &[Message], ctx: &NodeContext) -> Result<Message, NodeError> {
        self.seen.lock().push(messages.to_vec());
        let next = self.script.lock().next();
        let next = next.unwrap_or_else(|respond| Some(respond(messages)));
        let mut answer = next.ok_or_else(|| {
            NodeError::named("StopIteration", "FakeChatModel has no scripted answer left")
        })?;
        let id = answer.id.get_or_insert_with(run_message_id).clone();
        let text = answer.text();
        if !text.is_empty() {
            for word in split_words(&text) {
                ctx.send_message_chunk(&Message::ai(word).with_id(id.clone()));
            }
        }
        if !answer.tool_calls.is_empty() {
            let chunk = Message::ai("")
                .with_id(id)
                .with_tool_calls(answer.tool_calls.clone());
            ctx.send_message_chunk(&chunk);
        }
        Ok(answer)
    }

    fn bind_tools(&self, tools: &[Tool]) -> Arc<dyn ChatModel> {
        let mut bound = self.clone();
        bound.tools = tools.iter().map(|t| t.name().to_owned()).collect();
        Arc::new(bound)
    }
}

#[cfg(test)]
mod tests {
    use super::split_words;

    #[test]
    fn words_split_as_python_re_split_with_a_group() {
        assert_eq!(
            split_words("let me  add"),
            ["let", " ", "me", " ", "", " ", "add"]
        );
        assert_eq!(split_words("hi"), ["hi"]);
    }
}
