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

#[path = "tool_node_v2/interop.rs"]
mod interop;
#[path = "tool_node_v2/issue_6533.rs"]
mod issue_6533;
#[path = "tool_node_v2/stored.rs"]
mod stored;

use std::sync::Arc;

use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions, MemorySaver};
use stategraph::prebuilt::{
    create_react_agent, AgentVersion, FakeChatModel, MessagesState, Tool, ToolCallWithContext,
    ToolNode, ToolRuntime, TOOL_CALL_WITH_CONTEXT,
};
use stategraph::{
    map, Command, CompiledGraph, Message, NodeError, RunConfig, Send, StateGraph, ToolCall, Value,
    END, START,
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

/// Per checkpoint of the thread, newest first: its id, `next`, and each task's id, name
/// and interrupts (id and value), as the fixture's `history` lists them.
async fn history_json<S: stategraph::State>(
    graph: &CompiledGraph<S>,
    thread: &str,
) -> serde_json::Value {
    let history = graph
        .get_state_history(&RunConfig::thread(thread), &ListOptions::default())
        .await
        .unwrap();
    let rows: Vec<serde_json::Value> = history
        .iter()
        .map(|s| {
            let tasks: Vec<serde_json::Value> = s
                .tasks
                .iter()
                .map(|t| {
                    let interrupts: Vec<serde_json::Value> = t
                        .interrupts
                        .iter()
                        .map(|i| serde_json::json!({"id": i.id, "value": support::golden::to_json(&i.value)}))
                        .collect();
                    serde_json::json!({"id": t.id, "name": t.name, "interrupts": interrupts})
                })
                .collect();
            let id = s.config.as_ref().and_then(|c| c.checkpoint_id.clone());
            serde_json::json!({"checkpoint_id": id, "next": s.next, "tasks": tasks})
        })
        .collect();
    serde_json::Value::Array(rows)
}

/// The fixture's history without task paths (the stored writes carry those).
fn python_history(trace: &serde_json::Value) -> serde_json::Value {
    let mut h = trace["history"].clone();
    for row in h.as_array_mut().unwrap() {
        for t in row["tasks"].as_array_mut().unwrap() {
            t.as_object_mut().unwrap().remove("path");
        }
    }
    h
}

/// The agent on `saver`, with the engine's own ids and clocks.
fn golden_free_agent(
    model: FakeChatModel,
    tools: Vec<Tool>,
    saver: Arc<dyn stategraph::checkpoint::CheckpointSaver>,
) -> CompiledGraph<MessagesState> {
    create_react_agent(model, tools)
        .checkpointer(saver)
        .compile()
        .unwrap()
}

/// The agent on `saver`, with the ids and clocks of the fixtures.
fn golden_agent(
    model: FakeChatModel,
    tools: Vec<Tool>,
    saver: Arc<MemorySaver>,
) -> CompiledGraph<MessagesState> {
    create_react_agent(model, tools)
        .checkpointer(saver)
        .compile()
        .unwrap()
        .with_sources(support::golden::sources())
}

#[tokio::test]
async fn the_v2_agent_stores_what_python_stores() {
    let trace = stored::fixture("two_calls");
    let saver = support::golden::saver();
    let agent = golden_agent(two_calls_model(), vec![add_tool()], saver.clone());
    let out = agent
        .invoke(
            MessagesState::input(Message::human("1 + 2 and 3 + 4?").with_id("h-1")),
            &RunConfig::thread("v2"),
        )
        .await
        .unwrap();
    assert_eq!(
        texts(&out.messages),
        ["1 + 2 and 3 + 4?", "Let me add them.", "3", "7", "3 and 7."]
    );
    stored::assert_stored_as_python(&trace, &saver);
    assert_eq!(history_json(&agent, "v2").await, python_history(&trace));
}

#[derive(serde::Deserialize)]
struct Approve {
    action: String,
}

/// The fixture's `approve` tool: asks a human, answers with what they said.
fn approve_tool() -> Tool {
    Tool::with_runtime(
        "approve",
        "Do an action once a human approves it.",
        |a: Approve, rt: ToolRuntime| async move {
            let answer = rt.interrupt(format!("approve {}?", a.action))?;
            Ok(format!(
                "{}: {}",
                a.action,
                answer.as_str().unwrap_or_default()
            ))
        },
    )
    .arg("action", "string")
}

fn approve_model() -> FakeChatModel {
    FakeChatModel::new([
        Message::ai("").with_id("ai-1").with_tool_calls(vec![
            ToolCall::new("approve", map! {"action" => "deploy"}, "call-1"),
            ToolCall::new("approve", map! {"action" => "notify"}, "call-2"),
        ]),
        Message::ai("Done.").with_id("ai-2"),
    ])
}

/// A call's output as the fixture's `outputs` render it.
fn output_json(
    messages: &[Message],
    interrupts: &[stategraph::types::Interrupt],
) -> serde_json::Value {
    let messages: Vec<serde_json::Value> = messages
        .iter()
        .map(|m| {
            let id = m.id.clone().filter(|id| uuid::Uuid::parse_str(id).is_err());
            serde_json::json!({"content": m.text(), "id": id, "tool_call_id": m.tool_call_id})
        })
        .collect();
    let interrupts: Vec<serde_json::Value> = interrupts
        .iter()
        .map(|i| serde_json::json!({"id": i.id, "value": support::golden::to_json(&i.value)}))
        .collect();
    serde_json::json!({"messages": messages, "interrupts": interrupts})
}

/// The fixture's output with the minted ids and the fields `output_json` leaves out
/// dropped.
fn python_output(o: &serde_json::Value) -> serde_json::Value {
    let messages: Vec<serde_json::Value> = o["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let id = m["id"].as_str().filter(|id| uuid::Uuid::parse_str(id).is_err());
            serde_json::json!({"content": m["content"], "id": id, "tool_call_id": m["tool_call_id"]})
        })
        .collect();
    serde_json::json!({"messages": messages, "interrupts": o["interrupts"]})
}

