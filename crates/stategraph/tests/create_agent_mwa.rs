//! langchain 1.5.0's `ToolRetryMiddleware`, `ToolErrorMiddleware`,
//! `ModelRefusalMiddleware` and the decorator forms (`before_model(..)`,
//! `dynamic_prompt(..)`, ...) in `create_agent`: each scenario of
//! tests/interop/create_agent_mwa.py stores the same thread as Python's.
//!
//! The threads Python stored are kept in tests/interop/create_agent_mwa/SCENARIO.txt;
//! with the pinned Python each test also checks its fixture is still what Python stores
//! (`STATEGRAPH_WRITE_FIXTURES=1` writes them anew).

#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions};
use stategraph::prebuilt::agent::{
    after_agent, after_model, before_agent, before_model, create_agent, dynamic_prompt,
    wrap_model_call, wrap_tool_call, AgentBuilder, AgentUpdate, JumpTo, ModelRefusalMiddleware,
    ToolErrorMiddleware, ToolRetryFailure, ToolRetryMiddleware,
};
use stategraph::prebuilt::{ChatModel, FakeChatModel, MessagesState, Tool, ToolError};
use stategraph::sqlite::SqliteSaver;
use stategraph::{map, Error, Message, NodeContext, NodeError, RunConfig, ToolCall, Value};

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stategraph-mwa-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn adder(name: &str, description: &str, fails: Arc<AtomicUsize>) -> Tool {
    Tool::new(name, description, move |a: serde_json::Value| {
        let fails = fails.clone();
        async move {
            if fails
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                return Err(ToolError::named("ValueError", "boom"));
            }
            Ok(a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0))
        }
    })
    .arg("a", "integer")
    .arg("b", "integer")
}

fn calls(name: &str) -> Vec<Message> {
    let call = ToolCall::new(name, map! {"a" => 1, "b" => 2}, "call-1");
    vec![
        Message::ai("").with_id("ai-1").with_tool_calls(vec![call]),
        Message::ai("1 + 2 = 3.").with_id("ai-2"),
    ]
}

/// The script's `on_error`: `ValueError`s go back to the model.
fn on_error() -> ToolErrorMiddleware {
    ToolErrorMiddleware::new(|err: &NodeError, request| {
        let kind = err.repr()?.split('(').next()?.to_owned();
        (kind == "ValueError")
            .then(|| format!("`{}` failed with {kind}; fix the input.", request.call.name))
    })
}

fn retry(max_retries: u32) -> ToolRetryMiddleware {
    ToolRetryMiddleware::new()
        .max_retries(max_retries)
        .delays(0.0, 60.0, 2.0)
        .unwrap()
        .jitter(false)
}

/// The decorated functions of the script's "decorated" scenario.
fn decorated(b: AgentBuilder) -> AgentBuilder {
    b.middleware(before_agent("start", |_, _| async {
        Ok(AgentUpdate::none())
    }))
    .middleware(after_model("audit", |state, _| async move {
        let id = format!("audit-{}", state.messages().len());
        Ok(AgentUpdate::none().messages(vec![Message::human("audited").with_id(id)]))
    }))
    .middleware(after_agent("finish", |_, _| async {
        Ok(AgentUpdate::none())
    }))
    .middleware(wrap_model_call(
        "passthrough",
        |request, handler| async move { handler.call(request).await },
    ))
    .middleware(wrap_tool_call("tens", |mut request, handler| async move {
        request.call.args = map! {"a" => 10, "b" => 20};
        handler.call(request).await
    }))
    .middleware(dynamic_prompt("prompt", |request| {
        format!(
            "You add numbers; {} messages so far.",
            request.messages.len()
        )
    }))
}

/// The script's `enough`: ends the run once a tool has answered.
fn enough(b: AgentBuilder) -> AgentBuilder {
    let hook = before_model("enough", |state, _: NodeContext| async move {
        let answered = state.messages().iter().any(|m| m.tool_call_id.is_some());
        let update = AgentUpdate::none();
        Ok(if answered {
            update.jump_to(JumpTo::End)
        } else {
            update
        })
    });
    b.middleware(hook.can_jump_to([JumpTo::End]))
}

