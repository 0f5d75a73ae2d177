//! langchain 1.x's `create_agent` with middleware (`stategraph::prebuilt::agent`):
//! the graph, its drawing and the stored checkpoints against the pinned Python's
//! (tests/interop/create_agent_thread.py), HITL threads resumed across the two, and the
//! built-in middleware.

#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions};
use stategraph::prebuilt::agent::{
    create_agent, ContextSize, HumanInTheLoopMiddleware, LimitExit, ModelCallLimitMiddleware,
    ModelFallbackMiddleware, ModelRetryMiddleware, ResponseFormat, SummarizationMiddleware,
    ToolCallLimitMiddleware, ToolLimitExit,
};
use stategraph::prebuilt::{FakeChatModel, MessagesState, Tool};
use stategraph::sqlite::SqliteSaver;
use stategraph::{map, Command, CompiledGraph, DynState, Message, RunConfig, ToolCall, Value};

fn add_tool() -> Tool {
    Tool::new(
        "add",
        "Add two integers.",
        |a: serde_json::Value| async move {
            Ok::<_, stategraph::prebuilt::ToolError>(
                a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0),
            )
        },
    )
    .arg("a", "integer")
    .arg("b", "integer")
}

fn call(i: u32, a: i64, b: i64) -> ToolCall {
    ToolCall::new("add", map! {"a" => a, "b" => b}, format!("call-{i}"))
}

/// The script's answers of tests/interop/create_agent_thread.py.
fn script(scenario: &str) -> Vec<Message> {
    match scenario {
        "two" => vec![
            Message::ai("Two sums.")
                .with_id("ai-1")
                .with_tool_calls(vec![call(1, 1, 2), call(2, 3, 4)]),
            Message::ai("Done.").with_id("ai-2"),
        ],
        _ => vec![
            Message::ai("")
                .with_id("ai-1")
                .with_tool_calls(vec![call(1, 1, 2)]),
            Message::ai("1 + 2 = 3.").with_id("ai-2"),
        ],
    }
}

fn agent(
    scenario: &str,
    answers: Vec<Message>,
    saver: Arc<dyn CheckpointSaver>,
) -> CompiledGraph<DynState> {
    let mut b = create_agent(FakeChatModel::new(answers), vec![add_tool()])
        .system_prompt("You add numbers.")
        .checkpointer(saver);
    if scenario != "plain" {
        b = b.middleware(HumanInTheLoopMiddleware::new().interrupt_on("add"));
    }
    b.compile().unwrap()
}

