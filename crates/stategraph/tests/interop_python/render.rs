//! Checkpoints, histories and values as the tagged JSON `interop_graphs.py` prints, so that
//! what stategraph reads from a database can be compared with what Python reads from it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value as J};
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, CheckpointTuple, ListOptions};
use stategraph::pregel::snapshot::{StateSnapshot, TaskState};
use stategraph::pregel::task::PathPart;
use stategraph::{CompiledGraph, DynState, RunConfig, Value};

/// Every stored checkpoint (`thread|ns|id` to its tuple) and every thread's history
/// (`thread|ns` to its snapshots, newest first).
#[derive(Debug, Default)]
pub(crate) struct Dump {
    pub(crate) tuples: BTreeMap<String, J>,
    pub(crate) history: BTreeMap<String, Vec<J>>,
}

impl Dump {
    /// Reads the `tuples` and `history` of a dump printed by the Python script.
    pub(crate) fn from_python(j: &J) -> Dump {
        let tuples = j["tuples"]
            .as_object()
            .expect("tuples")
            .iter()
            .map(|(k, v)| (k.clone(), normalize(v)))
            .collect();
        let history = j["history"]
            .as_object()
            .expect("history")
            .iter()
            .map(|(k, v)| {
                let snaps = v.as_array().expect("snapshots");
                (k.clone(), snaps.iter().map(normalize).collect())
            })
            .collect();
        Dump { tuples, history }
    }

    /// The root history of a thread.
    pub(crate) fn root(&self, thread: &str) -> &[J] {
        self.history
            .get(&format!("{thread}|"))
            .unwrap_or_else(|| panic!("no history of {thread}"))
    }
}

/// Asserts two dumps hold the same checkpoints and histories, naming the first difference.
pub(crate) fn assert_same(python: &Dump, rust: &Dump) {
    let pk: Vec<&String> = python.tuples.keys().collect();
    let rk: Vec<&String> = rust.tuples.keys().collect();
    assert_eq!(pk, rk, "the same checkpoints are listed");
    for (key, p) in &python.tuples {
        let r = &rust.tuples[key];
        assert_eq!(r, p, "checkpoint tuple {key}: {}", first_difference(r, p));
    }
    let pk: Vec<&String> = python.history.keys().collect();
    let rk: Vec<&String> = rust.history.keys().collect();
    assert_eq!(pk, rk, "the same histories");
    for (key, p) in &python.history {
        let r = &rust.history[key];
        assert_eq!(r.len(), p.len(), "length of the history of {key}");
        for (i, (r, p)) in r.iter().zip(p).enumerate() {
            assert_eq!(
                r,
                p,
                "history of {key}, entry {i} (0 is the newest): {}",
                first_difference(r, p)
            );
        }
    }
}

/// Where two JSON values first differ (`stategraph` on the left, Python on the right).
fn first_difference(r: &J, p: &J) -> String {
    fn walk(r: &J, p: &J, path: String) -> Option<String> {
        match (r, p) {
            (J::Object(a), J::Object(b)) => {
                let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                keys.into_iter().find_map(|k| match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => walk(x, y, format!("{path}.{k}")),
                    (x, y) => Some(format!("{path}.{k}: {x:?} != {y:?}")),
                })
            }
            (J::Array(a), J::Array(b)) if a.len() == b.len() => a
                .iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| walk(x, y, format!("{path}[{i}]"))),
            _ if r == p => None,
            _ => Some(format!("{path}: {r} != {p}")),
        }
    }
    walk(r, p, String::new()).unwrap_or_default()
}

/// Reads every checkpoint with `list` (each checked against `get_tuple`) and the history of
/// every thread and namespace with the thread's graph.
pub(crate) async fn dump(
    saver: &Arc<dyn CheckpointSaver>,
    graph_of: impl Fn(&str) -> CompiledGraph<DynState>,
) -> Dump {
    let mut out = Dump::default();
    let listed = saver
        .list(None, &ListOptions::default())
        .await
        .expect("list");
    for t in &listed {
        let c = &t.config;
        let key = format!(
            "{}|{}|{}",
            c.thread_id,
            c.ns(),
            c.checkpoint_id.as_deref().expect("an id")
        );
        let rendered = tuple(t);
        let again = saver
            .get_tuple(c)
            .await
            .expect("get_tuple")
            .expect("listed checkpoint");
        assert_eq!(
            tuple(&again),
            rendered,
            "get_tuple and list differ on {key}"
        );
        out.tuples.insert(key, rendered);
    }
    for t in &listed {
        let (thread, ns) = (&t.config.thread_id, t.config.ns());
        let key = format!("{thread}|{ns}");
        if out.history.contains_key(&key) {
            continue;
        }
        let history = graph_of(thread)
            .get_state_history(
                &RunConfig::thread(thread.as_str()).in_namespace(ns),
                &ListOptions::default(),
            )
            .await
            .expect("history");
        let snaps = history.iter().map(|s| normalize(&snapshot(s))).collect();
        out.history.insert(key, snaps);
    }
    out
}

