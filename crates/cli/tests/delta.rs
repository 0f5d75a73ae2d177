//! DeltaChannel threads written by Python LangGraph (`tests/python/delta.py`): `show`,
//! `history`, `diff` and `dump` give, at every checkpoint, the values Python's
//! `get_state` gives there, rebuilt from the nearest snapshot and the writes after it;
//! a channel whose reducer the rows do not reveal is named, never left out silently.

use std::path::Path;

use serde_json::Value as J;

use crate::support::{assert_json_eq, cli, normalize_sets, postgres, python, run_script, temp_dir};

/// Runs `tests/python/delta.py BACKEND TARGET`: per thread, Python's
/// `[{checkpoint_id, values}]`, newest first.
fn write_delta_threads(py: &Path, backend: &str, target: &str) -> J {
    let mut v = run_script(py, "delta.py", &[backend, target]);
    normalize_sets(&mut v);
    v
}

/// `values` without the empty lists: Python shows a reducer channel that was never
/// written as `[]`, and the checkpoint holds nothing for it (no version, no history).
fn values_of(v: &J) -> J {
    let mut v = v.clone();
    normalize_sets(&mut v);
    if let Some(m) = v.as_object_mut() {
        m.retain(|_, x| x.as_array().is_none_or(|a| !a.is_empty()));
    }
    v
}

/// Python's checkpoints of `thread`: `(id, values)`, newest first.
fn python_states<'a>(expected: &'a J, thread: &str) -> Vec<(&'a str, &'a J)> {
    expected[thread]
        .as_array()
        .expect("a thread's states")
        .iter()
        .map(|s| (s["checkpoint_id"].as_str().expect("id"), &s["values"]))
        .collect()
}

/// `show --json` and `history --json` at every checkpoint equal Python's `get_state`.
fn check_rebuilt_like_python(db: &str, expected: &J) {
    for (thread, channel) in [("chat", "messages"), ("items", "items")] {
        let states = python_states(expected, thread);
        assert!(states.len() > 10, "{thread}: {} checkpoints", states.len());
        let history = cli(&["history", "--json", db, thread]).json();
        let history = history.as_array().expect("history is an array");
        assert_eq!(history.len(), states.len(), "{thread}: checkpoints");
        let mut rebuilt = 0;
        for ((id, want), snap) in states.iter().zip(history) {
            assert_eq!(snap["config"]["checkpoint_id"], *id);
            let what = format!("history of {thread} at {id}");
            assert_json_eq(&values_of(&snap["values"]), &values_of(want), &what);
            let show = cli(&["show", "--json", db, thread, id]).json();
            let what = format!("show of {thread} at {id}");
            assert_json_eq(&values_of(&show["values"]), &values_of(want), &what);
            let nonempty = |v: &&J| v.as_array().is_some_and(|a| !a.is_empty());
            if let Some(want) = want.get(channel).filter(nonempty) {
                let one = cli(&["show", "--json", "--channel", channel, db, thread, id]).json();
                assert_json_eq(&one["value"], want, &format!("show --channel at {id}"));
            }
            rebuilt += usize::from(show["delta_channels"].to_string().contains("\"history\""));
        }
        assert!(
            rebuilt * 2 > states.len(),
            "{thread}: most checkpoints are rebuilt ({rebuilt} of {})",
            states.len()
        );
    }
}

