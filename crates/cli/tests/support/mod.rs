//! Running the binary, Python and a private Postgres database.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value as J;
use stategraph_checkpoint_postgres::deadpool_postgres::tokio_postgres::{self, NoTls};

/// The result of one run of the command.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// Stdout parsed as JSON; panics with stderr if the command failed.
    pub(crate) fn json(&self) -> J {
        assert_eq!(self.code, 0, "command failed: {}", self.stderr);
        serde_json::from_str(&self.stdout).expect("stdout is JSON")
    }
}

/// Runs `stategraph ARGS` (no colours: stdout is a pipe, and NO_COLOR is set).
pub(crate) fn cli(args: &[&str]) -> Run {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_stategraph"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run stategraph");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The pinned Python, or `None` (then the test is skipped unless STATEGRAPH_INTEROP=1).
pub(crate) fn python() -> Option<PathBuf> {
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
    println!("note: skipping: no Python at {path:?}");
    None
}

/// Runs the Python helper: `mode` is `write` or `expect`; returns its JSON.
pub(crate) fn run_python(python: &Path, mode: &str, backend: &str, target: &str) -> J {
    run_script(python, "threads.py", &[mode, backend, target])
}

/// Runs `tests/python/SCRIPT ARGS..` with `python`; it must succeed and print JSON,
/// which is returned.
pub(crate) fn run_script(python: &Path, script: &str, args: &[&str]) -> J {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let out = Command::new(python)
        .arg(&path)
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("python prints JSON")
}

/// A fresh temporary directory.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "stategraph-cli-{name}-{}-{}",
        std::process::id(),
        uuid_like()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// A database created for one test on the shared server, dropped at the end.
pub(crate) struct TempPg {
    admin: String,
    name: String,
    /// The database's URL.
    pub(crate) url: String,
}

/// A new empty Postgres database, or `None` when no server is configured (a failure
/// when STATEGRAPH_REQUIRE_POSTGRES=1).
pub(crate) fn postgres(tag: &str) -> Option<TempPg> {
    let Ok(admin) = std::env::var("STATEGRAPH_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("STATEGRAPH_REQUIRE_POSTGRES").map_or(true, |v| v != "1"),
            "STATEGRAPH_REQUIRE_POSTGRES=1 but STATEGRAPH_TEST_POSTGRES_URL is unset"
        );
        println!("note: skipping: no STATEGRAPH_TEST_POSTGRES_URL");
        return None;
    };
    let name = format!(
        "sg_cli_{tag}_{}_{}",
        std::process::id(),
        uuid_like() % 1_000_000_000
    );
    admin_exec(&admin, &format!("CREATE DATABASE {name}"));
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
    let url = format!("{base}/{name}");
    Some(TempPg { admin, name, url })
}

impl Drop for TempPg {
    fn drop(&mut self) {
        admin_exec(
            &self.admin,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

fn admin_exec(admin: &str, sql: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(admin, NoTls)
            .await
            .expect("connect to the test server");
        let task = tokio::spawn(conn);
        client.batch_execute(sql).await.expect(sql);
        drop(client);
        let _ = task.await;
    });
}

/// Sorts the items of every `builtins.set` / `builtins.frozenset` (their order is not
/// kept across processes in Python).
pub(crate) fn normalize_sets(v: &mut J) {
    match v {
        J::Array(items) => items.iter_mut().for_each(normalize_sets),
        J::Object(map) => {
            let is_set = map
                .get("$py")
                .and_then(J::as_str)
                .is_some_and(|t| t == "builtins.set" || t == "builtins.frozenset");
            map.values_mut().for_each(normalize_sets);
            if is_set {
                if let Some(J::Array(items)) = map.get_mut("value") {
                    items.sort_by_key(|x| x.to_string());
                }
            }
        }
        _ => {}
    }
}

/// One snapshot of the command's `--json` in the shape the Python helper prints.
pub(crate) fn as_python(snapshot: &J) -> J {
    let mut next: Vec<J> = snapshot["next"].as_array().cloned().unwrap_or_default();
    next.sort_by_key(|x| x.to_string());
    let mut out = serde_json::json!({
        "checkpoint_id": snapshot["config"]["checkpoint_id"],
        "parent_checkpoint_id": snapshot["parent_config"]["checkpoint_id"],
        "created_at": snapshot["created_at"],
        "metadata": snapshot["metadata"],
        "next": next,
        "values": snapshot["values"],
        "interrupts": snapshot["interrupts"],
    });
    normalize_sets(&mut out);
    out
}

/// The first place where `a` and `b` differ (objects compared without regard to key
/// order), or `None` if they are equal.
pub(crate) fn json_diff(a: &J, b: &J, path: &str) -> Option<String> {
    match (a, b) {
        (J::Object(x), J::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) => {
                        if let Some(d) = json_diff(v, w, &format!("{path}.{k}")) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{path}.{k}: only left has it: {v}")),
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{path}.{k}: only right has it: {}", y[k]))
        }
        (J::Array(x), J::Array(y)) => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                if let Some(d) = json_diff(v, w, &format!("{path}[{i}]")) {
                    return Some(d);
                }
            }
            (x.len() != y.len()).then(|| format!("{path}: lengths {} and {}", x.len(), y.len()))
        }
        _ => (a != b).then(|| format!("{path}: {a} != {b}")),
    }
}

/// Asserts `a` equals `b` (objects without regard to key order), naming the first
/// difference.
pub(crate) fn assert_json_eq(a: &J, b: &J, what: &str) {
    if let Some(d) = json_diff(a, b, "$") {
        panic!("{what} differs at {d}");
    }
}
