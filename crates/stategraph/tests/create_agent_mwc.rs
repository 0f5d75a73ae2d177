//! `create_agent` with `TodoListMiddleware`, `LLMToolSelectorMiddleware`,
//! `LLMToolEmulator` and `ModelRouterMiddleware`: the stored thread, the graph's channels
//! and drawing, and what each model was sent (messages, bound tools and their schemas)
//! against the pinned Python's for the same configuration
//! (tests/interop/create_agent_mwc.py), and the typed errors of bad options.

#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions};
use stategraph::prebuilt::agent::{create_agent, Middleware, TodoListMiddleware};
use stategraph::prebuilt::{ChatModel, FakeChatModel, MessagesState, Tool};
use stategraph::sqlite::SqliteSaver;
use stategraph::{
    list, map, CompiledGraph, DynState, Message, NodeContext, NodeError, RunConfig, ToolCall, Value,
};

/// What one model was sent, each call as Python's script prints it.
type Log = Arc<Mutex<Vec<serde_json::Value>>>;

/// A scripted model recording each call's messages and bound tools.
#[derive(Clone)]
struct Recorder {
    inner: FakeChatModel,
    log: Log,
    tools: Vec<serde_json::Value>,
}

impl Recorder {
    fn new(answers: Vec<Message>) -> (Recorder, Log) {
        let log = Log::default();
        let model = Recorder {
            inner: FakeChatModel::new(answers),
            log: log.clone(),
            tools: Vec::new(),
        };
        (model, log)
    }
}

fn message_view(m: &Message) -> serde_json::Value {
    let mut out = serde_json::json!({"type": m.role.type_name(), "content": m.content.to_json()});
    match m.role.type_name() {
        "tool" => {
            out["tool_call_id"] = serde_json::json!(m.tool_call_id);
            out["name"] = serde_json::json!(m.name);
            out["status"] = serde_json::json!(m.status);
        }
        "ai" => {
            let calls: Vec<serde_json::Value> = m
                .tool_calls
                .iter()
                .map(|c| serde_json::json!({"name": c.name, "args": c.args.to_json(), "id": c.id}))
                .collect();
            out["tool_calls"] = serde_json::json!(calls);
        }
        _ => {}
    }
    out
}

#[async_trait]
impl ChatModel for Recorder {
    async fn invoke(&self, messages: &[Message], ctx: &NodeContext) -> Result<Message, NodeError> {
        let sent: Vec<serde_json::Value> = messages.iter().map(message_view).collect();
        self.log
            .lock()
            .push(serde_json::json!({"messages": sent, "tools": self.tools}));
        self.inner.invoke(messages, ctx).await
    }

    fn bind_tools(&self, tools: &[Tool]) -> Arc<dyn ChatModel> {
        let mut bound = self.clone();
        bound.tools = tools
            .iter()
            .map(|t| serde_json::json!({"name": t.name(), "description": t.description(), "schema": t.schema()}))
            .collect();
        Arc::new(bound)
    }
}

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
    .with_schema(serde_json::json!({
        "description": "Add two integers.",
        "properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}},
        "required": ["a", "b"],
        "title": "add",
        "type": "object",
    }))
}

fn todo_call(i: u32, todos: Value) -> ToolCall {
    ToolCall::new("write_todos", map! {"todos" => todos}, format!("todo-{i}"))
}

fn plan() -> Value {
    list![
        map! {"content" => "Add 1 and 2", "status" => "in_progress", "note" => "dropped"},
        map! {"content" => "Answer", "status" => "pending"},
    ]
}

fn done() -> Value {
    list![
        map! {"content" => "Add 1 and 2", "status" => "completed"},
        map! {"status" => "in_progress", "content" => "Answer"},
    ]
}

fn add_call() -> ToolCall {
    ToolCall::new("add", map! {"a" => 1, "b" => 2}, "call-1")
}

/// A scenario of the Python script: the agent's answers, its middleware and prompt.
struct Scenario {
    answers: Vec<Message>,
    middleware: Vec<Arc<dyn Middleware>>,
    prompt: Option<&'static str>,
}

fn scenario(name: &str) -> Scenario {
    let ai = |text: &str, id: &str, calls: Vec<ToolCall>| {
        Message::ai(text).with_id(id).with_tool_calls(calls)
    };
    let todo: Arc<dyn Middleware> = Arc::new(TodoListMiddleware::new());
    match name {
        "todo" => Scenario {
            answers: vec![
                ai("", "ai-1", vec![todo_call(1, plan())]),
                ai("Adding.", "ai-2", vec![add_call(), todo_call(2, done())]),
                ai("1 + 2 = 3.", "ai-3", vec![]),
            ],
            middleware: vec![todo],
            prompt: Some("You add numbers."),
        },
        "todo_parallel" => Scenario {
            answers: vec![
                ai(
                    "",
                    "ai-1",
                    vec![todo_call(1, plan()), todo_call(2, done()), add_call()],
                ),
                ai("3.", "ai-2", vec![]),
            ],
            middleware: vec![Arc::new(
                TodoListMiddleware::new()
                    .system_prompt("Plan first.")
                    .tool_description("Write the plan."),
            )],
            prompt: None,
        },
        "todo_bad" => {
            let bad = list![
                map! {"content" => "x", "status" => "done"},
                map! {"status" => "pending"},
                7
            ];
            let not_list = ToolCall::new("write_todos", map! {"todos" => "x"}, "todo-2");
            Scenario {
                answers: vec![
                    ai("", "ai-1", vec![todo_call(1, bad)]),
                    ai("", "ai-2", vec![not_list]),
                    ai("ok", "ai-3", vec![]),
                ],
                middleware: vec![todo],
                prompt: Some("You add numbers."),
            }
        }
        other => panic!("no scenario {other}"),
    }
}