/// The `merged` thread's dict channel has a reducer of the user's own: at a snapshot its
/// value is Python's, elsewhere it is named as not rebuilt, with the stored value and
/// the writes that Python's reducer folds into Python's value.
fn check_unknown_reducer_is_named(db: &str, expected: &J) {
    let mut unknown = 0;
    for (id, want) in python_states(expected, "merged") {
        let show = cli(&["show", "--json", db, "merged", id]).json();
        let delta = &show["delta_channels"]["data"];
        match delta["from"].as_str() {
            Some("snapshot") => assert_json_eq(&show["values"], want, id),
            Some("unknown") => {
                unknown += 1;
                assert!(show["values"].get("data").is_none(), "{show}");
                assert!(delta["reason"].as_str().is_some_and(|r| r.contains("dict")));
                let mut merged = delta["seed"].as_object().cloned().unwrap_or_default();
                for w in delta["writes"].as_array().expect("writes") {
                    merged.extend(w.as_object().expect("a dict write").clone());
                }
                assert_json_eq(&J::Object(merged), &want["data"], id);
                let human = cli(&["show", db, "merged", id]);
                assert!(
                    human.stdout.contains("data: DeltaChannel NOT rebuilt"),
                    "{}",
                    human.stdout
                );
                assert!(human.stderr.contains("not rebuilt"), "{}", human.stderr);
                let one = cli(&["show", "--channel", "data", db, "merged", id]);
                assert_eq!(one.code, 1, "no value to print: {}", one.stdout);
                assert!(one.stdout.contains("NOT rebuilt"), "{}", one.stdout);
            }
            // Before the first write: no version, nothing to rebuild; Python shows `{}`.
            None if want["data"] == serde_json::json!({}) => {
                assert!(show["values"].get("data").is_none(), "{show}");
            }
            other => panic!("merged at {id}: {other:?} in {show}"),
        }
    }
    assert!(unknown > 3, "{unknown} checkpoints not rebuilt");
    // `diff` does not report a channel it cannot rebuild as a change: it names it.
    let states = python_states(expected, "merged");
    let (newest, oldest) = (states[0].0, states[states.len() - 2].0);
    let diff = cli(&["diff", "--json", db, "merged", oldest, newest]).json();
    assert_eq!(diff["not_rebuilt"][0]["channel"], "data", "{diff}");
    assert!(!diff["channels"].to_string().contains("\"data\""), "{diff}");
    let human = cli(&["diff", db, "merged", oldest, newest]);
    assert!(
        human.stdout.contains("? data: not compared"),
        "{}",
        human.stdout
    );
}

/// `diff` between two checkpoints that store no `messages` value shows what Python's values
/// gained; `dump` lists every rebuilt value, each Python's.
fn check_diff_and_dump(db: &str, expected: &J) {
    let states = python_states(expected, "chat");
    let stored_here = |id: &str| {
        let show = cli(&["show", "--json", db, "chat", id]).json();
        show["delta_channels"]["messages"]["from"] == "snapshot"
    };
    let rebuilt: Vec<usize> = (2..states.len())
        .filter(|&i| !stored_here(states[i].0))
        .collect();
    let (new_id, new) = states[rebuilt[0]];
    let (old_id, old) = states[rebuilt[rebuilt.len() / 2]];
    let diff = cli(&["diff", "--json", db, "chat", old_id, new_id]).json();
    let messages = diff["channels"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["channel"] == "messages"))
        .unwrap_or_else(|| panic!("messages changed: {diff}"));
    let (old, new) = (
        old["messages"].as_array().expect("old"),
        new["messages"].as_array().expect("new"),
    );
    let common = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    assert_eq!(messages["common"], common);
    assert_json_eq(
        &messages["appended"],
        &J::from(new[common..].to_vec()),
        "appended",
    );

    let dump = cli(&["--json", "dump", db, "chat"]).json();
    let items = dump["delta_values"].as_array().expect("delta values");
    let by_id: std::collections::HashMap<&str, &J> = states.iter().copied().collect();
    let mut n = 0;
    for item in items.iter().filter(|i| i["channel"] == "messages") {
        let id = item["checkpoint_id"].as_str().expect("id");
        assert_json_eq(&item["value"], &by_id[id]["messages"], id);
        n += 1;
    }
    assert!(n * 2 > states.len(), "{n} rebuilt values dumped");
    let text = cli(&["dump", db, "chat"]);
    assert!(text.stdout.starts_with("storage:\n"), "{}", text.stdout);
    assert!(text.stdout.contains("\ndelta values ("), "{}", text.stdout);
    assert!(text.stdout.contains("'messages': [HumanMessage("));
}

#[test]
fn python_delta_threads_read_like_get_state_on_sqlite() {
    let Some(py) = python() else { return };
    let dir = temp_dir("py-delta");
    let db = dir.join("delta.db");
    let db_s = db.to_str().expect("utf-8 path");
    let expected = write_delta_threads(&py, "sqlite", db_s);
    check_rebuilt_like_python(db_s, &expected);
    check_unknown_reducer_is_named(db_s, &expected);
    check_diff_and_dump(db_s, &expected);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn python_delta_threads_read_like_get_state_on_postgres() {
    let Some(py) = python() else { return };
    let Some(pg) = postgres("pydelta") else {
        return;
    };
    let expected = write_delta_threads(&py, "postgres", &pg.url);
    check_rebuilt_like_python(&pg.url, &expected);
    check_unknown_reducer_is_named(&pg.url, &expected);
    check_diff_and_dump(&pg.url, &expected);
}
