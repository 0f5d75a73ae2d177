//! Databases written by Python LangGraph: the command reads them as Python's own API does,
//! leaves them unchanged, and copies them between backends.

use std::path::Path;

use serde_json::Value as J;
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint_sqlite::rusqlite::Connection;
use stategraph_cli::render::to_json;

use crate::support::{
    as_python, assert_json_eq, cli, normalize_sets, postgres, python, run_python, temp_dir,
};

const THREADS: [&str; 5] = ["chat", "paused", "forked", "sub", "rich"];

/// Checks every command's JSON on `db` against `expected` (the Python helper's output).
fn check_reads_like_python(db: &str, expected: &J) {
    for thread in THREADS {
        let mut want = expected[thread].clone();
        normalize_sets(&mut want);
        // A channel with a reducer (`add_messages`, `operator.add`) shows Python's default
        // (an empty list) before anything was stored in it; the checkpoint holds no value
        // for it, and without the graph the command cannot know the default. Empty lists
        // are left out on both sides.
        drop_empty_lists(&mut want);
        let history = cli(&["history", "--json", db, thread]).json();
        let got: Vec<J> = history
            .as_array()
            .expect("history is an array")
            .iter()
            .map(as_python)
            .collect();
        let mut got = J::Array(got);
        drop_empty_lists(&mut got);
        let got = got.as_array().cloned().unwrap_or_default();
        assert_json_eq(
            &J::Array(got),
            &want["history"],
            &format!("history of {thread}"),
        );
        let state = cli(&["show", "--json", db, thread]).json();
        let mut state = J::Array(vec![as_python(&state)]);
        drop_empty_lists(&mut state);
        assert_json_eq(&state[0], &want["state"], &format!("state of {thread}"));
    }

    // A subgraph's namespace.
    let sub = &expected["sub_ns"];
    let ns = sub["ns"].as_str().expect("sub ns");
    let history = cli(&["history", "--json", "--ns", ns, db, "sub"]).json();
    let mut got = J::Array(
        history
            .as_array()
            .into_iter()
            .flatten()
            .map(as_python)
            .collect(),
    );
    drop_empty_lists(&mut got);
    let mut want = sub["history"].clone();
    drop_empty_lists(&mut want);
    assert!(got.as_array().is_some_and(|a| !a.is_empty()));
    assert_json_eq(&got, &want, "history of the subgraph namespace");

    let threads = cli(&["threads", "--json", db]).json();
    let by_id = |id: &str| {
        threads
            .as_array()
            .and_then(|a| a.iter().find(|t| t["thread_id"] == id).cloned())
            .unwrap_or_else(|| panic!("thread {id} listed"))
    };
    assert_eq!(threads.as_array().map(Vec::len), Some(5));
    assert_eq!(by_id("paused")["interrupted"], true);
    assert_eq!(by_id("chat")["interrupted"], false);
    assert_eq!(by_id("chat")["checkpoints"], 5);
    assert_eq!(by_id("sub")["namespaces"].as_array().map(Vec::len), Some(2));
    assert_eq!(by_id("chat")["latest_step"], 3);

    // The chat grew by three messages after the input checkpoint.
    let history = cli(&["history", "--json", db, "chat"]).json();
    let ids: Vec<&str> = history
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["config"]["checkpoint_id"].as_str())
        .collect();
    let (newest, input) = (ids[0], ids[ids.len() - 2]);
    let diff = cli(&["diff", "--json", db, "chat", input, newest]).json();
    let messages = &diff["channels"][0];
    assert_eq!(messages["channel"], "messages");
    assert_eq!(messages["change"], "list");
    assert_eq!(messages["common"], 1);
    assert_eq!(messages["appended"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        messages["appended"][1]["value"]["tool_call_id"], "call-1",
        "the tool message is the second appended"
    );

    // `rich` holds a dataclass of `__main__`, outside LangGraph's safe types: Python reads
    // it (with a warning), so it is a warning, an error only with `--strict`, and nothing
    // once allowed as Python's `allowed_msgpack_modules` allows it.
    let verify = cli(&["verify", "--json", db]);
    assert_eq!(
        verify.code, 0,
        "a healthy database verifies with warnings: {}",
        verify.stdout
    );
    let report: J = serde_json::from_str(&verify.stdout).expect("verify JSON");
    assert_eq!(report["errors"], 0, "{report}");
    let problems = report["problems"].as_array().expect("problems");
    assert!(!problems.is_empty());
    assert_eq!(report["warnings"].as_u64(), Some(problems.len() as u64));
    let strict = cli(&["verify", "--strict", "--json", db]);
    assert_eq!(strict.code, 1, "--strict fails on them: {}", strict.stdout);
    let allowed = cli(&["verify", "--json", "--allow", "__main__.Point", db]).json();
    assert_eq!(allowed["problems"], serde_json::json!([]), "{allowed}");
    for p in problems {
        assert_eq!(p["level"], "warning", "{p}");
        assert!(p["row"].as_str().is_some_and(|r| r.contains("rich")), "{p}");
        assert!(
            p["problem"]
                .as_str()
                .is_some_and(|r| r.contains("__main__.Point")),
            "{p}"
        );
    }
    // SQLite stores values inside the checkpoint, Postgres in a blob row per channel.
    assert!(problems
        .iter()
        .any(|p| p["path"] == "$.channel_values.point"
            || p["row"]
                .as_str()
                .is_some_and(|r| r.contains("channel=\"point\""))));

    // `forked`: Python's latest checkpoint (its `get_state`) is the update on the step-1
    // checkpoint. It is the head: the trunk ends there, the first run's steps 2-4 are the
    // fork; `step:2` names it (the run's own step 2 is on the other branch); writes are
    // named by the task path Python stored.
    let latest = expected["forked"]["state"]["checkpoint_id"]
        .as_str()
        .expect("latest id");
    let tree = cli(&["history", db, "forked"]);
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    let last = tree.stdout.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        format!("● {latest}  step 2  update  ← head"),
        "{}",
        tree.stdout
    );
    assert!(
        tree.stdout.contains("│ ● "),
        "the first run is the fork: {}",
        tree.stdout
    );
    assert!(
        tree.stdout.contains("writes: __start__ (3)"),
        "{}",
        tree.stdout
    );
    assert!(tree.stdout.contains("writes: step (2)"), "{}", tree.stdout);
    let step2 = cli(&["show", "--json", db, "forked", "step:2"]).json();
    assert_eq!(step2["config"]["checkpoint_id"], latest);
    let prefix: String = latest.chars().take(30).collect();
    let by_prefix = cli(&["show", "--json", db, "forked", &prefix]).json();
    assert_eq!(by_prefix["config"]["checkpoint_id"], latest);

    // dump prints LangGraph's notation.
    let dump = cli(&["dump", db, "paused"]);
    assert_eq!(dump.code, 0, "{}", dump.stderr);
    assert!(dump.stdout.starts_with("storage:\n  'paused':\n"));
    assert!(dump.stdout.contains("'__interrupt__'"));
    assert!(dump.stdout.contains("\nblobs:\n"));
}

