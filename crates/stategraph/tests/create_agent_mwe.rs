//! `create_agent` options the first round left out, each against the pinned Python
//! (tests/interop/create_agent_mwe.py): HITL `per_call` mode and `when=` predicates,
//! the summarization's `("fraction", x)` budgets, trimming and prompt, `retry_on`,
//! model-name fallbacks, `context_schema` and `cache`.

#![cfg(all(feature = "sqlite", feature = "schemars", feature = "models"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions};
use stategraph::prebuilt::agent::{
    create_agent, ContextSize, DecisionType, HumanInTheLoopMiddleware, InterruptMode,
    InterruptOnConfig, ModelFallbackMiddleware, ModelRetryMiddleware, RetryOn,
    SummarizationMiddleware, DEFAULT_SUMMARY_PROMPT,
};
use stategraph::prebuilt::{FakeChatModel, MessagesState, Tool};
use stategraph::pregel::cache::InMemoryCache;
use stategraph::sqlite::SqliteSaver;
use stategraph::{map, Command, CompiledGraph, DynState, Error, Message, RunConfig, ToolCall};

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

const LONG: &str = "Line one of the notes.\nLine two, a longer one, of the notes.\nLine three: 1 < 2 & 3 > 2.\nThe last line of the notes.";

/// The script's model answers (`ONE`, `TWO`, `THREE`).
fn answers(scenario: &str) -> Vec<Message> {
    match scenario {
        "per_call" | "when" | "when_per_call" | "context" => vec![
            Message::ai("Two sums.")
                .with_id("ai-1")
                .with_tool_calls(vec![call(1, 1, 2), call(2, 3, 4)]),
            Message::ai("Done.").with_id("ai-2"),
        ],
        "summary_prompt" => vec![
            Message::ai("")
                .with_id("ai-1")
                .with_tool_calls(vec![call(1, 1, 2)]),
            Message::ai("And \"more\".")
                .with_id("ai-2")
                .with_tool_calls(vec![call(2, 3, 4)]),
            Message::ai("Done.").with_id("ai-3"),
        ],
        _ => vec![
            Message::ai("")
                .with_id("ai-1")
                .with_tool_calls(vec![call(1, 1, 2)]),
            Message::ai("1 + 2 = 3.").with_id("ai-2"),
        ],
    }
}

/// The run's context in the `context` scenario (Python's dataclass `Ctx`).
#[derive(schemars::JsonSchema)]
struct Ctx {
    user: String,
}

fn above_two(r: &stategraph::prebuilt::agent::ToolCallRequest) -> bool {
    r.call.args.get("a").and_then(|v| v.as_i64()).unwrap_or(0) > 2
}

fn approve_reject() -> InterruptOnConfig {
    InterruptOnConfig::new([DecisionType::Approve, DecisionType::Reject])
}

fn hitl(config: InterruptOnConfig, mode: InterruptMode) -> HumanInTheLoopMiddleware {
    HumanInTheLoopMiddleware::new()
        .interrupt_on_with("add", config)
        .unwrap()
        .interrupt_mode(mode)
}

fn summarizer() -> FakeChatModel {
    FakeChatModel::new([Message::ai("The user asked for 1 + 2.")])
}

