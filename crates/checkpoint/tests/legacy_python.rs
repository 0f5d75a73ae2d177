//! Legacy `json` payloads read by stategraph and by the pinned Python LangGraph agree.
//!
//! For every payload of `fixtures/legacy_json/corpus.json` (the issue's
//! `FileCallbackHandler` envelope and variants: other modules, nesting, `lc: 2` types,
//! secrets, `not_implemented`, Python's JSON grammar), stategraph reads it and, when it
//! accepts it, stores it again (`dumps_typed`); `fixtures/legacy_json/check.py` then asks
//! Python's default `JsonPlusSerializer` to read the original and stategraph's bytes. The
//! rules:
//!
//! * Python refuses => stategraph refuses (so nothing Python refuses can become, once
//!   stategraph has stored it again, something Python constructs);
//! * Python reads it => stategraph reads it, and Python reads stategraph's bytes exactly
//!   as it reads the original (same types, values, key order) -- except for the cases
//!   marked `"narrower"`, which stategraph deliberately refuses (and must keep refusing).
//!
//! Runs with `STATEGRAPH_PYTHON` (or the venv in `target/langgraph-venv`); skipped with a
//! note when there is none, unless `STATEGRAPH_INTEROP=1`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value as J};
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::Error;

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
    println!("note: skipping: no venv Python at {path:?}");
    None
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/legacy_json")
}

#[test]
fn legacy_json_agrees_with_python_and_never_widens() {
    let corpus: Vec<J> = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("corpus.json")).expect("corpus"),
    )
    .expect("corpus is JSON");
    assert!(corpus.len() > 100);
    let serde = JsonPlusSerializer;
    let mut cases = Vec::new();
    let mut ours = std::collections::HashMap::new();
    for case in &corpus {
        let name = case["name"].as_str().expect("name").to_owned();
        let text = case["json"].as_str().expect("json");
        let rust = match serde.loads_typed("json", text.as_bytes()) {
            Ok(value) => {
                let typed = serde.dumps_typed(&value).expect("a read value stores");
                Some(json!({"tag": typed.tag, "hex": hex::encode(&typed.bytes)}))
            }
            Err(
                e @ (Error::Refused { .. }
                | Error::Decode(_)
                | Error::InvalidData(_)
                | Error::Unsupported(_)),
            ) => {
                if let Error::Refused { path, .. } = &e {
                    assert!(path.starts_with('$'), "{name}: {e}");
                }
                None
            }
            Err(other) => panic!("{name}: unexpected error kind {other:?}"),
        };
        ours.insert(name.clone(), rust.is_some());
        cases.push(json!({"name": name, "json": text, "rust": rust}));
    }
    let Some(python) = python() else {
        return;
    };
    let input = std::env::temp_dir().join(format!(
        "stategraph-legacy-json-{}.json",
        uuid::Uuid::new_v4()
    ));
    std::fs::write(&input, serde_json::to_vec(&cases).expect("cases")).expect("write cases");
    let out = std::process::Command::new(python)
        .arg(fixtures().join("check.py"))
        .arg(&input)
        .output()
        .expect("run check.py");
    std::fs::remove_file(&input).ok();
    assert!(
        out.status.success(),
        "check.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<J> = String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(results.len(), corpus.len());
    let mut problems = Vec::new();
    let (mut refused_both, mut same, mut narrower) = (0, 0, 0);
    for (case, result) in corpus.iter().zip(&results) {
        let name = case["name"].as_str().unwrap_or_default();
        assert_eq!(result["name"], case["name"]);
        let narrower_expected = case["expect"] == "narrower";
        let rust_reads = ours[name];
        let python_reads = result["python"] == "ok";
        match (python_reads, rust_reads) {
            (false, false) => refused_both += 1,
            (false, true) => problems.push(format!(
                "{name}: Python refuses ({}) but stategraph reads it",
                result["error"]
            )),
            (true, false) if narrower_expected => narrower += 1,
            (true, false) => problems.push(format!("{name}: Python reads it, stategraph refuses")),
            (true, true) if narrower_expected => {
                problems.push(format!("{name}: marked narrower but stategraph reads it"))
            }
            (true, true) if result["same"] == true => same += 1,
            (true, true) => problems.push(format!(
                "{name}: Python reads stategraph's bytes differently: {}",
                result["error"]
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    println!(
        "{refused_both} refused by both, {same} read alike, {narrower} refused by stategraph only"
    );
    assert!(refused_both >= 40 && same >= 40, "corpus lost its balance");
}