/// Removes the state values that are empty lists, from every snapshot in `v` (a
/// snapshot list, the Python helper's per-thread object, or a list of one snapshot).
fn drop_empty_lists(v: &mut J) {
    let snapshots: Vec<&mut J> = match v {
        J::Array(items) => items.iter_mut().collect(),
        J::Object(map) if map.contains_key("history") => {
            let mut out = Vec::new();
            for (k, x) in map.iter_mut() {
                match k.as_str() {
                    "history" => out.extend(x.as_array_mut().into_iter().flatten()),
                    "state" => out.push(x),
                    _ => {}
                }
            }
            out
        }
        _ => Vec::new(),
    };
    for snap in snapshots {
        if let Some(values) = snap.get_mut("values").and_then(J::as_object_mut) {
            values.retain(|_, x| x.as_array().is_none_or(|a| !a.is_empty()));
        }
    }
}

/// A database opened for reading refuses every write (`delete_thread` here) with the
/// database's own error.
fn refuses_writes(db: &str, needle: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let db = stategraph_cli::db::Db::open_read(db).await.expect("open");
        let err = db
            .saver
            .delete_thread("chat")
            .await
            .expect_err("a read-only database refuses writes");
        let text = format!("{err} {err:?}");
        assert!(text.contains(needle), "{text}");
    });
}

