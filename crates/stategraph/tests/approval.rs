//! The approval example (`examples/approval.rs`) across processes: one process runs until
//! the interrupt and exits, a second resumes it from the SQLite file, a third rewinds to
//! the checkpoint before the approval and forks. Each step runs in a child process (this
//! test binary, re-run on the ignored `child` test). With the pinned Python
//! (`STATEGRAPH_PYTHON`, else `target/langgraph-venv`), its twin
//! `examples/python/approval.py` must print the same lines, and the two languages must be
//! able to take turns on one file.

#[path = "../examples/approval.rs"]
#[allow(dead_code, unreachable_pub)]
mod approval;

use std::path::{Path, PathBuf};
use std::process::Command;

const STEP: &str = "STATEGRAPH_APPROVAL_STEP";
const DB: &str = "STATEGRAPH_APPROVAL_DB";
const STEPS: [&str; 3] = ["start", "approve", "rewind"];

/// Not a test of its own: the body of a child process, run by the tests below.
#[tokio::test]
#[ignore = "run as a child process by the approval tests"]
async fn child() {
    // Run by hand (`--include-ignored`) without the variables, it has nothing to do.
    let (Ok(step), Ok(db)) = (std::env::var(STEP), std::env::var(DB)) else {
        return;
    };
    approval::run(&step, &db).await.expect("the step runs");
}

/// The example's output lines (libtest's own lines dropped).
fn lines(out: std::process::Output, what: &str) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = ["paused", "status", "history"];
    stdout
        .lines()
        // libtest prints `test child ... ` before the first line of output.
        .map(|l| l.strip_prefix("test child ... ").unwrap_or(l))
        .filter(|l| ours.iter().any(|p| l.starts_with(p)))
        .map(str::to_owned)
        .collect()
}

fn rust_step(step: &str, db: &Path) -> Vec<String> {
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args([
            "child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(STEP, step)
        .env(DB, db)
        .output()
        .expect("spawn the child process");
    lines(out, &format!("Rust step {step}"))
}

fn python_step(python: &Path, step: &str, db: &Path) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/python/approval.py");
    let out = Command::new(python)
        .arg(script)
        .args([step, &db.display().to_string()])
        .output()
        .expect("spawn python");
    lines(out, &format!("Python step {step}"))
}

fn python() -> Option<PathBuf> {
    let path = std::env::var_os("STATEGRAPH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/langgraph-venv/bin/python")
        });
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("STATEGRAPH_INTEROP").map_or(true, |v| v != "1"),
        "STATEGRAPH_INTEROP=1 but there is no Python at {path:?}"
    );
    println!("note: skipping the Python side: no Python at {path:?}");
    None
}

/// A fresh database path in a directory of its own.
fn fresh_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "stategraph-approval-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join("approval.db")
}

#[test]
fn approval_pauses_in_one_process_resumes_in_another_and_forks_in_a_third() {
    let db = fresh_db("rust");
    assert_eq!(
        rust_step("start", &db),
        ["paused: 'approve a payment of 250?'"]
    );
    assert_eq!(rust_step("approve", &db), ["status: paid"]);
    assert_eq!(
        rust_step("rewind", &db),
        [
            "paused again: 'approve a payment of 250?'",
            "status: rejected",
            "history: loop loop fork loop loop loop input",
        ]
    );
    let _ = std::fs::remove_dir_all(db.parent().expect("dir"));
}

#[test]
fn approval_prints_what_its_python_twin_prints_and_the_two_take_turns() {
    let Some(python) = python() else { return };
    let (rust_db, python_db, mixed_db) = (fresh_db("r"), fresh_db("p"), fresh_db("m"));
    for (i, step) in STEPS.into_iter().enumerate() {
        let rust = rust_step(step, &rust_db);
        assert_eq!(rust, python_step(&python, step, &python_db), "step {step}");
        // One file, the languages alternating: Rust, Python, Rust.
        let mixed = if i % 2 == 0 {
            rust_step(step, &mixed_db)
        } else {
            python_step(&python, step, &mixed_db)
        };
        assert_eq!(mixed, rust, "alternating, step {step}");
    }
    for db in [rust_db, python_db, mixed_db] {
        let _ = std::fs::remove_dir_all(db.parent().expect("dir"));
    }
}
