//! Bad input: a clear message on stderr and a non-zero exit, never a panic.

use stategraph_checkpoint_sqlite::rusqlite::Connection;

use crate::stategraph_db::write_db;
use crate::support::{cli, temp_dir};

fn assert_clean_failure(args: &[&str], needle: &str) {
    let r = cli(args);
    assert_ne!(r.code, 0, "{args:?} should fail");
    assert_ne!(r.code, 101, "{args:?} panicked: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(r.stderr.starts_with("error: "), "{}", r.stderr);
    assert!(
        r.stderr.contains(needle),
        "{args:?}: {:?} lacks {needle:?}",
        r.stderr
    );
}

#[test]
fn a_file_that_is_not_sqlite_is_refused() {
    let dir = temp_dir("notsqlite");
    let path = dir.join("notes.txt");
    std::fs::write(
        &path,
        "hello, this is not a database at all, just some text\n".repeat(100),
    )
    .expect("write");
    let p = path.to_str().expect("utf-8");
    assert_clean_failure(&["threads", p], "not a SQLite database");
    assert_clean_failure(&["show", p, "t"], "not a SQLite database");
    assert_clean_failure(&["threads", "/nonexistent/x.db"], "no such database file");
    let empty = dir.join("empty.db");
    Connection::open(&empty)
        .and_then(|c| c.execute_batch("CREATE TABLE t (a)"))
        .expect("sqlite");
    assert_clean_failure(
        &["threads", empty.to_str().expect("utf-8")],
        "not a checkpoint database",
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_unreachable_server_is_reported() {
    assert_clean_failure(
        &["threads", "postgresql://postgres@127.0.0.1:1/nothing"],
        "cannot connect",
    );
    assert_clean_failure(&["threads", "postgresql://no host here"], "cannot connect");
}

#[test]
fn corrupt_rows_and_unknown_extensions_are_reported_with_their_row() {
    let dir = temp_dir("corrupt");
    let path = dir.join("stategraph.db");
    write_db(&path);
    let p = path.to_str().expect("utf-8");
    let conn = Connection::open(&path).expect("open");
    // 0xc1 is never used by msgpack; d4 2a 00 is an extension of the unknown type 42.
    conn.execute_batch(
        "UPDATE writes SET value = x'c1' WHERE thread_id = 'notes'; \
         UPDATE checkpoints SET checkpoint = x'81a176d42a00' \
           WHERE thread_id = 'notes' AND checkpoint_id = '1ef00000-0000-6000-8000-000000000005';",
    )
    .expect("corrupt");
    drop(conn);

    let r = cli(&["verify", "--json", p]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let problems = report["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.iter().any(|p| p["row"]
        .as_str()
        .is_some_and(|r| r.starts_with("writes[thread=\"notes\""))));
    assert!(problems.iter().any(|p| p["row"]
        .as_str()
        .is_some_and(|r| r.contains("000000000005") && r.ends_with(".checkpoint"))));

    assert_clean_failure(
        &["show", p, "notes", "1ef00000-0000-6000-8000-000000000005"],
        "42",
    );
    assert_clean_failure(&["show", p, "missing-thread"], "no checkpoints");
    let _ = std::fs::remove_dir_all(dir);
}

/// A build without the `serve` feature (the default) still knows the command and says how
/// to get it, whatever flags follow, instead of clap's "unrecognized subcommand".
#[cfg(not(feature = "serve"))]
#[test]
fn serve_without_the_feature_says_how_to_get_it() {
    for args in [
        &["serve"][..],
        &[
            "serve",
            "--demo",
            "--port",
            "0",
            "--database-url",
            "postgresql://x",
        ],
    ] {
        assert_clean_failure(args, "--features serve");
    }
}
