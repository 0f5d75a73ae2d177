//! The comparison with Python (tests/interop/create_agent_auto.py): a scripted model,
//! the script's run, and the stored thread as text (create_agent_mwc's harness, on
//! this test's script, the decision model's calls in call-id order).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions};
use stategraph::prebuilt::{ChatModel, FakeChatModel, MessagesState, Tool};
use stategraph::sqlite::SqliteSaver;
use stategraph::{CompiledGraph, DynState, Message, NodeContext, NodeError, RunConfig};

use super::support;

/// What one model was sent, each call as Python's script prints it.
pub(crate) type Log = Arc<Mutex<Vec<serde_json::Value>>>;

/// A scripted model recording each call's messages and bound tools.
#[derive(Clone)]
pub(crate) struct Recorder {
    inner: FakeChatModel,
    log: Log,
    tools: Vec<serde_json::Value>,
}

impl Recorder {
    pub(crate) fn new(answers: Vec<Message>) -> (Recorder, Log) {
        let log = Log::default();
        let model = Recorder {
            inner: FakeChatModel::new(answers),
            log: log.clone(),
            tools: Vec::new(),
        };
        (model, log)
    }
}

pub(crate) fn message_view(m: &Message) -> serde_json::Value {
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

/// Builds a scenario's agent on a saver, with the logs of its models.
pub(crate) type Build =
    fn(&str, Arc<dyn CheckpointSaver>) -> (CompiledGraph<DynState>, Vec<(&'static str, Log)>);

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stategraph-auto-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the Python script on `db`; what it printed.
fn python(db: &Path, scenario: &str) -> Option<serde_json::Value> {
    let python = support::python::python()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/create_agent_auto.py");
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
/// same channels and drawing, each model sent the same messages and tools, and the same
/// error, if any.
pub(crate) async fn like_python(name: &str, build: Build) -> Option<()> {
    let dir = temp_dir();
    let py_db = dir.join("python.sqlite");
    let expected = python(&py_db, name)?;
    let saver: Arc<dyn CheckpointSaver> =
        Arc::new(SqliteSaver::open(dir.join("rust.sqlite")).unwrap());
    let (agent, logs) = build(name, saver.clone());
    let input = MessagesState::input(Message::human("What is 1 + 2?").with_id("h-1"));
    let out = agent.invoke(input, &RunConfig::thread("agent")).await;
    match (&out, expected["error"].as_str()) {
        (Ok(_), None) => {}
        (Err(stategraph::Error::Node { node, message }), Some(want)) => {
            assert_eq!(node, "model", "{name}");
            assert_eq!(message, want, "{name}");
        }
        (got, want) => panic!("{name}: {got:?}, Python: {want:?}"),
    }
    for (label, log) in logs {
        // the tools of one answer run at once: their judgments in call-id order
        let by_call = |c: &serde_json::Value| c["state"]["tool_call"]["id"].to_string();
        let mut got = log.lock().clone();
        got.sort_by_key(by_call);
        let mut want = expected["calls"][label]
            .as_array()
            .cloned()
            .unwrap_or_default();
        want.sort_by_key(by_call);
        assert!(!want.is_empty(), "{name}: Python's {label} was asked");
        assert_eq!(got, want, "{name}: the calls of model {label}");
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
