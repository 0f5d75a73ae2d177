//! A v2 agent's thread paused on two tool interrupts, on SQLite, resumed by the other
//! side: Rust resumes what Python paused and Python what Rust paused (`interop.py`, run
//! with the pinned Python; skipped without one unless `STATEGRAPH_INTEROP=1`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use stategraph::prebuilt::MessagesState;
use stategraph::sqlite::SqliteSaver;
use stategraph::{Command, Message, RunConfig, State, Value};

use crate::support::python::python;
use crate::{approve_model, approve_tool, golden_free_agent, texts};

fn temp_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sg-tools-v2-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("thread.sqlite")
}

fn run_python(python: &Path, args: &[&str]) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tool_node_v2/interop.py");
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
    serde_json::from_slice(&out.stdout).unwrap()
}

const DONE: [&str; 5] = [
    "deploy and notify",
    "",
    "deploy: yes",
    "notify: no",
    "Done.",
];

#[tokio::test]
async fn python_resumes_the_interrupts_of_a_rust_v2_thread() {
    let Some(python) = python() else {
        return;
    };
    let path = temp_db("rust-paused");
    let saver = Arc::new(SqliteSaver::open(&path).unwrap());
    let agent = golden_free_agent(approve_model(), vec![approve_tool()], saver.clone());
    let config = RunConfig::thread("r2p");
    let paused = agent
        .invoke(
            MessagesState::input(Message::human("deploy and notify").with_id("h-1")),
            &config,
        )
        .await
        .unwrap();
    assert_eq!(paused.interrupts.len(), 2);
    drop(agent);
    let out = run_python(&python, &["resume", path.to_str().unwrap(), "r2p"]);
    assert_eq!(out, serde_json::json!(DONE));
    // And Rust reads the thread Python finished.
    let agent = golden_free_agent(approve_model(), vec![approve_tool()], saver);
    let state = agent.get_state(&config).await.unwrap();
    let done = MessagesState::from_values(&state.values).unwrap();
    assert_eq!(texts(&done.messages), DONE);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn rust_resumes_the_interrupts_of_a_python_v2_thread() {
    let Some(python) = python() else {
        return;
    };
    let path = temp_db("python-paused");
    let interrupts = run_python(&python, &["pause", path.to_str().unwrap(), "p2r"]);
    let saver = Arc::new(SqliteSaver::open(&path).unwrap());
    let model = stategraph::prebuilt::FakeChatModel::new([Message::ai("Done.").with_id("ai-2")]);
    let agent = golden_free_agent(model, vec![approve_tool()], saver);
    let config = RunConfig::thread("p2r");
    // The interrupts Python returned are those Rust reads from the thread.
    let state = agent.get_state(&config).await.unwrap();
    let pending: Vec<(String, Value)> = state
        .interrupts
        .iter()
        .map(|i| (i.id.clone(), i.value.clone()))
        .collect();
    let from_python: Vec<(String, Value)> = interrupts
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let id = i["id"].as_str().unwrap().to_owned();
            (id, Value::from(i["value"].as_str().unwrap()))
        })
        .collect();
    // (Python's `invoke` lists them in the order its tasks raised them.)
    let sorted = |mut v: Vec<(String, Value)>| {
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(sorted(pending.clone()), sorted(from_python));
    let answer = |v: &Value| {
        if v.as_str() == Some("approve deploy?") {
            "yes"
        } else {
            "no"
        }
    };
    let resume = Command::resume_by_id(pending.iter().map(|(id, v)| (id.clone(), answer(v))));
    let done = agent.invoke(resume, &config).await.unwrap().done().unwrap();
    assert_eq!(texts(&done.messages), DONE);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}