/// The agent of `scenario` on `saver`, with the log of what its model was sent.
fn agent(name: &str, saver: Arc<dyn CheckpointSaver>) -> (CompiledGraph<DynState>, Log) {
    let s = scenario(name);
    let (model, log) = Recorder::new(s.answers);
    let mut b = create_agent(model, vec![add_tool()]).checkpointer(saver);
    if let Some(prompt) = s.prompt {
        b = b.system_prompt(prompt);
    }
    for m in s.middleware {
        b = b.middleware_arc(m);
    }
    (b.compile().unwrap(), log)
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stategraph-mwc-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the Python script on `db`; what it printed.
fn python(db: &Path, scenario: &str) -> Option<serde_json::Value> {
    let python = support::python::python()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/create_agent_mwc.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(db)
        .arg(scenario)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
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
/// versions seen, and the writes stored against it, ids by kind.
async fn thread(saver: &dyn CheckpointSaver) -> Vec<String> {
    let config = CheckpointConfig::thread("agent");
    let list = saver
        .list(Some(&config), &ListOptions::default())
        .await
        .unwrap();
    list.iter()
        .rev()
        .map(|t| {
            let c = &t.checkpoint;
            let versions = |v: &stategraph::checkpoint::ChannelVersions| {
                let parts = v.iter().map(|(k, v)| format!("{k}={}", v.integer_part()));
                parts.collect::<Vec<_>>().join(",")
            };
            let seen = c
                .versions_seen
                .iter()
                .map(|(n, v)| format!("{n}:[{}]", versions(v)));
            let values = c
                .channel_values
                .iter()
                .map(|(k, v)| format!("{k}={}", v.repr()));
            let writes = t
                .pending_writes
                .iter()
                .map(|w| format!("{}={}", w.channel, w.value.repr()));
            let mut meta = vec![format!("{:?} {:?}", t.metadata.source, t.metadata.step)];
            meta.extend(
                t.metadata
                    .extra
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.repr())),
            );
            shape_ids(&format!(
                "meta {}\nvalues {}\nversions {}\nseen {}\nwrites {}",
                meta.join(" "),
                values.collect::<Vec<_>>().join(" | "),
                versions(&c.channel_versions),
                seen.collect::<Vec<_>>().join(" "),
                writes.collect::<Vec<_>>().join(" | ")
            ))
        })
        .collect()
}

/// Python and stategraph run `name` on two files: the same checkpoints and writes, the
/// same channels and drawing, and each model sent the same messages and tools.
async fn like_python(name: &str, logs: &[(&str, Log)]) -> Option<()> {
    let dir = temp_dir();
    let py_db = dir.join("python.sqlite");
    let expected = python(&py_db, name)?;
    let saver: Arc<dyn CheckpointSaver> =
        Arc::new(SqliteSaver::open(dir.join("rust.sqlite")).unwrap());
    let (agent, log) = self::agent(name, saver.clone());
    let input = MessagesState::input(Message::human("What is 1 + 2?").with_id("h-1"));
    let _ = agent
        .invoke(input, &RunConfig::thread("agent"))
        .await
        .unwrap();

    let mut all: Vec<(&str, Log)> = vec![("agent", log)];
    all.extend(logs.iter().map(|(n, l)| (*n, l.clone())));
    for (label, log) in all {
        let got = serde_json::Value::Array(log.lock().clone());
        assert_eq!(
            got, expected["calls"][label],
            "{name}: the calls of model {label}"
        );
    }
    let drawing = agent.get_graph().draw_mermaid();
    assert_eq!(drawing, expected["mermaid"].as_str().unwrap(), "{name}");
    let mut channels: Vec<serde_json::Value> = agent
        .pregel()
        .channels
        .iter()
        .map(|(name, ch)| serde_json::json!([name, ch.kind()]))
        .collect();
    let mut want = expected["channels"].as_array().unwrap().clone();
    want.sort_by_key(|c| c[0].as_str().unwrap().to_owned());
    channels.sort_by_key(|c| c[0].as_str().unwrap().to_owned());
    assert_eq!(channels, want, "{name}");

    let rust = thread(saver.as_ref()).await;
    let py = thread(&SqliteSaver::open(&py_db).unwrap()).await;
    for (i, (r, p)) in rust.iter().zip(&py).enumerate() {
        assert_eq!(
            r, p,
            "{name}: checkpoint {i} differs:\n--- stategraph\n{r}\n--- python\n{p}"
        );
    }
    assert_eq!(rust.len(), py.len(), "{name}: checkpoint count");
    Some(())
}

#[tokio::test]
async fn todo_list_stores_pythons_thread_and_sends_pythons_prompt_and_tool() {
    like_python("todo", &[]).await;
}

#[tokio::test]
async fn todo_list_refuses_parallel_calls_as_python() {
    like_python("todo_parallel", &[]).await;
}

#[tokio::test]
async fn todo_list_answers_bad_todos_with_pydantics_errors() {
    like_python("todo_bad", &[]).await;
}