/// The agent of the script's `scenario` and `flaky`'s failures.
fn agent(scenario: &str, model: impl ChatModel, saver: Arc<dyn CheckpointSaver>) -> AgentBuilder {
    let fails = |n: usize| Arc::new(AtomicUsize::new(n));
    let n = match scenario {
        "retry" => 2,
        "retry_filtered" | "retry_on" => 1,
        s if s.starts_with("retry") || s.contains("error") => 9,
        _ => 0,
    };
    let tools = vec![
        adder("add", "Add two integers.", fails(0)),
        adder("flaky", "Add two integers, failing at first.", fails(n)),
    ];
    let b = create_agent(model, tools)
        .system_prompt("You add numbers.")
        .checkpointer(saver);
    match scenario {
        "retry" | "retry_fail" => b.middleware(retry(2)),
        "retry_once" => b.middleware(retry(0)),
        "retry_custom" => b.middleware(retry(1).on_failure(ToolRetryFailure::Message(Arc::new(
            |err: &NodeError| {
                let repr = err.repr().unwrap_or_default();
                format!(
                    "custom: {}",
                    repr.trim_start_matches("ValueError('")
                        .trim_end_matches("')")
                )
            },
        )))),
        "retry_error" => b.middleware(retry(1).on_failure(ToolRetryFailure::Error)),
        "retry_filtered" => b.middleware(retry(2).tools(["add"])),
        "retry_on" => b.middleware(retry(2).retry_on_kinds(["KeyError"])),
        "tool_error" => b.middleware(on_error()),
        "tool_error_other" => b.middleware(on_error().tools(["add"])),
        "error_and_retry" => b
            .middleware(on_error())
            .middleware(retry(1).on_failure(ToolRetryFailure::Error)),
        "refusal" | "no_refusal" => b.middleware(ModelRefusalMiddleware::new()),
        "decorated" => decorated(b),
        "decorated_jump" => enough(b),
        _ => panic!("no scenario {scenario}"),
    }
}

fn answers(scenario: &str) -> Vec<Message> {
    match scenario {
        "refusal" => {
            let block = map! {"type" => "refusal", "refusal" => "I cannot help.", "extras" => map! {"category" => "cyber"}};
            vec![Message::ai(Value::List(vec![block].into())).with_id("ai-1")]
        }
        "no_refusal" | "decorated" | "decorated_jump" => calls("add"),
        _ => calls("flaky"),
    }
}