async fn interrupting_run(together: bool) -> (serde_json::Value, Vec<serde_json::Value>) {
    let trace = stored::fixture(if together {
        "interrupts_together"
    } else {
        "interrupts_one_by_one"
    });
    let saver = support::golden::saver();
    let agent = golden_agent(approve_model(), vec![approve_tool()], saver.clone());
    let config = RunConfig::thread("hitl");
    let first = agent
        .invoke(
            MessagesState::input(Message::human("deploy and notify").with_id("h-1")),
            &config,
        )
        .await
        .unwrap();
    let ids: Vec<String> = first.interrupts.iter().map(|i| i.id.clone()).collect();
    let mut outs = vec![output_json(&first.state.messages, &first.interrupts)];
    let resumes = if together {
        vec![Command::resume_by_id([
            (ids[0].clone(), "yes"),
            (ids[1].clone(), "no"),
        ])]
    } else {
        vec![
            Command::resume_by_id([(ids[1].clone(), "no")]),
            Command::resume_by_id([(ids[0].clone(), "yes")]),
        ]
    };
    for resume in resumes {
        let out = agent.invoke(resume, &config).await.unwrap();
        outs.push(output_json(&out.state.messages, &out.interrupts));
    }
    stored::assert_stored_as_python(&trace, &saver);
    assert_eq!(history_json(&agent, "hitl").await, python_history(&trace));
    let expected = trace["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(python_output)
        .collect();
    (serde_json::Value::Array(outs), expected)
}

#[tokio::test]
async fn two_interrupts_resumed_together_store_what_python_stores() {
    let (got, expected) = interrupting_run(true).await;
    assert_eq!(got, serde_json::Value::Array(expected));
}

#[tokio::test]
async fn two_interrupts_resumed_one_at_a_time_store_what_python_stores() {
    let (got, expected) = interrupting_run(false).await;
    assert_eq!(got, serde_json::Value::Array(expected));
}

/// `answers` model answers, each calling `add`: the fixture's `need_more_steps` script.
fn counting_model(limit: usize, answers: usize) -> FakeChatModel {
    FakeChatModel::new((1..=answers).map(|i| {
        Message::ai("")
            .with_id(format!("ai-{limit}-{i}"))
            .with_tool_calls(vec![ToolCall::new(
                "add",
                map! {"a" => i as i64, "b" => 1},
                format!("call-{limit}-{i}"),
            )])
    }))
}

#[tokio::test]
async fn near_the_recursion_limit_the_answer_asks_for_more_steps_as_python_stores_it() {
    let trace = stored::fixture("need_more_steps");
    let saver = support::golden::saver();
    let mut outs = Vec::new();
    let mut history = Vec::new();
    let sources = support::golden::sources();
    for (limit, answers) in [(4, 2), (6, 3)] {
        let agent = create_react_agent(counting_model(limit, answers), vec![add_tool()])
            .checkpointer(saver.clone())
            .compile()
            .unwrap()
            .with_sources(sources.clone());
        let thread = format!("limit{limit}");
        let config = RunConfig::thread(thread.as_str()).recursion_limit(limit);
        let out = agent
            .invoke(
                MessagesState::input(Message::human("count").with_id(format!("h-{limit}"))),
                &config,
            )
            .await
            .unwrap();
        let last = out.messages.last().unwrap();
        assert_eq!(last.text(), stategraph::prebuilt::NEED_MORE_STEPS);
        assert!(last.tool_calls.is_empty());
        outs.push(output_json(&out.messages, &out.interrupts));
        history.extend(
            history_json(&agent, &thread)
                .await
                .as_array()
                .unwrap()
                .clone(),
        );
    }
    stored::assert_stored_as_python(&trace, &saver);
    assert_eq!(serde_json::Value::Array(history), python_history(&trace));
    let expected: Vec<serde_json::Value> = trace["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(python_output)
        .collect();
    assert_eq!(outs, expected);
}

#[tokio::test]
async fn with_an_odd_limit_the_step_after_the_answer_is_past_it_as_in_python() {
    // Python: recursion_limit=5 ends with GraphRecursionError (the agent answers "Sorry"
    // at the last step; the next one is past the limit).
    let agent = create_react_agent(counting_model(5, 3), vec![add_tool()])
        .compile()
        .unwrap();
    let err = agent
        .invoke(
            MessagesState::input(Message::human("count")),
            &RunConfig::default().recursion_limit(5),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, stategraph::Error::RecursionLimit(5)), "{err}");
}