/// The agent of `scenario`, as the script builds it; the summary model when it has one.
fn agent(
    scenario: &str,
    answers: Vec<Message>,
    fails: usize,
    saver: Arc<dyn CheckpointSaver>,
) -> (CompiledGraph<DynState>, Option<FakeChatModel>) {
    let fails = match scenario {
        "retry_on_kinds" => fails.min(1),
        "retry_on_callable" => fails.min(2),
        _ => 0,
    };
    let b = create_agent(
        support_failing::Failing::new(fails, answers),
        vec![add_tool()],
    )
    .system_prompt("You add numbers.")
    .checkpointer(saver);
    let summary = summarizer();
    let b = match scenario {
        "per_call" => b.middleware(hitl(approve_reject(), InterruptMode::PerCall)),
        "per_call_respond" => {
            let config = InterruptOnConfig::new([DecisionType::Respond, DecisionType::Approve])
                .description("Check it.");
            b.middleware(hitl(config, InterruptMode::PerCall))
        }
        "when" => b.middleware(hitl(
            approve_reject().when(above_two),
            InterruptMode::Batched,
        )),
        "when_per_call" => b.middleware(hitl(
            approve_reject().when(above_two),
            InterruptMode::PerCall,
        )),
        "context" => {
            let not_alice = |r: &stategraph::prebuilt::agent::ToolCallRequest| {
                r.ctx
                    .context::<Ctx>()
                    .map(|c| c.user != "alice")
                    .unwrap_or(true)
            };
            let config = InterruptOnConfig::new([DecisionType::Approve]).when(not_alice);
            b.middleware(hitl(config, InterruptMode::Batched))
                .context_schema::<Ctx>()
                .cache(Arc::new(InMemoryCache::new()))
        }
        "retry_on_kinds" => b.middleware(ModelRetryMiddleware {
            initial_delay: std::time::Duration::ZERO,
            jitter: false,
            retry_on: RetryOn::kinds(["TimeoutError"]),
            ..ModelRetryMiddleware::default()
        }),
        "retry_on_callable" => b.middleware(ModelRetryMiddleware {
            initial_delay: std::time::Duration::ZERO,
            jitter: false,
            retry_on: RetryOn::predicate(|e| e.to_string().contains("boom")),
            ..ModelRetryMiddleware::default()
        }),
        "summary_fraction" => b.middleware(
            SummarizationMiddleware::with_max_input_tokens(
                summary.clone(),
                100,
                vec![ContextSize::Fraction(0.4)],
                ContextSize::Fraction(0.2),
            )
            .unwrap(),
        ),
        "summary_trim" => b.middleware(
            SummarizationMiddleware::new(
                summary.clone(),
                vec![ContextSize::Messages(3)],
                ContextSize::Messages(1),
            )
            .unwrap()
            .trim_tokens_to_summarize(Some(20)),
        ),
        "summary_prompt" => b.middleware(
            SummarizationMiddleware::new(
                summary.clone(),
                vec![ContextSize::Messages(5)],
                ContextSize::Messages(1),
            )
            .unwrap(),
        ),
        other => panic!("no scenario {other}"),
    };
    let summary = scenario.starts_with("summary").then_some(summary);
    (b.compile().unwrap(), summary)
}

mod support_failing {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use stategraph::prebuilt::{ChatModel, FakeChatModel, Tool};
    use stategraph::{Message, NodeContext, NodeError};

    /// A model failing its first `fails` calls with `ValueError('boom')` (clones share
    /// the count and the script, as the Python model's bound copies do).
    #[derive(Clone)]
    pub(crate) struct Failing {
        fails: Arc<AtomicUsize>,
        inner: FakeChatModel,
    }

    impl Failing {
        pub(crate) fn new(fails: usize, answers: Vec<Message>) -> Failing {
            Failing {
                fails: Arc::new(fails.into()),
                inner: FakeChatModel::new(answers),
            }
        }
    }

    #[async_trait::async_trait]
    impl ChatModel for Failing {
        async fn invoke(&self, m: &[Message], ctx: &NodeContext) -> Result<Message, NodeError> {
            let take = |n: usize| n.checked_sub(1);
            if self
                .fails
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, take)
                .is_ok()
            {
                return Err(NodeError::named("ValueError", "boom"));
            }
            self.inner.invoke(m, ctx).await
        }

