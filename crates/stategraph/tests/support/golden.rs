//! Reading the golden Python traces and comparing a run's storage with them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value as J;
use stategraph::checkpoint::id::IdGenerator;
use stategraph::checkpoint::serde::Typed;
use stategraph::checkpoint::source::{FakeClock, PyRandom};
use stategraph::checkpoint::version_gen::VersionGenerator;
use stategraph::checkpoint::{MemorySaver, Value};
use stategraph::Sources;

/// 2025-01-01T00:00:00Z, the fake clock's epoch in `gen_golden.py`.
pub const BASE_NS: u64 = 1_735_689_600 * 1_000_000_000;
/// The seed of `gen_golden.py`.
pub const SEED: u64 = 1234;

pub fn load(name: &str) -> J {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/golden")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).expect("golden file is JSON")
}

/// The id, timestamp and debug clocks `gen_golden.py` installs, freshly seeded.
pub fn sources() -> Sources {
    let ids = IdGenerator::new(
        Arc::new(FakeClock::new(BASE_NS, 1_000_000)),
        Box::new(PyRandom::new(SEED)),
    );
    Sources::new(
        Arc::new(ids),
        Arc::new(FakeClock::new(BASE_NS + 1_000, 1_000_000)),
        Arc::new(FakeClock::new(BASE_NS + 1_000, 1_000_000)),
    )
}

/// A MemorySaver minting the versions of the traces.
pub fn saver() -> Arc<MemorySaver> {
    Arc::new(MemorySaver::new().with_versions(VersionGenerator::python_seeded(SEED + 1)))
}

fn s(j: &J) -> String {
    j.as_str()
        .unwrap_or_else(|| panic!("not a string: {j}"))
        .to_owned()
}

fn show(tag: &str, bytes: &[u8]) -> String {
    format!("({tag}, {})", hex::encode(bytes))
}

fn typed_j(j: &J) -> String {
    show(&s(&j["type"]), &hex::decode(s(&j["hex"])).expect("hex"))
}

fn typed(t: &Typed) -> String {
    show(&t.tag, &t.bytes)
}

pub type Maps = (
    BTreeMap<String, String>,
    BTreeMap<String, String>,
    BTreeMap<String, String>,
);

pub fn expected(inmemory: &J) -> Maps {
    let mut storage = BTreeMap::new();
    for e in inmemory["storage"].as_array().expect("storage") {
        let key = format!(
            "{}|{}|{}",
            s(&e["thread_id"]),
            s(&e["checkpoint_ns"]),
            s(&e["checkpoint_id"])
        );
        let parent = e["parent_checkpoint_id"]
            .as_str()
            .unwrap_or("None")
            .to_owned();
        storage.insert(
            key,
            format!(
                "{} {} parent={parent}",
                typed_j(&e["checkpoint"]),
                typed_j(&e["metadata"])
            ),
        );
    }
    let mut writes = BTreeMap::new();
    for e in inmemory["writes"].as_array().expect("writes") {
        let key = format!(
            "{}|{}|{}|{}|{}",
            s(&e["thread_id"]),
            s(&e["checkpoint_ns"]),
            s(&e["checkpoint_id"]),
            s(&e["task_id"]),
            e["idx"]
        );
        writes.insert(
            key,
            format!(
                "{} {} path={}",
                s(&e["channel"]),
                typed_j(&e["value"]),
                s(&e["task_path"])
            ),
        );
    }
    let mut blobs = BTreeMap::new();
    for e in inmemory["blobs"].as_array().expect("blobs") {
        let key = format!(
            "{}|{}|{}|{}",
            s(&e["thread_id"]),
            s(&e["checkpoint_ns"]),
            s(&e["channel"]),
            s(&e["version"])
        );
        blobs.insert(key, typed_j(&e["value"]));
    }
    (storage, writes, blobs)
}

