//! The quickstart writes a SQLite file that Python LangGraph's `SqliteSaver` reads.

#[path = "../examples/quickstart.rs"]
#[allow(dead_code, unreachable_pub)]
mod quickstart;

mod support;
use std::path::Path;
use support::python::python;

#[tokio::test]
async fn python_sqlite_saver_reads_the_quickstart_thread() {
    let dir = std::env::temp_dir().join(format!("stategraph-qs-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = dir.join("stategraph.db");
    let (state, _saver) = quickstart::run(db.to_str().expect("utf-8 path"))
        .await
        .expect("quickstart runs");
    assert!(format!("{state:?}").contains("Hyderabad residency"));
    let Some(python) = python() else {
        std::fs::remove_dir_all(&dir).ok();
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/read_sqlite_thread.py");
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(&db)
        .arg("12345")
        .output()
        .expect("python runs");
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let checkpoints = read.as_array().expect("a list");
    assert_eq!(checkpoints.len(), 3, "three checkpoints: {read}");
    let steps: Vec<i64> = checkpoints
        .iter()
        .map(|c| c["step"].as_i64().expect("step"))
        .collect();
    assert_eq!(steps, vec![1, 0, -1], "newest first");
    let sources: Vec<&str> = checkpoints
        .iter()
        .map(|c| c["source"].as_str().expect("source"))
        .collect();
    assert_eq!(sources, vec!["loop", "loop", "input"]);
    assert_eq!(checkpoints[0]["values"]["name"], "pavaneeshwar");
    assert_eq!(checkpoints[0]["values"]["address"], "Hyderabad residency");
    assert_eq!(checkpoints[0]["parent"], checkpoints[1]["id"]);
    assert_eq!(checkpoints[1]["parent"], checkpoints[2]["id"]);
    assert_eq!(checkpoints[1]["writes"].as_array().map(Vec::len), Some(2));
}
