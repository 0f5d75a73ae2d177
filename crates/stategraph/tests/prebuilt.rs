//! Prebuilt agents: `ToolNode` (concurrent calls, answers in order, LangGraph's error
//! texts), `tools_condition`, `create_react_agent` (the loop, the system prompt, the
//! interrupt before tools and its resume, persistence on SQLite, message chunks in the
//! `messages` stream mode, ids where LangChain gives them) and its Mermaid drawing,
//! equal to what pinned Python draws (fixtures in `tests/prebuilt/`, written by
//! `scripts/gen_agent_fixtures.py`; rerun and compared when `STATEGRAPH_PYTHON` is set),
//! and the `react_agent` example on SQLite and Postgres, printing what its Python twin
//! prints (run too when `STATEGRAPH_INTEROP=1`).

#![allow(clippy::unwrap_used)]

#[path = "../examples/react_agent.rs"]
#[allow(dead_code, unreachable_pub)]
mod react_agent_example;
mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions, MemorySaver};
use stategraph::prebuilt::{
    create_react_agent, tools_condition, AgentVersion, DeltaMessagesState, FakeChatModel,
    MessagesState, Tool, ToolError, ToolErrorHandling, ToolNode,
};
use stategraph::{
    map, CompiledGraph, Message, NoInput, Role, RunConfig, State, StateGraph, StreamMode,
    StreamPart, ToolCall, Value, END, START,
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

fn boom_tool() -> Tool {
    Tool::new("boom", "Fails.", |_: Value| async move {
        Err::<String, _>(ToolError::named("ValueError", "it 'broke'"))
    })
    .arg("x", "string")
}

fn calls(list: &[(&str, Value, &str)]) -> Message {
    let calls = list
        .iter()
        .map(|(name, args, id)| ToolCall::new(*name, args.clone(), *id))
        .collect();
    Message::ai("").with_id("ai-1").with_tool_calls(calls)
}

/// A graph running only `node` (from START), to call a ToolNode on a given conversation.
fn tool_graph(node: ToolNode) -> CompiledGraph<MessagesState> {
    let mut g = StateGraph::<MessagesState>::new();
    g.add_node("tools", node.node::<MessagesState>())
        .add_edge(START, "tools")
        .add_edge("tools", END);
    g.compile().expect("compiles")
}

async fn run_tools(node: ToolNode, ai: Message) -> stategraph::Result<Vec<Message>> {
    let out = tool_graph(node)
        .invoke(MessagesState::input(ai), &RunConfig::default())
        .await?;
    Ok(out.messages[1..].to_vec())
}

#[tokio::test]
async fn tool_node_runs_the_calls_concurrently_and_answers_in_call_order() {
    // Each call waits until both have started: run one after the other, they would never
    // finish (the timeout only turns that deadlock into a failure).
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let wait = |name: &'static str| {
        let barrier = barrier.clone();
        Tool::new(name, "Waits for the other call.", move |_: Value| {
            let barrier = barrier.clone();
            async move {
                barrier.wait().await;
                Ok(format!("{name} done"))
            }
        })
    };
    let node = ToolNode::new(vec![wait("first"), wait("second")]);
    let ai = calls(&[("second", map! {}, "c1"), ("first", map! {}, "c2")]);
    let out = tokio::time::timeout(Duration::from_secs(60), run_tools(node, ai))
        .await
        .expect("both calls ran at once")
        .unwrap();
    let got: Vec<(String, String, String)> = out
        .iter()
        .map(|m| {
            (
                m.text(),
                m.tool_call_id.clone().unwrap(),
                m.name.clone().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("second done".into(), "c1".into(), "second".into()),
            ("first done".into(), "c2".into(), "first".into())
        ]
    );
    assert!(out
        .iter()
        .all(|m| m.role == Role::Tool && m.status == "success"));
}

#[tokio::test]
async fn tool_node_answers_unknown_tools_and_bad_arguments_with_pythons_texts() {
    // Expected texts: what LangGraph 1.2.24's ToolNode answers to the same calls.
    let node = ToolNode::new(vec![add_tool(), boom_tool()]);
    let ai = calls(&[
        ("add", map! {"a" => 1, "b" => 2}, "c1"),
        ("nope", map! {}, "c2"),
        ("add", map! {"a" => "x"}, "c3"),
    ]);
    let out = run_tools(node, ai).await.unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(
        (out[0].text().as_str(), out[0].status.as_str()),
        ("3", "success")
    );
    assert_eq!(
        out[1].text(),
        "Error: nope is not a valid tool, try one of [add, boom]."
    );
    assert_eq!(out[1].name.as_deref(), Some("nope"));
    assert_eq!(
        out[2].text(),
        "Error invoking tool 'add' with kwargs {'a': 'x'} with error:\n a: Input should be a valid integer, unable to parse string as an integer\nb: Field required\n Please fix the error and try again."
    );
    for m in &out[1..] {
        assert_eq!(m.status, "error");
    }
    assert_eq!(
        out.iter()
            .map(|m| m.tool_call_id.clone().unwrap())
            .collect::<Vec<_>>(),
        ["c1", "c2", "c3"]
    );
}

#[tokio::test]
async fn a_failing_tool_fails_the_node_by_default_and_becomes_a_message_when_asked() {
    let ai = calls(&[("boom", map! {"x" => "1"}, "c4")]);
    let err = run_tools(ToolNode::new(vec![boom_tool()]), ai.clone())
        .await
        .expect_err("LangGraph's default re-raises a tool's own error");
    assert!(
        err.to_string().contains(r#"ValueError("it 'broke'")"#),
        "{err}"
    );

    let node = ToolNode::new(vec![boom_tool()]).handle_tool_errors(ToolErrorHandling::All);
    let out = run_tools(node, ai).await.unwrap();
    assert_eq!(
        out[0].text(),
        "Error: ValueError(\"it 'broke'\")\n Please fix your mistakes."
    );
    assert_eq!(out[0].status, "error");
}

#[tokio::test]
async fn tool_results_that_are_not_strings_are_written_as_python_json() {
    let obj = Tool::new("obj", "A dict.", |_: Value| async move {
        Ok(serde_json::json!({"a": [1, 2.5, null, true]}))
    });
    let out = run_tools(ToolNode::new(vec![obj]), calls(&[("obj", map! {}, "c5")]))
        .await
        .unwrap();
    assert_eq!(out[0].text(), r#"{"a": [1, 2.5, null, true]}"#);
}

#[tokio::test]
async fn tool_node_refuses_a_conversation_without_an_ai_message() {
    // langgraph-prebuilt 1.1.3's `ToolNode._parse_input`: the latest AI message's calls
    // are run; a conversation without one is a `ValueError`.
    let err = run_tools(ToolNode::new(vec![add_tool()]), Message::human("hi"))
        .await
        .expect_err("there must be an AI message");
    assert!(
        err.to_string().contains("No AIMessage found in input"),
        "{err}"
    );
}

#[test]
fn tools_condition_goes_to_tools_only_while_the_model_calls_some() {
    let state = |m: Vec<Message>| MessagesState { messages: m };
    assert_eq!(tools_condition(&state(vec![])), END);
    assert_eq!(tools_condition(&state(vec![Message::ai("done")])), END);
    let ai = calls(&[("add", map! {}, "c1")]);
    assert_eq!(tools_condition(&state(vec![ai.clone()])), "tools");
    let answered = vec![ai, Message::tool("3", "c1")];
    assert_eq!(tools_condition(&state(answered)), END);
}

fn script() -> FakeChatModel {
    FakeChatModel::new([
        Message::ai("let me add").with_tool_calls(vec![ToolCall::new(
            "add",
            map! {"a" => 1, "b" => 2},
            "call-1",
        )]),
        Message::ai("1 + 2 = 3"),
    ])
}

fn summary(messages: &[Message]) -> Vec<(Role, String)> {
    messages
        .iter()
        .map(|m| (m.role.clone(), m.text()))
        .collect()
}

#[tokio::test]
async fn the_agent_calls_the_tool_then_answers() {
    let model = script();
    let agent = create_react_agent(model.clone(), vec![add_tool()])
        .prompt("You add numbers.")
        .name("adder")
        .compile()
        .unwrap();
    let out = agent
        .invoke(
            MessagesState::input(Message::human("what is 1 + 2?")),
            &RunConfig::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        summary(&out.messages),
        [
            (Role::Human, "what is 1 + 2?".into()),
            (Role::Ai, "let me add".into()),
            (Role::Tool, "3".into()),
            (Role::Ai, "1 + 2 = 3".into()),
        ]
    );
    assert_eq!(out.messages[1].name.as_deref(), Some("adder"));
    assert_eq!(out.messages[2].tool_call_id.as_deref(), Some("call-1"));
    assert_eq!(model.remaining(), 0);
    // The system prompt leads every model call and is not stored.
    let seen = model.calls();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0][0], Message::system("You add numbers."));
    assert_eq!(seen[1].len(), 4, "prompt, question, tool call, tool answer");
    assert!(out.messages.iter().all(|m| m.role != Role::System));
}

#[tokio::test]
async fn the_model_sees_the_bound_tools() {
    let model = script();
    let bound = Arc::new(parking_lot::Mutex::new(Vec::new()));
    // `bind_tools` is the model's: wrap the fake to record what it was given.
    struct Recorder(FakeChatModel, Arc<parking_lot::Mutex<Vec<String>>>);
    #[async_trait::async_trait]
    impl stategraph::prebuilt::ChatModel for Recorder {
        async fn invoke(
            &self,
            messages: &[Message],
            ctx: &stategraph::NodeContext,
        ) -> Result<Message, stategraph::NodeError> {
            self.0.invoke(messages, ctx).await
        }
        fn bind_tools(&self, tools: &[Tool]) -> Arc<dyn stategraph::prebuilt::ChatModel> {
            *self.1.lock() = tools.iter().map(|t| t.name().to_owned()).collect();
            self.0.bind_tools(tools)
        }
    }
    let agent = create_react_agent(
        Recorder(model, bound.clone()),
        vec![add_tool(), boom_tool()],
    )
    .compile()
    .unwrap();
    drop(agent);
    assert_eq!(*bound.lock(), ["add", "boom"]);
    assert_eq!(
        add_tool().schema()["required"],
        serde_json::json!(["a", "b"])
    );
}

#[tokio::test]
async fn the_agent_stops_before_tools_and_resumes() {
    let saver = Arc::new(MemorySaver::new());
    let agent = create_react_agent(script(), vec![add_tool()])
        .checkpointer(saver.clone())
        .interrupt_before(["tools"])
        .compile()
        .unwrap();
    let config = RunConfig::thread("approve");
    let paused = agent
        .invoke(
            MessagesState::input(Message::human("what is 1 + 2?")),
            &config,
        )
        .await
        .unwrap();
    assert_eq!(
        paused.messages.len(),
        2,
        "stopped after the model asked for the tool"
    );
    assert!(paused.is_interrupted());
    assert_eq!(paused.next, ["tools"]);
    let snapshot = agent.get_state(&config).await.unwrap();
    assert_eq!(snapshot.next, ["tools"]);

    let done = agent
        .invoke(NoInput, &config)
        .await
        .unwrap()
        .done()
        .unwrap();
    assert_eq!(done.messages.len(), 4);
    assert_eq!(done.messages[3].text(), "1 + 2 = 3");
    assert!(agent.get_state(&config).await.unwrap().next.is_empty());
}

#[tokio::test]
async fn a_tool_call_left_unanswered_is_refused_with_pythons_text() {
    let saver = Arc::new(MemorySaver::new());
    let agent = create_react_agent(script(), vec![add_tool()])
        .checkpointer(saver)
        .interrupt_before(["tools"])
        .compile()
        .unwrap();
    let config = RunConfig::thread("unanswered");
    let q = || MessagesState::input(Message::human("what is 1 + 2?"));
    let _ = agent.invoke(q(), &config).await.unwrap();
    // A new question instead of resuming: the model would see an unanswered call.
    let err = agent
        .invoke(q(), &config)
        .await
        .expect_err("the history has a tool call without its answer");
    let text = err.to_string();
    assert!(
        text.contains("Found AIMessages with tool_calls that do not have a corresponding ToolMessage. Here are the first few of those tool calls: [{'name': 'add', 'args': {'a': 1, 'b': 2}, 'id': 'call-1', 'type': 'tool_call'}]."),
        "{text}"
    );
    assert!(text.contains("errors/INVALID_CHAT_HISTORY"), "{text}");
}

#[tokio::test]
async fn a_tool_given_the_context_pauses_for_a_human_and_resumes_with_the_answer() {
    let approved = Tool::with_context(
        "add",
        "Add two integers, once a human agrees.",
        |x: Add, ctx: stategraph::NodeContext| async move {
            let answer = ctx.interrupt(format!("add {} and {}?", x.a, x.b))?;
            let answer = answer.as_str().unwrap_or_default().to_owned();
            Ok(format!("{} (human: {answer})", x.a + x.b))
        },
    )
    .arg("a", "integer")
    .arg("b", "integer");
    let saver = Arc::new(MemorySaver::new());
    let agent = create_react_agent(script(), vec![approved])
        .checkpointer(saver)
        .compile()
        .unwrap();
    let config = RunConfig::thread("approval");
    let paused = agent
        .invoke(
            MessagesState::input(Message::human("what is 1 + 2?")),
            &config,
        )
        .await
        .unwrap();
    assert_eq!(paused.next, ["tools"]);
    assert_eq!(paused.interrupts.len(), 1);
    assert_eq!(paused.interrupts[0].value, Value::from("add 1 and 2?"));

    let resume = stategraph::Command::resume("yes");
    let done = agent.invoke(resume, &config).await.unwrap().done().unwrap();
    assert_eq!(done.messages[2].text(), "3 (human: yes)");
    assert_eq!(done.messages[3].text(), "1 + 2 = 3");
}

#[tokio::test]
async fn tools_run_directly_outside_a_graph() {
    assert_eq!(
        add_tool().invoke(map! {"a" => 2, "b" => 5}).await.unwrap(),
        Value::from(7)
    );
    let err = add_tool().invoke(map! {"a" => 2}).await.unwrap_err();
    assert_eq!(err.kind, "ToolInvocationError");
    assert!(
        err.message
            .ends_with("b: Field required\n Please fix the error and try again."),
        "{}",
        err.message
    );
    let err = boom_tool().invoke(map! {"x" => "1"}).await.unwrap_err();
    assert_eq!(err.repr(), "ValueError(\"it 'broke'\")");
}

fn temp_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "stategraph-prebuilt-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[tokio::test]
async fn a_conversation_persists_in_sqlite_across_agent_instances() {
    let path = temp_db("agent.db");
    let config = RunConfig::thread("chat");
    {
        let saver = Arc::new(stategraph::sqlite::SqliteSaver::open(&path).unwrap());
        let agent = create_react_agent(script(), vec![add_tool()])
            .checkpointer(saver)
            .compile()
            .unwrap();
        let out = agent
            .invoke(
                MessagesState::input(Message::human("what is 1 + 2?")),
                &config,
            )
            .await
            .unwrap();
        assert_eq!(out.messages.len(), 4);
    }
    // A new process would do the same: open the file, run another turn on the thread.
    let saver = Arc::new(stategraph::sqlite::SqliteSaver::open(&path).unwrap());
    let model = FakeChatModel::new([Message::ai("you are welcome")]);
    let agent = create_react_agent(model.clone(), vec![add_tool()])
        .checkpointer(saver)
        .compile()
        .unwrap();
    let out = agent
        .invoke(MessagesState::input(Message::human("thanks")), &config)
        .await
        .unwrap();
    assert_eq!(
        summary(&out.messages[3..]),
        [
            (Role::Ai, "1 + 2 = 3".into()),
            (Role::Human, "thanks".into()),
            (Role::Ai, "you are welcome".into()),
        ]
    );
    assert_eq!(
        model.calls()[0].len(),
        5,
        "the model saw the stored history"
    );
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn the_messages_mode_streams_the_models_answer_word_by_word() {
    let saver = Arc::new(MemorySaver::new());
    let agent = create_react_agent(script(), vec![add_tool()])
        .checkpointer(saver)
        .compile()
        .unwrap();
    let config = RunConfig::thread("stream");
    let mut events = agent.stream_typed(
        MessagesState::input(Message::human("what is 1 + 2?")),
        &config,
        StreamMode::Messages,
    );
    let (mut chunks, mut others) = (Vec::new(), Vec::new());
    while let Some(part) = events.next().await {
        match part.unwrap() {
            StreamPart::Messages {
                chunk, metadata, ..
            } if metadata.langgraph_node == "agent" => chunks.push(chunk),
            StreamPart::Messages {
                chunk, metadata, ..
            } => others.push((metadata.langgraph_node, chunk)),
            other => panic!("only messages were asked for, got {other:?}"),
        }
    }
    let texts: Vec<String> = chunks.iter().map(Message::text).collect();
    assert_eq!(
        texts,
        ["let", " ", "me", " ", "add", "", "1", " ", "+", " ", "2", " ", "=", " ", "3"]
    );
    assert_eq!(
        chunks[5].tool_calls[0].name, "add",
        "the tool calls come as a chunk"
    );
    // The tool node's answer comes whole (it was not streamed); the model's answers are
    // not repeated whole after their chunks.
    assert_eq!(others.len(), 1, "{others:?}");
    assert_eq!(others[0].0, "tools");
    assert_eq!(others[0].1.text(), "3");
    // The chunks carry the id of the message the agent stores.
    let state = agent.get_state(&config).await.unwrap();
    let stored = MessagesState::from_values(&state.values).unwrap().messages;
    assert_eq!(chunks[0].id, stored[1].id);
    assert_eq!(chunks[14].id, stored[3].id);
    assert_ne!(stored[1].id, stored[3].id);
}

#[tokio::test]
async fn stored_writes_hold_ids_where_python_stores_them() {
    // Python (langgraph 1.2.24 on SqliteSaver): the model's answers are written with an
    // `lc_run--<uuid>` id; the input and the tool messages with the uuid4 `add_messages`
    // gave them (it sets the id on the written object, which Python's saver usually
    // stores after that; here always).
    let saver = Arc::new(MemorySaver::new());
    let agent = create_react_agent(script(), vec![add_tool()])
        .checkpointer(saver.clone())
        .compile()
        .unwrap();
    let config = RunConfig::thread("ids");
    let out = agent
        .invoke(
            MessagesState::input(Message::human("what is 1 + 2?")),
            &config,
        )
        .await
        .unwrap();
    let tuples = saver
        .list(
            Some(&CheckpointConfig::thread("ids")),
            &ListOptions::default(),
        )
        .await
        .unwrap();
    let mut written: Vec<Message> = Vec::new();
    for t in tuples.iter().rev() {
        for w in t.pending_writes.iter().filter(|w| w.channel == "messages") {
            let list = w.value.as_list().expect("a list of messages");
            written.extend(list.iter().map(|m| Message::from_value(m).unwrap()));
        }
    }
    let roles: Vec<&Role> = written.iter().map(|m| &m.role).collect();
    assert_eq!(roles, [&Role::Human, &Role::Ai, &Role::Tool, &Role::Ai]);
    for m in [&written[0], &written[2]] {
        let id = m.id.as_deref().expect("an id in the stored write");
        let uuid = uuid::Uuid::parse_str(id).unwrap();
        assert_eq!(uuid.get_version_num(), 4);
    }
    for m in [&written[1], &written[3]] {
        let id = m.id.as_deref().expect("the model's answer has an id");
        let uuid = id
            .strip_prefix("lc_run--")
            .expect("LangChain's run id form");
        assert!(uuid::Uuid::parse_str(uuid).is_ok(), "{id}");
    }
    // The state keeps the ids the writes hold.
    let ids = |ms: &[Message]| ms.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&written), ids(&out.messages));
}

