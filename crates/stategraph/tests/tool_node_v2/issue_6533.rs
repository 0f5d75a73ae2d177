//! LangGraph issue #6533 (open): tools of one `ToolNode` task that interrupt get their
//! resume values mixed up. Sent one task per call (`tool_call_sends`, the v2 fan-out),
//! each tool's interrupt has its own id and gets its own answer, resumed together or one
//! at a time, whichever order the tools interrupted in.

use std::sync::Arc;

use stategraph::checkpoint::MemorySaver;
use stategraph::graph::BranchTargets;
use stategraph::prebuilt::{
    state_value, tool_call_sends, ChatModel, FakeChatModel, MessagesState, Tool, ToolNode,
    ToolRuntime,
};
use stategraph::{
    map, Command, CompileOptions, CompiledGraph, Message, NodeContext, NodeError, RunConfig,
    StateGraph, ToolCall, Value, END, START,
};

use crate::texts;

/// A graph of your own fanning tool calls out with `tool_call_sends`: the shape of
/// LangGraph issue #6533's graph, one task per call.
fn own_graph(tools: Vec<Tool>, model: FakeChatModel) -> CompiledGraph<MessagesState> {
    let node = ToolNode::new(tools);
    let mut g = StateGraph::<MessagesState>::new();
    g.add_node("agent", move |s: MessagesState, ctx: NodeContext| {
        let model = model.clone();
        async move {
            let answer = model.invoke(&s.messages, &ctx).await?;
            Ok::<_, NodeError>(MessagesState::input(answer))
        }
    });
    g.add_node("tools", node.node::<MessagesState>())
        .add_edge(START, "agent")
        .add_edge("tools", "agent");
    g.add_conditional_edges("agent", |s: &MessagesState| {
        let last = s.messages.last().unwrap();
        if last.tool_calls.is_empty() {
            return BranchTargets::from(END);
        }
        let state = state_value(s).unwrap();
        BranchTargets::from(tool_call_sends(last, &state))
    });
    g.compile_with(CompileOptions::new().checkpointer(Arc::new(MemorySaver::new())))
        .unwrap()
}

/// LangGraph issue #6533's tools: each interrupts with its own question and checks that
/// the answer it gets back is the one meant for it, after a delay that makes them
/// interrupt in either order.
fn asking_tool(name: &'static str, delay_ms: u64) -> Tool {
    Tool::with_runtime(
        name,
        "Asks a human, expecting its own question back.",
        move |_: Value, rt: ToolRuntime| async move {
            tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
            let question = format!("Interrupt {name}");
            let answer = rt.interrupt(question.as_str())?;
            if answer.as_str() != Some(question.as_str()) {
                return Err(NodeError::named(
                    "AssertionError",
                    format!("Expected {question}, got {answer:?}"),
                ));
            }
            Ok(answer)
        },
    )
}

fn asking_model() -> FakeChatModel {
    FakeChatModel::new([
        Message::ai("").with_id("ai-1").with_tool_calls(vec![
            ToolCall::new("a", map! {}, "call-a"),
            ToolCall::new("b", map! {}, "call-b"),
        ]),
        Message::ai("Done.").with_id("ai-2"),
    ])
}

#[tokio::test]
async fn two_tools_interrupting_in_one_step_are_resumed_by_id_together() {
    for (da, db) in [(30, 0), (0, 30)] {
        let graph = own_graph(
            vec![asking_tool("a", da), asking_tool("b", db)],
            asking_model(),
        );
        let config = RunConfig::thread("6533");
        let paused = graph
            .invoke(MessagesState::input(Message::human("go")), &config)
            .await
            .unwrap();
        assert_eq!(paused.interrupts.len(), 2, "both tasks interrupted");
        let ids: Vec<String> = paused.interrupts.iter().map(|i| i.id.clone()).collect();
        assert_ne!(ids[0], ids[1], "each task's interrupt has its own id");
        let answers: Vec<(String, Value)> = paused
            .interrupts
            .iter()
            .map(|i| (i.id.clone(), i.value.clone()))
            .collect();
        let done = graph
            .invoke(Command::resume_by_id(answers), &config)
            .await
            .unwrap()
            .done()
            .unwrap();
        assert_eq!(
            texts(&done.messages)[2..],
            ["Interrupt a", "Interrupt b", "Done."]
        );
    }
}

#[tokio::test]
async fn two_tools_interrupting_in_one_step_are_resumed_one_at_a_time() {
    let graph = own_graph(
        vec![asking_tool("a", 0), asking_tool("b", 10)],
        asking_model(),
    );
    let config = RunConfig::thread("one-by-one");
    let paused = graph
        .invoke(MessagesState::input(Message::human("go")), &config)
        .await
        .unwrap();
    let by_value = |v: &str| {
        paused
            .interrupts
            .iter()
            .find(|i| i.value == Value::from(v))
            .unwrap()
            .id
            .clone()
    };
    let (a, b) = (by_value("Interrupt a"), by_value("Interrupt b"));
    // Answer b only: a still waits, with the same id.
    let half = graph
        .invoke(Command::resume_by_id([(b, "Interrupt b")]), &config)
        .await
        .unwrap();
    assert_eq!(half.interrupts.len(), 1);
    assert_eq!(half.interrupts[0].id, a);
    let done = graph
        .invoke(Command::resume_by_id([(a, "Interrupt a")]), &config)
        .await
        .unwrap()
        .done()
        .unwrap();
    assert_eq!(
        texts(&done.messages)[2..],
        ["Interrupt a", "Interrupt b", "Done."]
    );
}
