//! The `agent_middleware` example (`examples/agent_middleware.rs`): one process runs the
//! agent until HumanInTheLoopMiddleware's review, a second approves from the SQLite
//! file. Each step runs in a child process (this test binary, re-run on the ignored
//! `child` test). With the pinned Python, its twin `examples/python/agent_middleware.py`
//! prints the same lines, and each language resumes the other's paused thread.

#![cfg(all(feature = "sqlite", feature = "schemars"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../examples/agent_middleware.rs"]
#[allow(dead_code, unreachable_pub)]
mod agent_middleware;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

const STEP: &str = "STATEGRAPH_AGENT_MIDDLEWARE_STEP";
const DB: &str = "STATEGRAPH_AGENT_MIDDLEWARE_DB";

/// Not a test of its own: the body of a child process, run by the tests below.
#[tokio::test]
#[ignore = "run as a child process by the agent_middleware tests"]
async fn child() {
    let (Ok(step), Ok(db)) = (std::env::var(STEP), std::env::var(DB)) else {
        return;
    };
    agent_middleware::run(&step, &db)
        .await
        .expect("the step runs");
}

/// The example's output lines (libtest's own lines dropped).
fn lines(out: std::process::Output, what: &str) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = ["review: ", "human: ", "ai: ", "tool: "];
    stdout
        .lines()
        .map(|l| l.strip_prefix("test child ... ").unwrap_or(l))
        .filter(|l| ours.iter().any(|p| l.starts_with(p)))
        .map(str::to_owned)
        .collect()
}

fn rust_step(step: &str, db: &Path) -> Vec<String> {
    let exe = std::env::current_exe().expect("test binary");
    let args = [
        "child",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ];
    let out = Command::new(exe)
        .args(args)
        .env(STEP, step)
        .env(DB, db)
        .output()
        .expect("spawn");
    lines(out, &format!("Rust step {step}"))
}

fn python_step(python: &Path, step: &str, db: &Path) -> Vec<String> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/python/agent_middleware.py");
    let out = Command::new(python)
        .arg(script)
        .arg(step)
        .arg(db)
        .output()
        .expect("spawn python");
    lines(out, &format!("Python step {step}"))
}

fn fresh_db() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stategraph-agent-mw-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("agent.db")
}

const EXPECTED: [&str; 5] = [
    "review: 'add' {'a': 1, 'b': 2}",
    "human: What is 1 + 2?",
    "ai: ",
    "tool: 3",
    "ai: 1 + 2 = 3.",
];

#[test]
fn the_example_pauses_for_review_and_the_approval_runs_the_tool() {
    let db = fresh_db();
    let mut out = rust_step("start", &db);
    out.extend(rust_step("approve", &db));
    assert_eq!(out, EXPECTED);
}

#[test]
fn the_python_twin_prints_the_same_lines_and_each_resumes_the_others_thread() {
    let Some(python) = support::python::python() else {
        return;
    };
    let db = fresh_db();
    let mut out = python_step(&python, "start", &db);
    out.extend(python_step(&python, "approve", &db));
    assert_eq!(out, EXPECTED, "Python alone");
    let db = fresh_db();
    let mut out = python_step(&python, "start", &db);
    out.extend(rust_step("approve", &db));
    assert_eq!(out, EXPECTED, "Python pauses, stategraph approves");
    let db = fresh_db();
    let mut out = rust_step("start", &db);
    out.extend(python_step(&python, "approve", &db));
    assert_eq!(out, EXPECTED, "stategraph pauses, Python approves");
}

#[test]
fn the_rust_example_is_at_most_1_4_times_the_pythons_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("bash")
        .arg(root.join("scripts/count_lines.sh"))
        .arg(root.join("crates/stategraph/examples/agent_middleware.rs"))
        .arg(root.join("examples/python/agent_middleware.py"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let counts: Vec<f64> = text
        .lines()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(counts[0] <= 1.4 * counts[1], "{text}");
}
