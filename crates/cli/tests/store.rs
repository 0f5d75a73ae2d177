//! `stategraph store namespaces|get|search`: stores written by Python's `SqliteStore` and
//! `PostgresStore` (answers compared with LangGraph's own `list_namespaces`, `get` and
//! `search`) and by stategraph's `SqliteStore`; reads leave the file byte-identical; bad
//! input fails cleanly.

use std::path::Path;

use serde_json::{json, Value as J};
use stategraph_store::BaseStore;
use stategraph_store_sqlite::SqliteStore;

use crate::stategraph_db::write_db;
use crate::support::{cli, postgres, python, run_script, temp_dir};

/// Runs `tests/python/store.py BACKEND TARGET`: Python fills a store and prints its answers.
fn python_store(python: &Path, backend: &str, target: &str) -> J {
    run_script(python, "store.py", &[backend, target])
}

/// An item of the command's JSON in the shape the Python helper prints.
fn item(v: &J) -> J {
    json!({"namespace": v["namespace"], "key": v["key"], "value": v["value"]})
}

fn sorted_items(v: &J) -> J {
    let mut items: Vec<J> = v.as_array().expect("a list").iter().map(item).collect();
    items.sort_by_key(|i| (i["namespace"].to_string(), i["key"].to_string()));
    J::Array(items)
}

/// Every command's `--json` on `db` against Python's answers for the same store.
fn check_against_python(db: &str, expected: &J) {
    let got = cli(&["--json", "store", "namespaces", db]).json();
    assert_eq!(got, expected["namespaces"]);
    let got = cli(&[
        "--json",
        "store",
        "namespaces",
        db,
        "--prefix",
        "users",
        "--max-depth",
        "1",
    ])
    .json();
    assert_eq!(got, expected["namespaces_users_depth1"]);
    let got = cli(&["--json", "store", "get", db, "users.42", "profile"]).json();
    assert_eq!(item(&got), expected["get"]);
    assert!(got["created_at"].is_string() && got["updated_at"].is_string());
    let got = cli(&["--json", "store", "get", db, "docs", "readme"]).json();
    assert_eq!(item(&got), expected["get_docs"]);
    let got = cli(&[
        "--json",
        "store",
        "search",
        db,
        "users",
        "--filter",
        r#"{"theme": "dark"}"#,
    ])
    .json();
    assert_eq!(sorted_items(&got), expected["search_users_dark"]);
    let got = cli(&["--json", "store", "search", db, "--limit", "100"]).json();
    assert_eq!(sorted_items(&got), expected["search_all"]);
    // A deleted item is gone; a missing one is a clean failure.
    let r = cli(&["store", "get", db, "docs.old", "gone"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("error: no item \"gone\""),
        "{}",
        r.stderr
    );
}

#[test]
fn store_commands_read_a_python_sqlite_store_as_python_does() {
    let Some(python) = python() else { return };
    let dir = temp_dir("store-py-sqlite");
    let path = dir.join("store.db");
    let p = path.to_str().expect("utf-8");
    let expected = python_store(&python, "sqlite", p);
    let before = std::fs::read(&path).expect("read");
    check_against_python(p, &expected);
    // Human output: one namespace a line; a table for search.
    let r = cli(&["store", "namespaces", p]);
    assert_eq!(r.stdout, "docs\nusers.42\nusers.7\n");
    let r = cli(&[
        "store",
        "search",
        p,
        "users",
        "--filter",
        r#"{"lang": "en"}"#,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("namespace  key    updated"),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .contains(r#"{"theme":"light","lang":"en","size":1}"#));
    assert_eq!(r.stdout.lines().count(), 2, "{}", r.stdout);
    // Reading changed nothing and created no file.
    assert_eq!(std::fs::read(&path).expect("read"), before);
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec!["store.db"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn store_commands_read_a_python_postgres_store_as_python_does() {
    let Some(python) = python() else { return };
    let Some(pg) = postgres("store") else { return };
    let expected = python_store(&python, "postgres", &pg.url);
    check_against_python(&pg.url, &expected);
}

#[test]
fn store_commands_read_a_stategraph_sqlite_store() {
    let dir = temp_dir("store-rs");
    let path = dir.join("store.db");
    let p = path.to_str().expect("utf-8");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let store = SqliteStore::open(&path).expect("open");
        let doc = |v: J| v.as_object().cloned().expect("object");
        store
            .put(["team", "a"].into(), "k1", doc(json!({"n": 1, "tag": "x"})))
            .await
            .expect("put");
        store
            .put(["team", "b"].into(), "k2", doc(json!({"n": 2, "tag": "y"})))
            .await
            .expect("put");
    });
    let got = cli(&["--json", "store", "namespaces", p]).json();
    assert_eq!(got, json!([["team", "a"], ["team", "b"]]));
    let got = cli(&["--json", "store", "get", p, "team.b", "k2"]).json();
    assert_eq!(got["value"], json!({"n": 2, "tag": "y"}));
    let got = cli(&[
        "--json",
        "store",
        "search",
        p,
        "team",
        "--filter",
        r#"{"n": {"$gt": 1}}"#,
    ])
    .json();
    assert_eq!(got.as_array().map(Vec::len), Some(1));
    assert_eq!(got[0]["key"], "k2");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn store_commands_fail_cleanly_on_bad_input() {
    let dir = temp_dir("store-bad");
    let checkpoints = dir.join("stategraph.db");
    write_db(&checkpoints);
    let c = checkpoints.to_str().expect("utf-8");
    let fails = |args: &[&str], needle: &str| {
        let r = cli(args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.starts_with("error: "), "{}", r.stderr);
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
    };
    fails(&["store", "namespaces", c], "holds no store");
    fails(
        &["store", "namespaces", "/nonexistent/x.db"],
        "no such database file",
    );
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a database, just text\n".repeat(100)).expect("write");
    fails(
        &["store", "get", text.to_str().expect("utf-8"), "a", "b"],
        "not a SQLite database",
    );
    fails(
        &[
            "store",
            "namespaces",
            "postgresql://postgres@127.0.0.1:1/nothing",
        ],
        "cannot connect",
    );
    let store = dir.join("store.db");
    drop(SqliteStore::open(&store).expect("open"));
    let s = store.to_str().expect("utf-8");
    fails(&["store", "search", s, "--filter", "{not json"], "not JSON");
    fails(&["store", "search", s, "--filter", "[1]"], "JSON object");
    let _ = std::fs::remove_dir_all(dir);
}
