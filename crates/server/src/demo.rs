//! The graphs the example server registers and the tests drive: `seed`, the quickstart
//! graph, and `agent`, a ReAct agent whose scripted model adds the first two numbers of
//! the question with its `add` tool.

use std::sync::Arc;

use async_trait::async_trait;
use stategraph::checkpoint::CheckpointSaver;
use stategraph::prebuilt::{create_react_agent, run_message_id, ChatModel, MessagesState, Tool};
use stategraph::{
    map, Command, CompileOptions, CompiledGraph, Message, NodeContext, NodeError, Role, State,
    StateGraph, ToolCall, END, START,
};

/// The quickstart's state: two keys, each keeping the last value written.
#[derive(State, Debug)]
pub struct Person {
    /// A name.
    pub name: String,
    /// An address.
    pub address: String,
}

/// The quickstart graph (START → get_address → END, setting `name` and `address`),
/// checkpointed in `saver`.
pub fn seed(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<Person>> {
    let mut graph = StateGraph::<Person>::new();
    graph.add_node("get_address", |_state: Person| async {
        Command::update(
            PersonUpdate::default()
                .name("pavaneeshwar")
                .address("Hyderabad residency"),
        )
    });
    graph
        .add_edge(START, "get_address")
        .add_edge("get_address", END);
    graph.compile_with(CompileOptions::new().checkpointer(saver))
}

/// A scripted chat model: asked a question, it calls `add` with the question's first two
/// integers (0 for a missing one); given the tool's answer, it states the sum. It streams
/// its answer as a model does: a chunk per word, then one with its tool calls, all with
/// the answer's id (`lc_run--<uuid7>`).
#[derive(Clone, Debug, Default)]
pub struct AddingModel;

impl AddingModel {
    fn answer(messages: &[Message]) -> Message {
        let Some(last) = messages.last() else {
            return Message::ai("Ask me to add two numbers.");
        };
        if last.role == Role::Tool {
            return Message::ai(format!("The sum is {}.", last.text()));
        }
        let text = last.text();
        let numbers: Vec<i64> = text
            .split(|c: char| !c.is_ascii_digit() && c != '-')
            .filter_map(|t| t.parse().ok())
            .collect();
        let a = numbers.first().copied().unwrap_or(0);
        let b = numbers.get(1).copied().unwrap_or(0);
        let call = ToolCall::new(
            "add",
            map! {"a" => a, "b" => b},
            format!("call-{}", uuid::Uuid::new_v4().simple()),
        );
        Message::ai("Let me add them.").with_tool_calls(vec![call])
    }
}

#[async_trait]
impl ChatModel for AddingModel {
    async fn invoke(&self, messages: &[Message], ctx: &NodeContext) -> Result<Message, NodeError> {
        let id = run_message_id();
        let answer = AddingModel::answer(messages).with_id(id.clone());
        for word in answer.text().split_inclusive(' ') {
            ctx.send_message_chunk(&Message::ai(word).with_id(id.clone()));
        }
        if !answer.tool_calls.is_empty() {
            let calls = Message::ai("")
                .with_id(id)
                .with_tool_calls(answer.tool_calls.clone());
            ctx.send_message_chunk(&calls);
        }
        Ok(answer)
    }

    fn bind_tools(&self, _tools: &[Tool]) -> Arc<dyn ChatModel> {
        Arc::new(self.clone())
    }
}

#[derive(serde::Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// A ReAct agent (`agent` → `tools` → `agent`) with [`AddingModel`] and an `add` tool,
/// checkpointed in `saver`.
pub fn agent(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<MessagesState>> {
    let add = Tool::new("add", "Add two integers.", |x: AddArgs| async move {
        Ok(x.a + x.b)
    })
    .arg("a", "integer")
    .arg("b", "integer");
    create_react_agent(AddingModel, vec![add])
        .prompt("You add numbers.")
        .checkpointer(saver)
        .compile()
}