        fn bind_tools(&self, _: &[Tool]) -> Arc<dyn ChatModel> {
            Arc::new(self.clone())
        }
    }
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stategraph-agent-mwe-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the Python script; its standard output.
fn python(args: &[&str]) -> Option<String> {
    let python = support::python::python()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/create_agent_mwe.py");
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

/// Per checkpoint, oldest first: metadata, channel values, versions, versions seen and
/// the writes stored against it, ids by kind.
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
                let parts: Vec<String> = v
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.integer_part()))
                    .collect();
                parts.join(",")
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
            let mut writes: Vec<String> = t
                .pending_writes
                .iter()
                .map(|w| format!("{}={}", w.channel, w.value.repr()))
                .collect();
            writes.sort(); // parallel tool tasks store their writes in either order
                           // Python's write of the summary has its id or not, by a race (the reducer
                           // gives the stored object an id while the saver may still be writing it).
            let writes: Vec<String> = writes
                .iter()
                .map(|w| w.replace("'summarization'}, id='", "'summarization'}, x='"))
                .map(|w| match w.split_once(", x='") {
                    Some((a, b)) => format!("{a}{}", &b[b.find('\'').unwrap() + 1..]),
                    None => w,
                })
                .collect();
            let mut meta = vec![format!("{:?} {:?}", t.metadata.source, t.metadata.step)];
            let extra = t.metadata.extra.iter();
            meta.extend(extra.map(|(k, v)| format!("{k}={}", v.repr())));
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

fn assert_same_threads(rust: &[String], python: &[String]) {
    for (i, (r, p)) in rust.iter().zip(python).enumerate() {
        assert_eq!(
            r, p,
            "checkpoint {i} differs:\n--- stategraph\n{r}\n--- python\n{p}"
        );
    }
    assert_eq!(rust.len(), python.len(), "checkpoint count");
}

/// The resume `answer` (a HITL response, or tool call id to decision) for `pending`.
fn resume_command(answer: &serde_json::Value, pending: &[stategraph::Interrupt]) -> Command<()> {
    if answer.get("decisions").is_some() {
        let value: stategraph::Value = serde_json::from_value(answer.clone()).unwrap();
        return Command::default().with_resume(value);
    }
    Command::default().with_resume_by_id(pending.iter().map(|i| {
        let id = i
            .value
            .get("tool_call_id")
            .and_then(|v| v.as_str())
            .unwrap();
        let decision: stategraph::Value = serde_json::from_value(answer[id].clone()).unwrap();
        (i.id.clone(), decision)
    }))
}

/// Python runs `scenario` (resumed with `answer` when given), stategraph the same on
/// another file: the same interrupts (values and schemas), summary prompts and thread.
async fn same_as_python(scenario: &str, answer: Option<&str>) {
    let dir = temp_dir();
    let py_db = dir.join("python.sqlite");
    let py = py_db.to_str().unwrap();
    let Some(printed) = python(&[py, scenario, "run"]) else {
        return;
    };
    if let Some(answer) = answer {
        python(&[py, scenario, "resume", answer]);
    }
    let printed: serde_json::Value = serde_json::from_str(&printed).unwrap();
    let saver: Arc<dyn CheckpointSaver> =
        Arc::new(SqliteSaver::open(dir.join("rust.sqlite")).unwrap());
    let mut config = RunConfig::thread("agent");
    if scenario == "context" {
        config = config.context(Ctx {
            user: "alice".into(),
        });
    }
    let text = if scenario.starts_with("summary") {
        LONG
    } else {
        "What is 1 + 2?"
    };
    let input = MessagesState::input(Message::human(text).with_id("h-1"));
    let script = answers(scenario);
    let (g, summary) = agent(scenario, script.clone(), 9, saver.clone());
    match g.invoke(input, &config).await {
        Ok(out) => {
            let got: Vec<serde_json::Value> = out
                .interrupts
                .iter()
                .map(|i| {
                    let schema = i.response_schema.as_ref().map(|s| s.to_json());
                    serde_json::json!({"value": i.value.to_json(), "response_schema": schema})
                })
                .collect();
            let mut want = printed["interrupts"].as_array().unwrap().clone();
            let mut got = got;
            let key = |v: &serde_json::Value| v["value"].to_string();
            want.sort_by_key(key);
            got.sort_by_key(key);
            assert_eq!(got, want, "{scenario}: the interrupts");
            if let Some(answer) = answer {
                let (g, _) = agent(scenario, script[1..].to_vec(), 9, saver.clone());
                let answer: serde_json::Value = serde_json::from_str(answer).unwrap();
                let _ = g
                    .invoke(resume_command(&answer, &out.interrupts), &config)
                    .await
                    .unwrap();
            }
        }
        Err(e) => {
            assert_eq!(printed["error"], "ValueError('boom')", "{scenario}: {e}");
            assert!(e.to_string().contains("boom"), "{e}");
        }
    }
    if let Some(summary) = summary {
        let prompts: Vec<Vec<String>> = summary
            .calls()
            .iter()
            .map(|c| c.iter().map(Message::text).collect())
            .collect();
        let want: Vec<Vec<String>> = serde_json::from_value(printed["prompts"].clone()).unwrap();
        assert_eq!(prompts, want, "{scenario}: the summary model's prompts");
    }
    let expected = thread(&SqliteSaver::open(&py_db).unwrap()).await;
    assert_same_threads(&thread(saver.as_ref()).await, &expected);
}