pub fn actual(saver: &MemorySaver) -> Maps {
    let layout = saver.storage_snapshot();
    let mut storage = BTreeMap::new();
    for e in &layout.storage {
        let key = format!("{}|{}|{}", e.thread_id, e.checkpoint_ns, e.checkpoint_id);
        let parent = e
            .parent_checkpoint_id
            .clone()
            .unwrap_or_else(|| "None".into());
        storage.insert(
            key,
            format!(
                "{} {} parent={parent}",
                typed(&e.checkpoint),
                typed(&e.metadata)
            ),
        );
    }
    let mut writes = BTreeMap::new();
    for e in &layout.writes {
        let key = format!(
            "{}|{}|{}|{}|{}",
            e.thread_id, e.checkpoint_ns, e.checkpoint_id, e.task_id, e.idx
        );
        writes.insert(
            key,
            format!("{} {} path={}", e.channel, typed(&e.value), e.task_path),
        );
    }
    let mut blobs = BTreeMap::new();
    for e in &layout.blobs {
        let key = format!(
            "{}|{}|{}|{}",
            e.thread_id, e.checkpoint_ns, e.channel, e.version
        );
        blobs.insert(key, typed(&e.value));
    }
    (storage, writes, blobs)
}

/// True when two rendered `(tag, hex)` values differ only in the order of the items of a
/// Python set: a set's iteration order depends on Python's hash seed (docs/runtime.md#python-sets),
/// so such
/// values are compared as sets.
fn equal_as_sets(a: &str, b: &str) -> bool {
    let decode = |s: &str| -> Option<J> {
        let hex_part = s.split(", ").nth(1)?.trim_end_matches(')');
        let bytes = hex::decode(hex_part).ok()?;
        let v = stategraph::checkpoint::serde::msgpack::decode(&bytes).ok()?;
        Some(to_json(&v))
    };
    let has_set = a.contains("6275696c74696e73a3736574"); // "builtins" "set"
    has_set && decode(a).is_some() && decode(a) == decode(b)
}

pub fn same(
    what: &str,
    exp: &BTreeMap<String, String>,
    got: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut diffs = Vec::new();
    for (k, v) in exp {
        match got.get(k) {
            None => diffs.push(format!("{what} missing {k}: {v}")),
            Some(g) if g != v && !equal_as_sets(v, g) => diffs.push(format!(
                "{what} differs {k}:\n   expected {v}\n   got      {g}"
            )),
            _ => {}
        }
    }
    for (k, v) in got {
        if !exp.contains_key(k) {
            diffs.push(format!("{what} extra {k}: {v}"));
        }
    }
    diffs
}

/// Asserts the saver holds exactly the trace's `inmemory` storage, writes and blobs.
pub fn assert_storage_matches(trace: &J, saver: &MemorySaver) {
    let (es, ew, eb) = expected(&trace["inmemory"]);
    let (gs, gw, gb) = actual(saver);
    let mut diffs = same("storage", &es, &gs);
    diffs.extend(same("writes", &ew, &gw));
    diffs.extend(same("blobs", &eb, &gb));
    assert!(
        diffs.is_empty(),
        "{} differences from the trace:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
    assert!(!es.is_empty(), "the trace stores something");
}

/// Converts a golden JSON rendering into a comparable JSON form (tuples become lists).
pub fn normalize(j: &J) -> J {
    match j {
        J::Object(m) if m.len() == 1 && m.contains_key("$tuple") => normalize(&m["$tuple"]),
        J::Object(m) => J::Object(m.iter().map(|(k, v)| (k.clone(), normalize(v))).collect()),
        J::Array(a) => J::Array(a.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

/// A value as JSON for comparison with a golden rendering (objects as `$type` maps).
pub fn to_json(v: &Value) -> J {
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::UInt(u) => J::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Value::Str(s) => J::String(s.to_string()),
        Value::Bytes(b) => J::String(hex::encode(b)),
        Value::List(l) => J::Array(l.iter().map(to_json).collect()),
        Value::Map(m) => J::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Value::Str(s) => s.to_string(),
                        other => format!("{other:?}"),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Value::Ext(e) => match e.as_object() {
            Some(o) if o.class == "set" || o.class == "frozenset" => {
                let mut items: Vec<J> = o
                    .data
                    .as_list()
                    .unwrap_or(&[])
                    .iter()
                    .map(to_json)
                    .collect();
                items.sort_by_key(|a| a.to_string());
                serde_json::json!({ "$set": items })
            }
            Some(o) if o.class == "Send" => {
                let args = o.data.as_list().unwrap_or(&[]);
                serde_json::json!({
                    "$type": format!("{}.{}", o.module, o.class),
                    "node": args.first().map(to_json),
                    "arg": args.get(1).map(to_json),
                })
            }
            Some(o) => {
                let mut m = serde_json::Map::new();
                m.insert(
                    "$type".into(),
                    J::String(format!("{}.{}", o.module, o.class)),
                );
                if let J::Object(fields) = to_json(&o.data) {
                    m.extend(fields);
                }
                J::Object(m)
            }
            None => J::Null,
        },
    }
}

fn config_json(c: &stategraph::checkpoint::CheckpointConfig) -> J {
    let mut conf = serde_json::Map::new();
    conf.insert("thread_id".into(), J::from(c.thread_id.clone()));
    conf.insert("checkpoint_ns".into(), J::from(c.ns()));
    if let Some(id) = &c.checkpoint_id {
        conf.insert("checkpoint_id".into(), J::from(id.clone()));
    }
    if let Some(map) = c.configurable.get("checkpoint_map") {
        conf.insert("checkpoint_map".into(), to_json(map));
    }
    serde_json::json!({ "configurable": conf })
}

fn interrupts_json(list: &[stategraph::Interrupt]) -> J {
    J::Array(list.iter().map(|i| to_json(&i.to_value())).collect())
}

/// A snapshot as Python renders a nested `StateSnapshot` (a named tuple).
fn snapshot_tuple(s: &stategraph::pregel::snapshot::StateSnapshot) -> J {
    let j = snapshot_json(s);
    let tasks: Vec<J> = j["tasks"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    J::Array(vec![
                        t["id"].clone(),
                        t["name"].clone(),
                        t["path"].clone(),
                        t["error"].clone(),
                        t["interrupts"].clone(),
                        t["state"].clone(),
                        t["result"].clone(),
                    ])
                })
                .collect()
        })
        .unwrap_or_default();
    J::Array(vec![
        j["values"].clone(),
        j["next"].clone(),
        j["config"].clone(),
        j["metadata"].clone(),
        j["created_at"].clone(),
        j["parent_config"].clone(),
        J::Array(tasks),
        j["interrupts"].clone(),
    ])
}

