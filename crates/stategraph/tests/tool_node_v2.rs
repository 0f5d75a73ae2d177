//! `create_react_agent`'s default, version v2 (langgraph-prebuilt 1.1.3): the edge after
//! `agent` sends one `ToolCallWithContext` per tool call and the `tools` node answers
//! each in its own task. What a run stores is compared with the pinned Python's, byte
//! for byte (fixtures in `tests/tool_node_v2/`, written by its `gen_fixtures.py` with
//! the deterministic ids, versions and timestamps of tests/golden); the only values
//! left out of the comparison are the uuid4 ids `add_messages` gives the tool messages,
//! random on both sides (compared as `<uuid4>`; a stored write without one, Python's
//! saver race, counts as having one).
//!
//! Also: several tools interrupting in one step, resumed by interrupt id together and
//! one at a time (LangGraph issue #6533's case), and interop with a live Python on
//! SQLite both ways (`interop.rs`).

#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;

use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions, MemorySaver};
use stategraph::graph::BranchTargets;
use stategraph::prebuilt::{
    create_react_agent, state_value, tool_call_sends, AgentVersion, ChatModel, FakeChatModel,
    MessagesState, Tool, ToolCallWithContext, ToolNode, ToolRuntime, TOOL_CALL_WITH_CONTEXT,
};
use stategraph::{
    map, Command, CompileOptions, CompiledGraph, Message, NodeContext, NodeError, RunConfig, Send,
    StateGraph, ToolCall, Value, END, START,
};

#[derive(serde::Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

fn add_tool() -> Tool {
    Tool::new(
        "add",
        "Add two integers.",
        |x: Add| async move { Ok(x.a + x.b) },
    )
    .arg("a", "integer")
    .arg("b", "integer")
}

fn two_calls_model() -> FakeChatModel {
    FakeChatModel::new([
        Message::ai("Let me add them.")
            .with_id("ai-1")
            .with_tool_calls(vec![
                ToolCall::new("add", map! {"a" => 1, "b" => 2}, "call-1"),
                ToolCall::new("add", map! {"a" => 3, "b" => 4}, "call-2"),
            ]),
        Message::ai("3 and 7.").with_id("ai-2"),
    ])
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages.iter().map(Message::text).collect()
}

#[tokio::test]
async fn each_tool_call_is_a_task_sent_with_the_state() {
    let saver = Arc::new(MemorySaver::new());
    let agent = create_react_agent(two_calls_model(), vec![add_tool()])
        .checkpointer(saver.clone())
        .compile()
        .unwrap();
    let config = RunConfig::thread("v2");
    let out = agent
        .invoke(
            MessagesState::input(Message::human("1 + 2 and 3 + 4?").with_id("h-1")),
            &config,
        )
        .await
        .unwrap();
    assert_eq!(
        texts(&out.messages),
        ["1 + 2 and 3 + 4?", "Let me add them.", "3", "7", "3 and 7."]
    );
    // The agent's task wrote its answer, then one Send per call.
    let tuples = saver
        .list(
            Some(&CheckpointConfig::thread("v2")),
            &ListOptions::default(),
        )
        .await
        .unwrap();
    let step1 = tuples.iter().find(|t| t.metadata.step == Some(0)).unwrap();
    let channels: Vec<&str> = step1
        .pending_writes
        .iter()
        .map(|w| w.channel.as_str())
        .collect();
    assert_eq!(channels, ["messages", "__pregel_tasks", "__pregel_tasks"]);
    let send = Send::from_value(&step1.pending_writes[2].value).unwrap();
    assert_eq!(send.node, "tools");
    let payload = ToolCallWithContext::from_value(&send.arg).unwrap().unwrap();
    assert_eq!(payload.tool_call.id.as_deref(), Some("call-2"));
    let state = payload.state.as_map().unwrap();
    assert_eq!(state.get("messages").unwrap().as_list().unwrap().len(), 2);
    assert_eq!(
        send.arg.as_map().unwrap().get("__type"),
        Some(&Value::from(TOOL_CALL_WITH_CONTEXT))
    );
    // Two `tools` tasks, one answer each.
    let history = agent
        .get_state_history(&config, &ListOptions::default())
        .await
        .unwrap();
    let fan_out = history.iter().find(|s| s.next.len() == 2).unwrap();
    assert_eq!(fan_out.next, ["tools", "tools"]);
}

#[tokio::test]
async fn version_v1_runs_every_call_in_one_task() {
    let agent = create_react_agent(two_calls_model(), vec![add_tool()])
        .version(AgentVersion::V1)
        .checkpointer(Arc::new(MemorySaver::new()))
        .compile()
        .unwrap();
    let config = RunConfig::thread("v1");
    let out = agent
        .invoke(MessagesState::input(Message::human("go")), &config)
        .await
        .unwrap();
    assert_eq!(texts(&out.messages)[2..4], ["3", "7"]);
    let history = agent
        .get_state_history(&config, &ListOptions::default())
        .await
        .unwrap();
    assert!(
        history.iter().all(|s| s.next.len() <= 1),
        "one task per step"
    );
}

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

#[tokio::test]
async fn a_tool_node_takes_a_list_of_calls_and_reads_the_current_state() {
    // langchain's create_agent sends `Send("tools", [tool_call])`.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let count = Tool::with_runtime(
        "count",
        "How many messages there are.",
        move |_: Value, rt: ToolRuntime| {
            let log = log.clone();
            async move {
                let n = rt.state_as::<MessagesState>()?.messages.len();
                log.lock()
                    .unwrap()
                    .push(rt.tool_call_id().map(str::to_owned));
                Ok::<_, NodeError>(n)
            }
        },
    );
    let mut g = StateGraph::<MessagesState>::new();
    g.add_node("tools", ToolNode::new(vec![count]).node::<MessagesState>())
        .add_edge("tools", END);
    g.add_conditional_edges(START, |_: &MessagesState| {
        let call = ToolCall::new("count", map! {}, "c-9");
        Send::new("tools", Value::list(vec![call.to_value()]))
    });
    let out = g
        .compile()
        .unwrap()
        .invoke(
            MessagesState::input(vec![Message::human("a"), Message::human("b")]),
            &RunConfig::default(),
        )
        .await
        .unwrap();
    assert_eq!(out.messages.last().unwrap().text(), "2");
    assert_eq!(
        out.messages.last().unwrap().tool_call_id.as_deref(),
        Some("c-9")
    );
    assert_eq!(*seen.lock().unwrap(), [Some("c-9".to_owned())]);
}

#[tokio::test]
async fn a_payload_that_is_no_tool_input_fails_with_a_type_error() {
    let mut g = StateGraph::<MessagesState>::new();
    g.add_node(
        "tools",
        ToolNode::new(vec![add_tool()]).node::<MessagesState>(),
    )
    .add_edge("tools", END);
    g.add_conditional_edges(START, |_: &MessagesState| {
        Send::new(
            "tools",
            map! {"__type" => TOOL_CALL_WITH_CONTEXT, "tool_call" => 7},
        )
    });
    let err = g
        .compile()
        .unwrap()
        .invoke(
            MessagesState::input(Message::human("a")),
            &RunConfig::default(),
        )
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("TypeError") && text.contains("node `tools`"),
        "{text}"
    );
    assert!(text.contains("a tool call must be a dict"), "{text}");
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