#[tokio::test]
async fn a_message_written_as_a_pair_or_a_dict_is_stored_as_given() {
    // Python converts a `("user", text)` pair or a dict to a new message: the write keeps
    // what was given (no id), the state gets the converted message with its id.
    let saver = Arc::new(MemorySaver::new());
    let mut g = StateGraph::<stategraph::DynState>::with_channels(vec![(
        "messages".into(),
        Box::new(stategraph::channels::BinaryOperatorAggregate::new(
            stategraph::reducers::add_messages(),
            Some(stategraph::list![]),
        )) as _,
    )]);
    g.add_node("n", |_s: stategraph::DynState| async move {
        stategraph::update([(
            "messages",
            stategraph::list![
                stategraph::list!["ai", "a pair"],
                map! {"role" => "ai", "content" => "a dict"}
            ],
        )])
    })
    .add_edge(START, "n")
    .add_edge("n", END);
    let app = g
        .compile_with(stategraph::CompileOptions::new().checkpointer(saver.clone()))
        .unwrap();
    let out = app
        .invoke(
            stategraph::update([("messages", stategraph::list![])]),
            &RunConfig::thread("t"),
        )
        .await
        .unwrap();
    let tuples = saver
        .list(
            Some(&CheckpointConfig::thread("t")),
            &ListOptions::default(),
        )
        .await
        .unwrap();
    let node_write = tuples
        .iter()
        .flat_map(|t| t.pending_writes.iter())
        .find(|w| w.channel == "messages" && w.value.as_list().is_some_and(|l| l.len() == 2))
        .expect("the node's write");
    assert_eq!(
        node_write.value,
        stategraph::list![
            stategraph::list!["ai", "a pair"],
            map! {"role" => "ai", "content" => "a dict"}
        ]
    );
    let state: Vec<Message> =
        stategraph::checkpoint::serde::rust::from_value(out.get("messages").unwrap().clone())
            .unwrap();
    assert!(state.iter().all(|m| m.id.is_some()));
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/prebuilt")
}

