//! The functional-API example (`examples/functional.rs`) across processes, and its Python
//! twin (`examples/python/functional.py`): each step (`start`, `approve`, `again`) runs in
//! a child process (this test binary, re-run on the ignored `child` test, or the pinned
//! Python: `STATEGRAPH_PYTHON`, else `target/langgraph-venv`) on one SQLite file. Both
//! print the same lines, and on one file the languages take turns both ways: a thread
//! Python started is resumed by Rust without rerunning its tasks (`tasks run: none`) and
//! continued again by Python, and the other way round; and Python's saver reads the same
//! thread from every file (`tests/interop/functional_history.py`).

#[path = "../examples/functional.rs"]
#[allow(dead_code, unreachable_pub)]
mod functional;

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

const STEP: &str = "STATEGRAPH_FUNCTIONAL_STEP";
const DB: &str = "STATEGRAPH_FUNCTIONAL_DB";
const STEPS: [&str; 3] = ["start", "approve", "again"];

/// Not a test of its own: the body of a child process, run by the tests below.
#[tokio::test]
#[ignore = "run as a child process by the functional example tests"]
async fn child() {
    let (Ok(step), Ok(db)) = (std::env::var(STEP), std::env::var(DB)) else {
        return;
    };
    functional::run(&step, &db).await.expect("the step runs");
}

/// The example's output lines (libtest's own lines dropped).
fn lines(out: std::process::Output, what: &str) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = ["paused", "done", "tasks run"];
    stdout
        .lines()
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
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/python/functional.py");
    let out = Command::new(python)
        .arg(script)
        .args([step, &db.display().to_string()])
        .output()
        .expect("spawn python");
    lines(out, &format!("Python step {step}"))
}

/// A fresh database path in a directory of its own.
fn fresh_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "stategraph-functional-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join("essay.db")
}

const EXPECTED: [&[&str]; 3] = [
    &[
        "paused: {'essay': 'an essay about cats', 'words': 4}",
        "tasks run: compose, count_words",
    ],
    &[
        "done: {'essay': 'an essay about cats', 'verdict': 'good', 'reviews': 1}",
        "tasks run: none",
    ],
    &[
        "paused: {'essay': 'an essay about dogs', 'words': 4}",
        "done: {'essay': 'an essay about dogs', 'verdict': 'bad', 'reviews': 2}",
        "tasks run: compose, count_words",
    ],
];

#[test]
fn the_example_resumes_in_another_process_without_rerunning_its_tasks() {
    let db = fresh_db("rust");
    for (step, expected) in STEPS.into_iter().zip(EXPECTED) {
        assert_eq!(rust_step(step, &db), expected, "step {step}");
    }
    let _ = std::fs::remove_dir_all(db.parent().expect("dir"));
}

#[test]
fn the_example_prints_what_its_python_twin_prints_and_the_two_take_turns() {
    let Some(python) = support::python::python() else {
        return;
    };
    let dbs = [fresh_db("p"), fresh_db("pr"), fresh_db("rp"), fresh_db("r")];
    for (i, (step, expected)) in STEPS.into_iter().zip(EXPECTED).enumerate() {
        assert_eq!(
            python_step(&python, step, &dbs[0]),
            expected,
            "Python, step {step}"
        );
        assert_eq!(rust_step(step, &dbs[3]), expected, "Rust, step {step}");
        // One file, the languages alternating: Python, Rust, Python; and Rust, Python, Rust.
        let (first, second) = if i % 2 == 0 {
            (
                python_step(&python, step, &dbs[1]),
                rust_step(step, &dbs[2]),
            )
        } else {
            (
                rust_step(step, &dbs[1]),
                python_step(&python, step, &dbs[2]),
            )
        };
        assert_eq!(first, expected, "Python first, step {step}");
        assert_eq!(second, expected, "Rust first, step {step}");
    }
    // What Python's saver reads of the four files is the same, ids and times aside: the
    // checkpoints, their values, the tasks' paths, channels and values.
    let stored: Vec<String> = dbs.iter().map(|db| python_history(&python, db)).collect();
    for (db, got) in dbs.iter().zip(&stored).skip(1) {
        assert_eq!(got, &stored[0], "{db:?} holds another thread than Python's");
    }
    assert!(stored[0].contains("~__pregel_push, ~__pregel_pull, review, 0000000001, 0000000001"));
    for db in dbs {
        let _ = std::fs::remove_dir_all(db.parent().expect("dir"));
    }
}

/// `tests/interop/functional_history.py` on `db`: the thread as Python reads it.
fn python_history(python: &Path, db: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/functional_history.py");
    let out = Command::new(python)
        .arg(script)
        .arg(db)
        .output()
        .expect("spawn python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
