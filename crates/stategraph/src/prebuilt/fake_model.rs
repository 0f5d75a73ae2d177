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
#[derive(Clone, Default)]
pub struct FakeChatModel {
    script: Arc<Mutex<VecDeque<Message>>>,
    seen: Arc<Mutex<Vec<Vec<Message>>>>,
    tools: Vec<String>,
}

impl std::fmt::Debug for FakeChatModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeChatModel")
            .field("left", &self.script.lock().len())
            .field("tools", &self.tools)
            .finish()
    }
}

impl FakeChatModel {
    /// A model answering with `responses`, in order.
    pub fn new<I, M>(responses: I) -> FakeChatModel
    where
        I: IntoIterator<Item = M>,
        M: Into<Message>,
    {
        FakeChatModel {
            script: Arc::new(Mutex::new(responses.into_iter().map(Into::into).collect())),
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

    /// How many scripted answers are left.
    pub fn remaining(&self) -> usize {
        self.script.lock().len()
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
        let next = self.script.lock().pop_front();
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