fn weather_tool() -> Tool {
    Tool::new(
        "get_weather",
        "The weather in a city.",
        |_: Value| async move { Ok("sunny") },
    )
    .arg("city", "string")
}

/// Each fixture and the stategraph agent built as `scripts/gen_agent_fixtures.py` builds
/// its Python twin.
fn agents() -> Vec<(&'static str, CompiledGraph<MessagesState>)> {
    let model = || FakeChatModel::new(Vec::<Message>::new());
    vec![
        (
            "react_agent",
            create_react_agent(model(), vec![add_tool()])
                .compile()
                .unwrap(),
        ),
        (
            "react_agent_two_tools_interrupt",
            create_react_agent(model(), vec![add_tool(), weather_tool()])
                .interrupt_before(["tools"])
                .compile()
                .unwrap(),
        ),
        (
            "react_agent_no_tools",
            create_react_agent(model(), vec![]).compile().unwrap(),
        ),
    ]
}

#[test]
fn the_agents_mermaid_equals_pythons() {
    for (name, agent) in agents() {
        let expected = std::fs::read_to_string(fixtures().join(format!("{name}.mmd"))).unwrap();
        assert_eq!(agent.get_graph().draw_mermaid(), expected, "{name}");
    }
}

#[test]
fn the_agents_mermaid_equals_what_pinned_python_draws_now() {
    let Some(python) = std::env::var_os("STATEGRAPH_PYTHON") else {
        println!("note: skipping: no pinned Python (STATEGRAPH_PYTHON)");
        return;
    };
    let out = temp_db("mmd");
    let dir = out.parent().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/gen_agent_fixtures.py");
    let status = std::process::Command::new(python)
        .arg(script)
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success());
    for (name, agent) in agents() {
        let expected = std::fs::read_to_string(dir.join(format!("{name}.mmd"))).unwrap();
        assert_eq!(agent.get_graph().draw_mermaid(), expected, "{name}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// What `examples/react_agent.rs` and `examples/python/react_agent.py` print.
const EXAMPLE_OUTPUT: &str = "Let| |me| |add| |them.|1| |+| |2| |=| |3.|
human: What is 1 + 2?
ai: Let me add them.
tool: 3
ai: 1 + 2 = 3.
";

async fn example_output(saver: Arc<dyn CheckpointSaver>) -> String {
    let mut out = Vec::new();
    react_agent_example::run(saver, &mut out).await.unwrap();
    String::from_utf8(out).unwrap()
}

#[tokio::test]
async fn the_react_agent_example_streams_and_stores_on_sqlite() {
    let path = temp_db("example.sqlite");
    let saver = Arc::new(stategraph::sqlite::SqliteSaver::open(&path).unwrap());
    assert_eq!(example_output(saver).await, EXAMPLE_OUTPUT);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn the_react_agent_example_streams_and_stores_on_postgres() {
    let Some((saver, _schema)) = support::savers::postgres().await else {
        return;
    };
    assert_eq!(example_output(saver).await, EXAMPLE_OUTPUT);
}

fn interop_python() -> Option<std::ffi::OsString> {
    if std::env::var("STATEGRAPH_INTEROP").map_or(true, |v| v.is_empty() || v == "0") {
        println!("note: skipping: STATEGRAPH_INTEROP is not set");
        return None;
    }
    Some(std::env::var_os("STATEGRAPH_PYTHON").expect("STATEGRAPH_INTEROP needs STATEGRAPH_PYTHON"))
}

fn run_python_twin(python: &std::ffi::OsStr, args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/python/react_agent.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_python_twin_prints_what_the_example_prints() {
    let Some(python) = interop_python() else {
        return;
    };
    assert_eq!(run_python_twin(&python, &[]), EXAMPLE_OUTPUT);
}

#[tokio::test]
async fn the_python_twin_prints_the_same_on_postgres() {
    let Some(python) = interop_python() else {
        return;
    };
    let Some((_saver, schema)) = support::savers::postgres().await else {
        return;
    };
    let url = schema.url();
    let out = tokio::task::spawn_blocking(move || run_python_twin(&python, &["--postgres", &url]))
        .await
        .unwrap();
    assert_eq!(out, EXAMPLE_OUTPUT);
}

/// A stored value with message ids replaced by their kind (`lc_run--…` for a model's
/// answer, `<uuid>` for one `add_messages` gave), so that two runs compare by shape. In a
/// write (`in_write`), a message without an id reads as one with a uuid: Python sets the
/// id on the written object while its saver stores the write in the background, so a
/// stored write usually has it, and sometimes (the saver first) not.
fn id_shape(v: &Value, in_write: bool) -> Value {
    if let Ok(mut m) = Message::from_value(v) {
        m.id = match m.id {
            Some(id) if id.starts_with("lc_run--") => Some("lc_run--<run>".to_owned()),
            Some(_) => Some("<uuid>".to_owned()),
            None if in_write => Some("<uuid>".to_owned()),
            None => None,
        };
        return m.to_value();
    }
    match v.as_list() {
        Some(items) => Value::list(
            items
                .iter()
                .map(|x| id_shape(x, in_write))
                .collect::<Vec<_>>(),
        ),
        None => v.clone(),
    }
}

/// Per checkpoint, oldest first: its metadata source and step, its messages, and the
/// writes stored against it (channel and value), ids by shape.
async fn thread_shape(saver: &dyn CheckpointSaver, thread: &str) -> Vec<Value> {
    let tuples = saver
        .list(
            Some(&CheckpointConfig::thread(thread)),
            &ListOptions::default(),
        )
        .await
        .unwrap();
    tuples
        .iter()
        .rev()
        .map(|t| {
            let writes: Vec<Value> = t
                .pending_writes
                .iter()
                .map(|w| stategraph::list![w.channel.as_str(), id_shape(&w.value, true)])
                .collect();
            let messages = t
                .checkpoint
                .channel_values
                .get("messages")
                .map(|v| id_shape(v, false))
                .unwrap_or_default();
            let source = t.metadata.source.as_ref().map(|s| s.as_str().to_owned());
            Value::list(vec![
                Value::from(source),
                Value::from(t.metadata.step),
                messages,
                Value::list(writes),
            ])
        })
        .collect()
}

#[tokio::test]
async fn the_agents_stored_thread_has_pythons_shape() {
    // Python's create_react_agent (`version="v1"`, as `.version(AgentVersion::V1)`) on the same
    // script: every checkpoint and every write alike, ids compared by kind.
    let Some(python) = interop_python() else {
        return;
    };
    let path = temp_db("python.sqlite");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/react_agent_thread.py");
    let status = std::process::Command::new(python)
        .arg(script)
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
    let python_saver = stategraph::sqlite::SqliteSaver::open(&path).unwrap();
    let expected = thread_shape(&python_saver, "agent").await;

    let saver = Arc::new(
        stategraph::sqlite::SqliteSaver::open(path.with_file_name("rust.sqlite")).unwrap(),
    );
    let model = FakeChatModel::new([
        Message::ai("Let me add them.").with_tool_calls(vec![ToolCall::new(
            "add",
            map! {"a" => 1, "b" => 2},
            "call-1",
        )]),
        Message::ai("1 + 2 = 3."),
    ]);
    let agent = create_react_agent(model, vec![add_tool()])
        .prompt("You add numbers.")
        .version(AgentVersion::V1)
        .checkpointer(saver.clone())
        .compile()
        .unwrap();
    let _ = agent
        .invoke(
            MessagesState::input(Message::human("What is 1 + 2?")),
            &RunConfig::thread("agent"),
        )
        .await
        .unwrap();
    let got = thread_shape(saver.as_ref(), "agent").await;
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(
            g,
            e,
            "checkpoint {i}:\n  stategraph {}\n  python     {}",
            g.repr(),
            e.repr()
        );
    }

    // And the agent continues Python's thread.
    let model = FakeChatModel::new([Message::ai("You are welcome.")]);
    let agent = create_react_agent(model.clone(), vec![add_tool()])
        .prompt("You add numbers.")
        .checkpointer(Arc::new(python_saver))
        .compile()
        .unwrap();
    let out = agent
        .invoke(
            MessagesState::input(Message::human("Thanks!")),
            &RunConfig::thread("agent"),
        )
        .await
        .unwrap();
    assert_eq!(out.messages.len(), 6);
    assert_eq!(out.messages[3].text(), "1 + 2 = 3.");
    assert_eq!(
        model.calls()[0].len(),
        6,
        "prompt, Python's four messages, the new one"
    );
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

// Issue 21: a script that serves any number of runs (an agent behind the server).
#[tokio::test]
async fn a_cycling_model_starts_its_script_again_and_a_responder_answers_each_call() {
    let model = FakeChatModel::cycle([Message::ai("one"), Message::ai("two")]);
    let agent = create_react_agent(model.clone(), vec![]).compile().unwrap();
    let mut answers = Vec::new();
    for _ in 0..3 {
        let out = agent
            .invoke(MessagesState::input("hi"), &RunConfig::default())
            .await
            .unwrap();
        answers.push(out.messages.last().unwrap().text());
    }
    assert_eq!(answers, ["one", "two", "one"]);
    assert_eq!(model.remaining(), usize::MAX, "a cycle never runs out");
    assert_eq!(model.calls().len(), 3);

    let echo = FakeChatModel::responder(|messages: &[Message]| {
        let last = messages.last().map(Message::text).unwrap_or_default();
        Message::ai(format!("you said {last} ({} messages)", messages.len()))
    });
    let agent = create_react_agent(echo.clone(), vec![]).compile().unwrap();
    let out = agent
        .invoke(MessagesState::input("ping"), &RunConfig::default())
        .await
        .unwrap();
    assert_eq!(
        out.messages.last().unwrap().text(),
        "you said ping (1 messages)"
    );
    assert_eq!(echo.calls().len(), 1);

    // The once-through script still runs out, with Python's StopIteration.
    let once = FakeChatModel::new([Message::ai("only")]);
    let agent = create_react_agent(once, vec![]).compile().unwrap();
    let input = || MessagesState::input("hi");
    let first = agent.invoke(input(), &RunConfig::default()).await.unwrap();
    assert_eq!(first.messages.last().unwrap().text(), "only");
    let err = agent
        .invoke(input(), &RunConfig::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("StopIteration"), "{err}");
}

// Issue 21: `stats` recommends a DeltaChannel for message lists; the agent runs on one.
#[tokio::test]
async fn the_agent_on_delta_messages_stores_deltas_and_rebuilds_the_conversation() {
    let path = temp_db("delta-agent.sqlite");
    let saver = Arc::new(stategraph::sqlite::SqliteSaver::open(&path).unwrap());
    let agent = create_react_agent(script(), vec![add_tool()])
        .checkpointer(saver.clone())
        .compile_with_state::<DeltaMessagesState>()
        .unwrap();
    let config = RunConfig::thread("delta");
    let out = agent
        .invoke(DeltaMessagesState::input("what is 1 + 2?"), &config)
        .await
        .unwrap();
    let expected = [
        (Role::Human, "what is 1 + 2?".to_owned()),
        (Role::Ai, "let me add".into()),
        (Role::Tool, "3".into()),
        (Role::Ai, "1 + 2 = 3".into()),
    ];
    assert_eq!(summary(&out.messages), expected);
    // The last checkpoint holds no message list, only the count since the snapshot; the
    // messages are in the writes, and get_state rebuilds the list from them.
    let latest = saver
        .get_tuple(&CheckpointConfig::thread("delta"))
        .await
        .unwrap()
        .unwrap();
    assert!(
        !latest.checkpoint.channel_values.contains_key("messages"),
        "{:?}",
        latest.checkpoint.channel_values.keys()
    );
    let counters = latest.metadata.extra.get("counters_since_delta_snapshot");
    assert!(
        counters.and_then(|c| c.get("messages")).is_some(),
        "{counters:?}"
    );
    let state = agent.get_state(&config).await.unwrap();
    let rebuilt = DeltaMessagesState::from_values(&state.values).unwrap();
    assert_eq!(summary(&rebuilt.messages), expected);
    // Python's graph with the same channel reads the thread as it is.
    if let Some(python) = interop_python() {
        let out = std::process::Command::new(python)
            .args(["-c", PYTHON_READS_DELTA_MESSAGES])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "human: what is 1 + 2?\nai: let me add\ntool: 3\nai: 1 + 2 = 3\n"
        );
    }
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// Prints the messages of thread `delta` in the SQLite file `argv[1]`, read by a Python
/// graph whose `messages` is `DeltaChannel(_messages_delta_reducer)` (Python's form).
const PYTHON_READS_DELTA_MESSAGES: &str = r#"
import sqlite3, sys
from typing import Annotated
from typing_extensions import TypedDict
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer

class State(TypedDict):
    messages: Annotated[list, DeltaChannel(_messages_delta_reducer)]

builder = StateGraph(State)
builder.add_node("agent", lambda s: {})
builder.add_node("tools", lambda s: {})
builder.add_edge(START, "agent")
builder.add_edge("agent", "tools")
builder.add_edge("tools", END)
graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect(sys.argv[1])))
for m in graph.get_state({"configurable": {"thread_id": "delta"}}).values["messages"]:
    print(f"{m.type}: {m.content}")
"#;