/// `text` with each uuid replaced by `<uuid>`.
fn shape_ids(text: &str) -> String {
    let b = text.as_bytes();
    let (mut out, mut i) = (String::new(), 0);
    while i < b.len() {
        let run = b[i..]
            .iter()
            .take_while(|&&c| (c.is_ascii_hexdigit() && !c.is_ascii_uppercase()) || c == b'-')
            .count();
        let word = &text[i..i + run];
        if word.len() == 36 && word.matches('-').count() == 4 {
            out.push_str("<uuid>");
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
/// versions seen and the writes stored against it, uuids by kind.
async fn thread(saver: &dyn CheckpointSaver) -> String {
    let config = CheckpointConfig::thread("agent");
    let list = saver
        .list(Some(&config), &ListOptions::default())
        .await
        .unwrap();
    let versions = |v: &stategraph::checkpoint::ChannelVersions| {
        let parts = v.iter().map(|(k, v)| format!("{k}={}", v.integer_part()));
        parts.collect::<Vec<_>>().join(",")
    };
    let mut out = String::new();
    for t in list.iter().rev() {
        let c = &t.checkpoint;
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
        out.push_str(&format!(
            "meta {}\nvalues {}\nversions {}\nseen {}\nwrites {}\n\n",
            meta.join(" "),
            values.collect::<Vec<_>>().join(" | "),
            versions(&c.channel_versions),
            seen.collect::<Vec<_>>().join(" "),
            writes.collect::<Vec<_>>().join(" | ")
        ));
    }
    shape_ids(&out)
}

fn fixture(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop/create_agent_mwa")
        .join(format!("{scenario}.txt"))
}

/// Python's thread for `scenario` (what it printed first): run now with the pinned
/// Python, checked against (or, with `STATEGRAPH_WRITE_FIXTURES=1`, written to) the
/// fixture; the fixture alone without Python.
async fn python_thread(scenario: &str, dir: &Path) -> (String, Option<String>) {
    let kept = std::fs::read_to_string(fixture(scenario)).ok();
    let Some(python) = support::python::python() else {
        return (kept.expect("no fixture and no Python"), None);
    };
    let db = dir.join("python.sqlite");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/create_agent_mwa.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .args([db.to_str().unwrap(), scenario])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let printed = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let py = thread(&SqliteSaver::open(&db).unwrap()).await;
    if std::env::var("STATEGRAPH_WRITE_FIXTURES").is_ok_and(|v| v == "1") {
        std::fs::write(fixture(scenario), &py).unwrap();
    } else {
        let kept = kept.expect("no fixture: run with STATEGRAPH_WRITE_FIXTURES=1");
        assert_eq!(
            kept, py,
            "{scenario}: the fixture is not what Python stores now"
        );
    }
    (py, Some(printed))
}

/// Runs `scenario` with stategraph: the run's error, if any, and the stored thread is
/// Python's.
async fn same_thread_as_python(scenario: &str) -> Option<Error> {
    same_thread_with(scenario, FakeChatModel::new(answers(scenario))).await
}

async fn same_thread_with(scenario: &str, model: impl ChatModel) -> Option<Error> {
    let dir = temp_dir();
    let (py, printed) = python_thread(scenario, &dir).await;
    let saver: Arc<dyn CheckpointSaver> =
        Arc::new(SqliteSaver::open(dir.join("rust.sqlite")).unwrap());
    let agent = agent(scenario, model, saver.clone()).compile().unwrap();
    let input = MessagesState::input(Message::human("What is 1 + 2?").with_id("h-1"));
    let err = agent.invoke(input, &RunConfig::thread("agent")).await.err();
    let rust = thread(saver.as_ref()).await;
    assert_eq!(rust, py, "{scenario}: the threads differ");
    if let Some(printed) = printed {
        assert_eq!(
            printed == "ok",
            err.is_none(),
            "{scenario}: Python gave {printed}, stategraph {err:?}"
        );
    }
    err
}

/// The last checkpoint of Python's thread (its fixture).
fn last_checkpoint(scenario: &str) -> String {
    let kept = std::fs::read_to_string(fixture(scenario)).unwrap();
    kept.trim_end().rsplit("\n\n").next().unwrap().to_owned()
}

fn failed_with(err: &Option<Error>, node: &str, repr: &str) {
    assert!(
        matches!(err, Some(Error::Node { node: n, message }) if n == node && message.contains(repr)),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_tool_failing_twice_is_retried_as_python() {
    assert!(same_thread_as_python("retry").await.is_none());
}

#[tokio::test]
async fn the_last_failure_is_pythons_error_tool_message() {
    assert!(same_thread_as_python("retry_fail").await.is_none());
    let last = last_checkpoint("retry_fail");
    let text = "Tool 'flaky' failed after 3 attempts with ValueError: boom. Please try again.";
    assert!(last.contains(text), "{last:?}");
    assert!(same_thread_as_python("retry_once").await.is_none());
    let last = last_checkpoint("retry_once");
    assert!(last.contains("failed after 1 attempt with"), "{last:?}");
}

#[tokio::test]
async fn a_custom_failure_message_is_stored_as_python() {
    assert!(same_thread_as_python("retry_custom").await.is_none());
    assert!(last_checkpoint("retry_custom").contains("'custom: boom'"));
}

#[tokio::test]
async fn on_failure_error_fails_the_run_as_python() {
    let err = same_thread_as_python("retry_error").await;
    failed_with(&err, "tools", "ValueError('boom')");
}

#[tokio::test]
async fn other_tools_and_other_errors_are_not_retried() {
    let err = same_thread_as_python("retry_filtered").await;
    failed_with(&err, "tools", "ValueError('boom')");
    let err = same_thread_as_python("retry_on").await;
    failed_with(&err, "tools", "ValueError('boom')");
}

#[tokio::test]
async fn tool_error_middleware_answers_the_model_as_python() {
    assert!(same_thread_as_python("tool_error").await.is_none());
    let last = last_checkpoint("tool_error");
    assert!(last.contains("`flaky` failed with ValueError; fix the input."));
    let err = same_thread_as_python("tool_error_other").await;
    failed_with(&err, "tools", "ValueError('boom')");
    assert!(same_thread_as_python("error_and_retry").await.is_none());
}

#[tokio::test]
async fn a_refusal_fails_the_model_call_as_python() {
    let err = same_thread_as_python("refusal").await;
    let text = "ModelRefusalError(\"Model refused to produce the requested output (category='cyber'): I cannot help.\")";
    failed_with(&err, "model", text);
    assert!(same_thread_as_python("no_refusal").await.is_none());
}

/// Records the system prompt of each call.
#[derive(Clone)]
struct Recording {
    inner: FakeChatModel,
    prompts: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl ChatModel for Recording {
    async fn invoke(&self, messages: &[Message], ctx: &NodeContext) -> Result<Message, NodeError> {
        let first = messages
            .first()
            .filter(|m| m.role == stategraph::Role::System);
        self.prompts
            .lock()
            .unwrap()
            .push(first.map(Message::text).unwrap_or_default());
        self.inner.invoke(messages, ctx).await
    }

    fn bind_tools(&self, _: &[Tool]) -> Arc<dyn ChatModel> {
        Arc::new(self.clone())
    }
}

#[tokio::test]
async fn decorated_functions_store_pythons_thread() {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let model = Recording {
        inner: FakeChatModel::new(answers("decorated")),
        prompts: prompts.clone(),
    };
    assert!(same_thread_with("decorated", model).await.is_none());
    let last = last_checkpoint("decorated");
    assert!(
        last.contains("'30'"),
        "the wrapped tool call ran with its new arguments"
    );
    let seen = prompts.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "You add numbers; 1 messages so far.",
            "You add numbers; 4 messages so far."
        ]
    );
}

#[tokio::test]
async fn a_decorated_hook_jumps_to_the_end_as_python() {
    assert!(same_thread_as_python("decorated_jump").await.is_none());
    let agent = agent(
        "decorated_jump",
        FakeChatModel::new(calls("add")),
        Arc::new(stategraph::checkpoint::MemorySaver::new()),
    )
    .compile()
    .unwrap();
    let drawing = agent.get_graph().draw_mermaid();
    assert!(drawing.contains("enough\\2ebefore_model"), "{drawing}");
    if let Some(python) = support::python::python() {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/create_agent_mwa.py");
        let db = temp_dir().join("draw.sqlite");
        let out = std::process::Command::new(python)
            .arg(script)
            .args([db.to_str().unwrap(), "decorated_jump", "draw"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim(),
            drawing.trim()
        );
    }
}

#[test]
fn bad_retry_options_are_typed_errors() {
    for (args, name) in [
        ((-1.0, 60.0, 2.0), "initial_delay"),
        ((1.0, -1.0, 2.0), "max_delay"),
        ((1.0, 60.0, -0.5), "backoff_factor"),
        ((f64::NAN, 60.0, 2.0), "initial_delay"),
    ] {
        let err = ToolRetryMiddleware::new()
            .delays(args.0, args.1, args.2)
            .unwrap_err();
        assert_eq!(err.middleware, "ToolRetryMiddleware");
        assert_eq!(err.message, format!("{name} must be >= 0"));
    }
}

#[test]
fn two_functions_of_one_name_are_refused() {
    let hook = || before_model("same", |_, _| async { Ok(AgentUpdate::none()) });
    let err = create_agent(FakeChatModel::new([Message::ai("hi")]), vec![])
        .middleware(hook())
        .middleware(hook())
        .compile()
        .err();
    assert!(matches!(err, Some(Error::InvalidGraph(m)) if m.contains("duplicate middleware")));
}