fn temp_dir() -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("stategraph-create-agent-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the Python script; its standard output.
fn python(args: &[&str]) -> Option<String> {
    let python = support::python::python()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/create_agent_thread.py");
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
    Some(String::from_utf8(out.stdout).unwrap())
}

/// `text` with each uuid and each 32-digit hex id replaced by its kind.
fn shape_ids(text: &str) -> String {
    let b = text.as_bytes();
    let hex = |c: u8| c.is_ascii_hexdigit() && !c.is_ascii_uppercase();
    let (mut out, mut i) = (String::new(), 0);
    while i < b.len() {
        let run = b[i..].iter().take_while(|&&c| hex(c) || c == b'-').count();
        let word = &text[i..i + run];
        let uuid = word.len() == 36 && word.matches('-').count() == 4;
        if uuid || (word.len() == 32 && !word.contains('-')) {
            out.push_str(if uuid { "<uuid>" } else { "<hex>" });
            i += run;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Per checkpoint, oldest first: metadata, channel values, versions (integer parts),
/// versions seen, and the writes stored against it (channel and value), ids by kind.
async fn thread(saver: &dyn CheckpointSaver) -> Vec<String> {
    let list = saver
        .list(
            Some(&CheckpointConfig::thread("agent")),
            &ListOptions::default(),
        )
        .await
        .unwrap();
    list.iter()
        .rev()
        .map(|t| {
            let c = &t.checkpoint;
            let versions = |v: &stategraph::checkpoint::ChannelVersions| {
                v.iter()
                    .map(|(k, v)| format!("{k}={}", v.integer_part()))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let seen: Vec<String> = c
                .versions_seen
                .iter()
                .map(|(n, v)| format!("{n}:[{}]", versions(v)))
                .collect();
            let values: Vec<String> = c
                .channel_values
                .iter()
                .map(|(k, v)| format!("{k}={}", v.repr()))
                .collect();
            let writes: Vec<String> = t
                .pending_writes
                .iter()
                .map(|w| format!("{}={}", w.channel, w.value.repr()))
                .map(|w| without_summary_id(&w))
                .collect();
            let mut meta: Vec<String> =
                vec![format!("{:?} {:?}", t.metadata.source, t.metadata.step)];
            meta.extend(
                t.metadata
                    .extra
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.repr())),
            );
            shape_ids(&format!(
                "meta {}\nvalues {}\nversions {}\nseen {}\nwrites {}",
                meta.join(" "),
                values.join(" | "),
                versions(&c.channel_versions),
                seen.join(" "),
                writes.join(" | ")
            ))
        })
        .collect()
}

/// Python's write of a summary message has its id or not, by a race (the reducer gives the
/// stored object an id while the saver may still be encoding it): compared without it.
fn without_summary_id(write: &str) -> String {
    const AT: &str = "'summarization'}, id='";
    match write.split_once(AT) {
        Some((head, tail)) => match tail.find('\'') {
            Some(end) => format!("{head}'summarization'}}{}", &tail[end + 1..]),
            None => write.to_owned(),
        },
        None => write.to_owned(),
    }
}

fn assert_same_threads(rust: &[String], python: &[String]) {
    for (i, (r, p)) in rust.iter().zip(python).enumerate() {
        assert_eq!(
            r, p,
            "checkpoint {i} differs:\n--- stategraph\n{r}\n--- python\n{p}"
        );
    }
    assert_eq!(rust.len(), python.len(), "checkpoint count");
}

fn decisions(json: &str) -> Value {
    serde_json::from_str(json).unwrap()
}

fn resume(json: &str) -> Command<()> {
    Command::default().with_resume(decisions(json))
}

const APPROVE: &str = r#"{"decisions": [{"type": "approve"}]}"#;
const EDIT_REJECT: &str = r#"{"decisions": [{"type": "edit", "edited_action": {"name": "add", "args": {"a": 10, "b": 20}}}, {"type": "reject", "message": "no"}]}"#;

#[test]
fn the_drawing_and_the_channels_are_pythons() {
    let scenarios = [
        "plain",
        "hitl",
        "model_limit",
        "tool_limit",
        "summary",
        "retry",
    ];
    let more = ["structured_tool", "structured_provider"];
    for scenario in scenarios.into_iter().chain(more) {
        let dir = temp_dir();
        let db = dir.join("draw.sqlite");
        let Some(out) = python(&[db.to_str().unwrap(), scenario, "draw"]) else {
            return;
        };
        let expected: serde_json::Value = serde_json::from_str(&out).unwrap();
        let saver: Arc<dyn CheckpointSaver> =
            Arc::new(SqliteSaver::open(dir.join("rust.sqlite")).unwrap());
        let graph = match scenario {
            "plain" | "hitl" => agent(scenario, vec![], saver),
            _ => extra_agent(scenario, saver),
        };
        let drawing = graph.get_graph().draw_mermaid();
        assert_eq!(drawing, expected["mermaid"].as_str().unwrap(), "{scenario}");
        let channels: Vec<serde_json::Value> = graph
            .pregel()
            .channels
            .iter()
            .map(|(name, ch)| serde_json::json!([name, ch.kind()]))
            .collect();
        let mut want = expected["channels"].as_array().unwrap().clone();
        let mut got = channels;
        // The same channels; Python lists the engine's after the state's, in its order.
        want.sort_by_key(|c| c[0].as_str().unwrap().to_owned());
        got.sort_by_key(|c| c[0].as_str().unwrap().to_owned());
        assert_eq!(got, want, "{scenario}");
    }
}

/// Python runs `scenario` to its end (resumed with `answer` when it pauses), stategraph
/// the same on another file: the same checkpoints and writes.
async fn same_thread_as_python(scenario: &str, answer: Option<&str>) {
    let dir = temp_dir();
    let py_db = dir.join("python.sqlite");
    let py = py_db.to_str().unwrap();
    if python(&[py, scenario, "run"]).is_none() {
        return;
    }
    if let Some(answer) = answer {
        python(&[py, scenario, "resume", answer]);
    }
    let saver: Arc<dyn CheckpointSaver> =
        Arc::new(SqliteSaver::open(dir.join("rust.sqlite")).unwrap());
    let config = RunConfig::thread("agent");
    let input = MessagesState::input(Message::human("What is 1 + 2?").with_id("h-1"));
    let answers = script(scenario);
    let g = agent(scenario, answers.clone(), saver.clone());
    let out = g.invoke(input, &config).await.unwrap();
    if let Some(answer) = answer {
        assert_eq!(out.interrupts.len(), 1);
        let g = agent(scenario, answers[1..].to_vec(), saver.clone());
        let _ = g.invoke(resume(answer), &config).await.unwrap();
    }
    let expected = thread(&SqliteSaver::open(&py_db).unwrap()).await;
    assert_same_threads(&thread(saver.as_ref()).await, &expected);
}

#[tokio::test]
async fn a_plain_agent_stores_pythons_checkpoints() {
    same_thread_as_python("plain", None).await;
}

#[tokio::test]
async fn an_approved_call_stores_pythons_checkpoints() {
    same_thread_as_python("hitl", Some(APPROVE)).await;
}

#[tokio::test]
async fn an_edit_and_a_reject_store_pythons_checkpoints() {
    same_thread_as_python("two", Some(EDIT_REJECT)).await;
}

/// The texts of the messages of `out`.
fn texts(out: &stategraph::Outcome<DynState>) -> Vec<String> {
    let state = stategraph::prebuilt::agent::AgentState::from_values(out.state.0.clone()).unwrap();
    state.messages().iter().map(Message::text).collect()
}

#[tokio::test]
async fn stategraph_resumes_a_thread_python_paused() {
    let dir = temp_dir();
    let db = dir.join("python.sqlite");
    let path = db.to_str().unwrap();
    if python(&[path, "two", "run"]).is_none() {
        return;
    }
    let saver: Arc<dyn CheckpointSaver> = Arc::new(SqliteSaver::open(&db).unwrap());
    let g = agent("two", script("two")[1..].to_vec(), saver);
    let out = g
        .invoke(resume(EDIT_REJECT), &RunConfig::thread("agent"))
        .await
        .unwrap();
    // Python resuming its own thread the same way ends with the same conversation.
    let other = dir.join("python-2.sqlite");
    let other = other.to_str().unwrap();
    python(&[other, "two", "run"]);
    let expected: Vec<String> =
        serde_json::from_str(&python(&[other, "two", "resume", EDIT_REJECT]).unwrap()).unwrap();
    assert_eq!(texts(&out), expected);
    assert!(expected[3].starts_with("Note: a human reviewer replaced this tool call"));
    assert!(expected[3].ends_with(
        "Executed instead: add with arguments {\"a\": 10, \"b\": 20}.\n\nTool response:\n30"
    ));
}

#[tokio::test]
async fn python_resumes_a_thread_stategraph_paused() {
    let dir = temp_dir();
    let db = dir.join("rust.sqlite");
    let saver: Arc<dyn CheckpointSaver> = Arc::new(SqliteSaver::open(&db).unwrap());
    let config = RunConfig::thread("agent");
    let input = MessagesState::input(Message::human("What is 1 + 2?").with_id("h-1"));
    let out = agent("two", script("two"), saver.clone())
        .invoke(input.clone(), &config)
        .await
        .unwrap();
    let request = &out.interrupts[0].value;
    assert_eq!(
        request
            .get("action_requests")
            .and_then(Value::as_list)
            .map(<[Value]>::len),
        Some(2)
    );
    let Some(printed) = python(&[db.to_str().unwrap(), "two", "resume", EDIT_REJECT]) else {
        return;
    };
    let got: Vec<String> = serde_json::from_str(&printed).unwrap();
    // stategraph resuming its own thread the same way ends with the same conversation.
    let saver: Arc<dyn CheckpointSaver> =
        Arc::new(SqliteSaver::open(dir.join("rust-2.sqlite")).unwrap());
    let _ = agent("two", script("two"), saver.clone())
        .invoke(input, &config)
        .await
        .unwrap();
    let out = agent("two", script("two")[1..].to_vec(), saver)
        .invoke(resume(EDIT_REJECT), &config)
        .await
        .unwrap();
    assert_eq!(got, texts(&out));
}

/// A model failing its first `fails` calls with `ValueError('boom')` (clones share the
/// count and the script, as the Python model's bound copies do).
#[derive(Clone)]
struct Failing {
    fails: Arc<std::sync::atomic::AtomicUsize>,
    inner: FakeChatModel,
}

impl Failing {
    fn new(fails: usize, answers: Vec<Message>) -> Failing {
        Failing {
            fails: Arc::new(fails.into()),
            inner: FakeChatModel::new(answers),
        }
    }
}

#[async_trait::async_trait]
impl stategraph::prebuilt::ChatModel for Failing {
    async fn invoke(
        &self,
        messages: &[Message],
        ctx: &stategraph::NodeContext,
    ) -> Result<Message, stategraph::NodeError> {
        use std::sync::atomic::Ordering;
        if self
            .fails
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(stategraph::NodeError::named("ValueError", "boom"));
        }
        self.inner.invoke(messages, ctx).await
    }

    fn bind_tools(&self, _: &[Tool]) -> Arc<dyn stategraph::prebuilt::ChatModel> {
        Arc::new(self.clone())
    }
}

/// An AI message whose one tool call did not parse.
fn invalid_call() -> Message {
    let mut m = Message::ai("").with_id("ai-1");
    let call = map! {"type" => "invalid_tool_call", "id" => "call-x", "name" => "add", "args" => "{bad", "error" => Value::Nil};
    m.invalid_tool_calls = vec![call];
    m
}

fn sum_schema() -> serde_json::Value {
    serde_json::json!({
        "title": "Sum",
        "description": "The sum of two numbers.",
        "type": "object",
        "properties": {"total": {"type": "integer"}},
        "required": ["total"],
    })
}

fn sum_call(args: Value) -> Message {
    Message::ai("")
        .with_id("ai-1")
        .with_tool_calls(vec![ToolCall::new("Sum", args, "call-s")])
}

/// The agent of one of the script's `EXTRA` scenarios.
fn extra_agent(scenario: &str, saver: Arc<dyn CheckpointSaver>) -> CompiledGraph<DynState> {
    let two = vec![
        Message::ai("")
            .with_id("ai-1")
            .with_tool_calls(vec![call(1, 1, 2), call(2, 3, 4)]),
        Message::ai("Done.").with_id("ai-2"),
    ];
    let plain = script("plain");
    let summary = || FakeChatModel::new([Message::ai("The user asked for 1 + 2.")]);
    let retry = || ModelRetryMiddleware {
        initial_delay: std::time::Duration::ZERO,
        jitter: false,
        ..Default::default()
    };
    let b = |model: Failing| {
        create_agent(model, vec![add_tool()])
            .system_prompt("You add numbers.")
            .checkpointer(saver.clone())
    };
    let b = match scenario {
        "model_limit" => b(Failing::new(0, plain))
            .middleware(ModelCallLimitMiddleware::new(None, Some(1), LimitExit::End).unwrap()),
        "tool_limit" => b(Failing::new(0, two)).middleware(
            ToolCallLimitMiddleware::new(None, None, Some(1), ToolLimitExit::Continue).unwrap(),
        ),
        "tool_limit_end" => b(Failing::new(0, two)).middleware(
            ToolCallLimitMiddleware::new(Some("add"), None, Some(1), ToolLimitExit::End).unwrap(),
        ),
        "summary" => b(Failing::new(0, plain)).middleware(
            SummarizationMiddleware::new(
                summary(),
                vec![ContextSize::Messages(3)],
                ContextSize::Messages(2),
            )
            .unwrap(),
        ),
        "summary_tokens" => b(Failing::new(0, plain)).middleware(
            SummarizationMiddleware::new(
                summary(),
                vec![ContextSize::Tokens(41)],
                ContextSize::Tokens(30),
            )
            .unwrap(),
        ),
        "retry" => b(Failing::new(2, plain)).middleware(retry()),
        "retry_fail" => b(Failing::new(9, plain)).middleware(retry()),
        "fallback" => b(Failing::new(99, vec![])).middleware(ModelFallbackMiddleware::new(
            FakeChatModel::new(plain),
            vec![],
        )),
        "structured_tool" => b(Failing::new(0, vec![sum_call(map! {"total" => 3})]))
            .response_format(ResponseFormat::tool(sum_schema())),
        "structured_retry" => b(Failing::new(
            0,
            vec![sum_call(map! {}), sum_call(map! {"total" => 3})],
        ))
        .response_format(ResponseFormat::tool(sum_schema())),
        "invalid" => b(Failing::new(
            0,
            vec![
                invalid_call(),
                Message::ai("You are welcome.").with_id("ai-2"),
            ],
        )),
        "structured_provider" => b(Failing::new(
            0,
            vec![Message::ai(r#"{"total": 3}"#).with_id("ai-1")],
        ))
        .response_format(ResponseFormat::provider(sum_schema())),
        other => panic!("no scenario {other}"),
    };
    b.compile().unwrap()
}

/// The last checkpoint's state channels (not the engine's), ids by kind.
async fn final_state(saver: &dyn CheckpointSaver) -> String {
    let t = saver
        .get_tuple(&CheckpointConfig::thread("agent"))
        .await
        .unwrap()
        .unwrap();
    let values: Vec<String> = t
        .checkpoint
        .channel_values
        .iter()
        .filter(|(k, _)| !k.starts_with("branch:") && !k.starts_with("__"))
        .map(|(k, v)| format!("{k}={}", v.repr()))
        .collect();
    shape_ids(&values.join("\n"))
}

/// Python runs `scenario`, stategraph the same: the same final state and checkpoints.
async fn extra_like_python(scenario: &str, whole_thread: bool) {
    let dir = temp_dir();
    let py_db = dir.join("python.sqlite");
    if python(&[py_db.to_str().unwrap(), scenario, "run"]).is_none() {
        return;
    }
    let saver: Arc<dyn CheckpointSaver> =
        Arc::new(SqliteSaver::open(dir.join("rust.sqlite")).unwrap());
    let input = MessagesState::input(Message::human("What is 1 + 2?").with_id("h-1"));
    let agent = extra_agent(scenario, saver.clone());
    let _ = agent
        .invoke(input, &RunConfig::thread("agent"))
        .await
        .unwrap();
    if scenario == "invalid" {
        let thanks = MessagesState::input(Message::human("Thanks!").with_id("h-2"));
        let _ = agent
            .invoke(thanks, &RunConfig::thread("agent"))
            .await
            .unwrap();
    }
    let py = SqliteSaver::open(&py_db).unwrap();
    assert_eq!(
        final_state(saver.as_ref()).await,
        final_state(&py).await,
        "{scenario}"
    );
    if whole_thread {
        assert_same_threads(&thread(saver.as_ref()).await, &thread(&py).await);
    }
}

#[tokio::test]
async fn model_call_limit_ends_as_python() {
    extra_like_python("model_limit", true).await;
}

#[tokio::test]
async fn tool_call_limit_blocks_and_ends_as_python() {
    extra_like_python("tool_limit", true).await;
    extra_like_python("tool_limit_end", true).await;
}

#[tokio::test]
async fn summarization_stores_pythons_messages() {
    extra_like_python("summary", true).await;
    extra_like_python("summary_tokens", true).await;
}

#[tokio::test]
async fn model_retry_and_fallback_answer_as_python() {
    extra_like_python("retry", true).await;
    extra_like_python("retry_fail", true).await;
    extra_like_python("fallback", true).await;
}

#[tokio::test]
async fn structured_output_stores_pythons_checkpoints() {
    extra_like_python("structured_tool", true).await;
    extra_like_python("structured_retry", true).await;
    extra_like_python("structured_provider", true).await;
}

#[tokio::test]
async fn an_invalid_tool_call_is_answered_before_the_next_model_call_as_python() {
    extra_like_python("invalid", true).await;
}