#[tokio::test]
async fn per_call_mode_asks_once_per_call_as_python() {
    let answer =
        r#"{"call-1": {"type": "approve"}, "call-2": {"type": "reject", "message": "no"}}"#;
    same_as_python("per_call", Some(answer)).await;
    let answer = r#"{"call-1": {"type": "respond", "message": "It is 3."}}"#;
    same_as_python("per_call_respond", Some(answer)).await;
}

#[tokio::test]
async fn when_predicates_review_only_the_calls_they_pick_as_python() {
    same_as_python("when", Some(r#"{"decisions": [{"type": "reject"}]}"#)).await;
    same_as_python("when_per_call", Some(r#"{"call-2": {"type": "approve"}}"#)).await;
}

#[tokio::test]
async fn the_context_schema_gives_hooks_the_typed_context_as_python() {
    same_as_python("context", None).await;
    // A context of another type is refused before the run starts.
    let saver: Arc<dyn CheckpointSaver> = Arc::new(stategraph::checkpoint::MemorySaver::new());
    let (g, _) = agent("context", answers("context"), 0, saver);
    let config = RunConfig::thread("other").context(7_u32);
    let err = g
        .invoke(MessagesState::input("hi"), &config)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ContextType { .. }), "{err:?}");
}

#[tokio::test]
async fn retry_on_retries_only_the_failures_it_names_as_python() {
    same_as_python("retry_on_kinds", None).await;
    same_as_python("retry_on_callable", None).await;
}

#[tokio::test]
async fn summarization_sends_pythons_prompt_trimmed_and_fraction_budgets() {
    same_as_python("summary_prompt", None).await;
    same_as_python("summary_trim", None).await;
    same_as_python("summary_fraction", None).await;
    assert!(DEFAULT_SUMMARY_PROMPT
        .contains("<messages>\nMessages to summarize:\n{messages}\n</messages>"));
}

#[test]
fn fraction_budgets_need_the_models_input_limit_and_a_fraction_in_range() {
    let err = SummarizationMiddleware::new(
        summarizer(),
        vec![ContextSize::Fraction(0.5)],
        ContextSize::Messages(2),
    )
    .unwrap_err();
    assert!(
        err.message
            .contains("Model profile information is required"),
        "{err}"
    );
    let err = SummarizationMiddleware::with_max_input_tokens(
        summarizer(),
        1000,
        vec![ContextSize::Tokens(10)],
        ContextSize::Fraction(1.5),
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "Fractional keep values must be between 0 and 1, got 1.5."
    );
}

#[test]
fn fallbacks_are_made_from_model_names() {
    let m = ModelFallbackMiddleware::from_names([
        "openai:gpt-4o-mini",
        "anthropic:claude-3-5-haiku-latest",
    ]);
    assert!(m.is_ok(), "{m:?}");
    let err = ModelFallbackMiddleware::from_names(["nowhere:model"]).unwrap_err();
    assert!(err.message.contains("nowhere:model"), "{err}");
    let none: [&str; 0] = [];
    assert!(ModelFallbackMiddleware::from_names(none).is_err());
}