/// Human output of Python-written threads under snapshots, with ids and times (random
/// per run) replaced by numbered placeholders.
fn human_output(db: &str) {
    for (thread, args) in [
        ("chat", vec!["show", db, "chat"]),
        ("rich", vec!["show", db, "rich"]),
        ("paused", vec!["show", db, "paused"]),
        ("forked", vec!["history", db, "forked"]),
        ("chat", vec!["history", db, "chat"]),
    ] {
        let run = cli(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let history = cli(&["history", "--json", db, thread]).json();
        let name = format!("python_{}_{}", args[0], thread);
        insta::assert_snapshot!(name, redact(&run.stdout, &history));
    }
}

/// `text` with the checkpoint ids, times, task ids and interrupt ids of `history` (a
/// thread's `--json` history) replaced by `<checkpoint N>`, `<time N>`, `<task N>`,
/// `<interrupt N>`, numbered oldest first.
fn redact(text: &str, history: &J) -> String {
    let mut names: Vec<(String, String)> = Vec::new();
    let mut add = |value: &J, kind: &str| {
        if let Some(v) = value.as_str() {
            if !names.iter().any(|(x, _)| x == v) {
                let n = names
                    .iter()
                    .filter(|(_, k)| k.starts_with(&format!("<{kind} ")))
                    .count();
                names.push((v.to_owned(), format!("<{kind} {n}>")));
            }
        }
    };
    let snapshots: Vec<&J> = history.as_array().into_iter().flatten().rev().collect();
    for snap in &snapshots {
        add(&snap["config"]["checkpoint_id"], "checkpoint");
        add(&snap["created_at"], "time");
    }
    for snap in &snapshots {
        for w in snap["writes"].as_array().into_iter().flatten() {
            add(&w["task_id"], "task");
        }
        for i in snap["interrupts"].as_array().into_iter().flatten() {
            add(&i["id"], "interrupt");
        }
    }
    let mut out = text.to_owned();
    for (value, name) in &names {
        out = out.replace(value.as_str(), name);
    }
    // History lines show task ids by their first 8 characters.
    for (value, name) in names.iter().filter(|(_, n)| n.starts_with("<task ")) {
        let prefix: String = value.chars().take(8).collect();
        out = out.replace(&format!("{prefix}…"), &format!("{name}…"));
    }
    out
}

/// Every command that only reads, run on `db`.
fn read_everything(db: &str) {
    for args in [
        vec!["threads", db],
        vec!["history", db, "forked"],
        vec!["show", db, "chat"],
        vec!["stats", db],
        vec!["dump", db, "sub"],
        vec!["copy", "--dry-run", db, "/nonexistent-dir/copy.db"],
    ] {
        let run = cli(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    assert_eq!(cli(&["verify", db]).code, 0);
}

#[test]
fn python_sqlite_database_reads_like_python_and_stays_unchanged() {
    let Some(py) = python() else { return };
    let dir = temp_dir("py-sqlite");
    let db = dir.join("python.db");
    let db_s = db.to_str().expect("utf-8 path");
    let expected = run_python(&py, "write", "sqlite", db_s);
    assert!(!wal_files_exist(&db), "Python left no -wal file");
    let before = std::fs::read(&db).expect("read db");

    check_reads_like_python(db_s, &expected);
    read_everything(db_s);
    refuses_writes(db_s, "readonly");
    human_output(db_s);

    assert_eq!(
        std::fs::read(&db).expect("read db"),
        before,
        "the file is unchanged"
    );
    assert!(!wal_files_exist(&db), "reading created no -wal / -shm file");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn python_postgres_database_reads_like_python() {
    let Some(py) = python() else { return };
    let Some(pg) = postgres("pyread") else { return };
    let expected = run_python(&py, "write", "postgres", &pg.url);
    check_reads_like_python(&pg.url, &expected);
    read_everything(&pg.url);
    refuses_writes(&pg.url, "read-only transaction");
    // A Python-written Postgres thread copied to SQLite reads the same in Python.
    let dir = temp_dir("pg-to-sqlite");
    let copy = dir.join("copy.db");
    let copy_s = copy.to_str().expect("utf-8");
    let run = cli(&["copy", &pg.url, copy_s]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (mut from_copy, mut want) = (
        run_python(&py, "expect", "sqlite", copy_s),
        expected.clone(),
    );
    normalize_sets(&mut from_copy);
    normalize_sets(&mut want);
    assert_json_eq(
        &from_copy,
        &want,
        "python on the SQLite copy of a Postgres database",
    );
    let _ = std::fs::remove_dir_all(dir);
    // Reading wrote nothing: Python still sees the same threads.
    let (mut again, mut expected) = (run_python(&py, "expect", "postgres", &pg.url), expected);
    normalize_sets(&mut again);
    normalize_sets(&mut expected);
    assert_json_eq(&again, &expected, "python after the reads");
}

#[test]
fn copy_sqlite_to_postgres_to_sqlite_gives_the_original_rows() {
    let Some(py) = python() else { return };
    let Some(pg) = postgres("copy") else { return };
    let dir = temp_dir("copy");
    let original = dir.join("original.db");
    let back = dir.join("back.db");
    let (original_s, back_s) = (
        original.to_str().expect("utf-8"),
        back.to_str().expect("utf-8"),
    );
    let mut expected = run_python(&py, "write", "sqlite", original_s);
    normalize_sets(&mut expected);
    let python_reads = |backend: &str, target: &str| {
        let mut got = run_python(&py, "expect", backend, target);
        normalize_sets(&mut got);
        got
    };

    let dry = dir.join("dry.db");
    let run = cli(&[
        "copy",
        "--dry-run",
        original_s,
        dry.to_str().expect("utf-8"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("would copy thread \"chat\" (5 checkpoints)"),
        "{}",
        run.stdout
    );
    assert!(!dry.exists(), "a dry run creates no database");

    let run = cli(&["copy", original_s, &pg.url]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = cli(&["copy", &pg.url, back_s]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    assert_same_rows(&original, &back);
    // Python reads both copies as it read the original.
    assert_json_eq(
        &python_reads("postgres", &pg.url),
        &expected,
        "python on the copy",
    );
    assert_json_eq(
        &python_reads("sqlite", back_s),
        &expected,
        "python on the copy back",
    );

    // An existing thread is refused, then replaced on request.
    let refused = cli(&["copy", "--thread", "chat", original_s, back_s]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("--overwrite"), "{}", refused.stderr);
    let replaced = cli(&[
        "copy",
        "--overwrite",
        "--thread",
        "chat",
        original_s,
        back_s,
    ]);
    assert_eq!(replaced.code, 0, "{}", replaced.stderr);
    assert_same_rows(&original, &back);
    let _ = std::fs::remove_dir_all(dir);
}

fn wal_files_exist(db: &Path) -> bool {
    ["-wal", "-shm"].iter().any(|suffix| {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        Path::new(&p).exists()
    })
}

/// The two SQLite files hold the same rows: writes byte for byte; checkpoints with the
/// same keys, parents, metadata bytes and decoded checkpoint (Postgres's JSONB does not
/// keep the order of map keys, so the checkpoint's maps may list their keys in another
/// order).
fn assert_same_rows(a: &Path, b: &Path) {
    type Row = (
        String,
        String,
        String,
        Option<String>,
        String,
        Vec<u8>,
        Vec<u8>,
    );
    let read = |p: &Path| -> (Vec<Row>, Vec<Vec<String>>) {
        let conn = Connection::open(p).expect("open");
        let mut stmt = conn
            .prepare(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
                 checkpoint, metadata FROM checkpoints ORDER BY 1, 2, 3",
            )
            .expect("prepare");
        let checkpoints = stmt
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })
            .expect("query")
            .collect::<Result<Vec<Row>, _>>()
            .expect("rows");
        let mut stmt = conn
            .prepare(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, \
                 channel, type, hex(value) FROM writes ORDER BY 1, 2, 3, 4, 6",
            )
            .expect("prepare");
        let writes = stmt
            .query_map([], |r| {
                (0..9)
                    .map(|i| {
                        r.get::<_, stategraph_checkpoint_sqlite::rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .expect("query")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        (checkpoints, writes)
    };
    let (ca, wa) = read(a);
    let (cb, wb) = read(b);
    assert_eq!(wa, wb, "writes rows");
    assert_eq!(ca.len(), cb.len(), "checkpoint rows");
    #[allow(clippy::default_constructed_unit_structs)]
    let serde = JsonPlusSerializer::default();
    for (x, y) in ca.iter().zip(&cb) {
        assert_eq!(
            (&x.0, &x.1, &x.2, &x.3, &x.4, &x.6),
            (&y.0, &y.1, &y.2, &y.3, &y.4, &y.6),
            "checkpoint row keys and metadata"
        );
        let dx = serde.loads_typed(&x.4, &x.5).expect("decode");
        let dy = serde.loads_typed(&y.4, &y.5).expect("decode");
        assert_json_eq(&to_json(&dx), &to_json(&dy), &format!("checkpoint {}", x.2));
    }
}