/// Tuples become lists and set items are sorted by their JSON text, on both sides (Python
/// sorts with `json.dumps`, which escapes non-ASCII text).
pub(crate) fn normalize(j: &J) -> J {
    match j {
        J::Object(m) if m.len() == 1 && m.contains_key("$tuple") => normalize(&m["$tuple"]),
        J::Object(m) if m.len() == 1 && m.contains_key("$set") => {
            let mut items: Vec<J> = m["$set"]
                .as_array()
                .expect("set items")
                .iter()
                .map(normalize)
                .collect();
            items.sort_by_key(J::to_string);
            json!({ "$set": items })
        }
        J::Object(m) => J::Object(m.iter().map(|(k, v)| (k.clone(), normalize(v))).collect()),
        J::Array(a) => J::Array(a.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

/// A stored value as tagged JSON.
pub(crate) fn value(v: &Value) -> J {
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::UInt(u) => J::from(*u),
        Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or_else(|| J::String(format!("{f:?}")), J::Number)
        }
        Value::Str(s) => J::String(s.to_string()),
        Value::Bytes(b) => json!({ "$bytes": hex::encode(b) }),
        Value::List(l) => J::Array(l.iter().map(value).collect()),
        Value::Map(m) if m.iter().all(|(k, _)| k.as_str().is_some()) => J::Object(
            m.iter()
                .map(|(k, v)| (k.as_str().unwrap_or_default().to_owned(), value(v)))
                .collect(),
        ),
        Value::Map(m) => {
            json!({ "$map": m.iter().map(|(k, v)| json!([value(k), value(v)])).collect::<Vec<_>>() })
        }
        Value::Ext(_) => ext(v),
    }
}

/// An extension value: the well-known Python objects by tag, others by class and fields.
fn ext(v: &Value) -> J {
    if let Some(items) = v.as_set() {
        return json!({ "$set": items.iter().map(value).collect::<Vec<_>>() });
    }
    if let Some(u) = v.as_uuid() {
        return json!({ "$uuid": u.hyphenated().to_string() });
    }
    if let Some(iso) = v.as_datetime_iso() {
        return json!({ "$datetime": iso });
    }
    if let Some((y, m, d)) = v.as_date() {
        return json!({ "$date": format!("{y:04}-{m:02}-{d:02}") });
    }
    if let Some((d, s, us)) = v.as_timedelta() {
        return json!({ "$timedelta": [d, s, us] });
    }
    if let Some((node, arg)) = v.as_send() {
        return json!({ "$type": "langgraph.types.Send", "node": node, "arg": value(arg) });
    }
    match v.as_object() {
        Some(o) => {
            let mut m = serde_json::Map::new();
            m.insert("$type".into(), J::from(format!("{}.{}", o.module, o.class)));
            match value(&o.data) {
                J::Object(fields) => m.extend(fields),
                other => {
                    m.insert("$data".into(), other);
                }
            }
            J::Object(m)
        }
        None => json!({ "$ext": format!("{v:?}") }),
    }
}

/// The three keys of a listed config.
fn config3(c: &CheckpointConfig) -> J {
    json!({ "configurable": {
        "thread_id": c.thread_id,
        "checkpoint_ns": c.ns(),
        "checkpoint_id": c.checkpoint_id,
    }})
}

/// A checkpoint tuple as `render_tuple` renders Python's.
pub(crate) fn tuple(t: &CheckpointTuple) -> J {
    let writes: Vec<J> = t
        .pending_writes
        .iter()
        .map(|w| json!([w.task_id, w.channel, value(&w.value)]))
        .collect();
    normalize(&json!({
        "config": config3(&t.config),
        "parent_config": t.parent_config.as_ref().map(config3),
        "checkpoint": value(&t.checkpoint.to_value(true)),
        "metadata": value(&t.metadata.to_value()),
        "pending_writes": writes,
    }))
}

/// A snapshot's config as `render_config` renders Python's.
fn config(c: &CheckpointConfig) -> J {
    let mut conf = serde_json::Map::new();
    conf.insert("thread_id".into(), J::from(c.thread_id.clone()));
    conf.insert("checkpoint_ns".into(), J::from(c.ns()));
    if let Some(id) = &c.checkpoint_id {
        conf.insert("checkpoint_id".into(), J::from(id.clone()));
    }
    for (k, v) in &c.configurable {
        conf.insert(k.clone(), value(v));
    }
    json!({ "configurable": conf })
}

/// A snapshot as `render_snapshot` renders Python's.
pub(crate) fn snapshot(s: &StateSnapshot) -> J {
    let values = value(&Value::Map(
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
                    PathPart::Str(x) => J::from(x.clone()),
                    PathPart::Int(n) => J::from(*n),
                    PathPart::Bool(b) => J::from(*b),
                    PathPart::Path(inner) => J::from(inner.to_path_string()),
                })
                .collect();
            json!({
                "id": t.id,
                "name": t.name,
                "path": path,
                "error": t.error.as_ref().map(value),
                "interrupts": t.interrupts.iter().map(|i| value(&i.to_value())).collect::<Vec<_>>(),
                "state": match &t.state {
                    None => J::Null,
                    Some(TaskState::Config(c)) => config(c),
                    Some(TaskState::Snapshot(_)) => J::from("$snapshot: not in a history"),
                },
                "result": t.result.as_ref().map(value),
            })
        })
        .collect();
    json!({
        "values": values,
        "next": s.next,
        "config": s.config.as_ref().map(config),
        "metadata": s.metadata.as_ref().map(|m| value(&m.to_value())),
        "created_at": s.created_at,
        "parent_config": s.parent_config.as_ref().map(config),
        "tasks": tasks,
        "interrupts": s.interrupts.iter().map(|i| value(&i.to_value())).collect::<Vec<_>>(),
    })
}