/// A snapshot rendered the way the traces render `get_state` results.
pub fn snapshot_json(s: &stategraph::pregel::snapshot::StateSnapshot) -> J {
    let values = to_json(&Value::Map(
        s.values
            .iter()
            .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
            .collect(),
    ));
    let tasks: Vec<J> = s
        .tasks
        .iter()
        .map(|t| {
            let path: Vec<J> = t
                .path
                .0
                .iter()
                .map(|p| match p {
                    stategraph::pregel::task::PathPart::Str(x) => J::from(x.clone()),
                    stategraph::pregel::task::PathPart::Int(n) => J::from(*n),
                    stategraph::pregel::task::PathPart::Bool(b) => J::from(*b),
                })
                .collect();
            serde_json::json!({
                "id": t.id,
                "name": t.name,
                "path": path,
                "error": t.error.as_ref().map(to_json),
                "interrupts": interrupts_json(&t.interrupts),
                "state": match &t.state {
                    None => J::Null,
                    Some(stategraph::pregel::snapshot::TaskState::Config(c)) => config_json(c),
                    Some(stategraph::pregel::snapshot::TaskState::Snapshot(s)) => snapshot_tuple(s),
                },
                "result": t.result.as_ref().map(to_json),
            })
        })
        .collect();
    serde_json::json!({
        "values": values,
        "next": s.next,
        "config": s.config.as_ref().map(config_json),
        "metadata": s.metadata.as_ref().map(|m| to_json(&m.to_value())),
        "created_at": s.created_at,
        "parent_config": s.parent_config.as_ref().map(config_json),
        "tasks": tasks,
        "interrupts": interrupts_json(&s.interrupts),
    })
}

/// Compares a history (newest first) with the trace's `history[key]`.
pub fn assert_history_matches(
    trace: &J,
    key: &str,
    got: &[stategraph::pregel::snapshot::StateSnapshot],
) {
    let expected: Vec<J> = trace["history"][key]
        .as_array()
        .unwrap_or_else(|| panic!("history {key}"))
        .iter()
        .map(normalize)
        .collect();
    let got: Vec<J> = got.iter().map(snapshot_json).collect();
    assert_eq!(got.len(), expected.len(), "history length");
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "history entry {i} differs");
    }
}
