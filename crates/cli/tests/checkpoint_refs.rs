//! Naming checkpoints on the command line: a unique id prefix (as git takes commits) and
//! `step:N`, in `show`, `diff` and `history --before`; an ambiguous or unknown name is a
//! clear error that lists the candidates.

use crate::stategraph_db::write_db;
use crate::support::{cli, temp_dir};

fn id(n: usize) -> String {
    format!("1ef00000-0000-6000-8000-{n:012}")
}

/// The checkpoint id `show --json` picked.
fn shown(db: &str, reference: &str) -> String {
    let snapshot = cli(&["show", "--json", db, "notes", reference]).json();
    snapshot["config"]["checkpoint_id"]
        .as_str()
        .expect("an id")
        .to_owned()
}

#[test]
fn show_and_diff_take_id_prefixes_and_steps() {
    let dir = temp_dir("refs");
    let path = dir.join("stategraph.db");
    write_db(&path);
    let db = path.to_str().expect("utf-8");

    // Prefixes: `…0000000001` only starts id 100 (ids 10 and 11 end `000000000010/11`);
    // case does not matter.
    assert_eq!(shown(db, "1ef00000-0000-6000-8000-0000000001"), id(100));
    assert_eq!(shown(db, "1EF00000-0000-6000-8000-00000000010"), id(100));
    assert_eq!(shown(db, &id(7)), id(7));

    // Steps. Step 4 is both the loop checkpoint 4 and the update forked from 3 (id 100);
    // the update is on the line to the latest checkpoint (it is the latest).
    assert_eq!(shown(db, "step:2"), id(2));
    assert_eq!(shown(db, "step:4"), id(100));
    assert_eq!(shown(db, "step:11"), id(11));

    let diff = cli(&[
        "diff",
        "--json",
        db,
        "notes",
        "step:9",
        "1ef00000-0000-6000-8000-000000000011",
    ])
    .json();
    assert_eq!(diff["a"], id(9));
    assert_eq!(diff["b"], id(11));
    let by_id = cli(&["diff", "--json", db, "notes", &id(9), &id(11)]).json();
    assert_eq!(diff["channels"], by_id["channels"]);

    let before = cli(&[
        "history", "--json", "--before", "step:5", "--limit", "2", db, "notes",
    ])
    .json();
    let ids: Vec<&str> = before
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["config"]["checkpoint_id"].as_str())
        .collect();
    assert_eq!(ids, [id(4), id(3)]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn ambiguous_and_unknown_names_are_clear_errors() {
    let dir = temp_dir("refs-errors");
    let path = dir.join("stategraph.db");
    write_db(&path);
    let db = path.to_str().expect("utf-8");

    // Ids 10 and 11 both start so.
    let r = cli(&["show", db, "notes", "1ef00000-0000-6000-8000-00000000001"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr.starts_with("error: checkpoint id prefix"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("ambiguous"), "{}", r.stderr);
    assert!(r.stderr.contains("2 checkpoints match"), "{}", r.stderr);
    assert!(
        r.stderr.contains(&id(10)) && r.stderr.contains(&id(11)),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains(&id(9)), "{}", r.stderr);

    let r = cli(&["diff", db, "notes", "1ef0", &id(11)]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("13 checkpoints match"), "{}", r.stderr);
    assert!(r.stderr.contains("… and 5 more"), "{}", r.stderr);

    // A bare number is an id prefix; the error says how to name a step.
    let r = cli(&["show", db, "notes", "12"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("starts with \"12\""), "{}", r.stderr);
    assert!(r.stderr.contains("step:12"), "{}", r.stderr);

    let r = cli(&["show", db, "notes", "step:40"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("no checkpoint at step 40"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("from 0 to 11"), "{}", r.stderr);

    // Not a step: a command-line mistake (clap's exit code 2).
    let r = cli(&["show", db, "notes", "step:four"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("whole number"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(dir);
}
