//! JSON in and out: request bodies to stored values, snapshots to the shapes the SDK reads.

use indexmap::IndexMap;
use serde_json::{json, Map as JsonMap, Value as Json};
use stategraph::pregel::snapshot::StateSnapshot;
use stategraph::Interrupt;
use stategraph_checkpoint::{CheckpointConfig, Map, Value};

/// A JSON value as a stored value: objects become maps with string keys, numbers become
/// integers when they are integral, floats otherwise.
pub fn to_value(json: &Json) -> Value {
    match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(u)) => Value::UInt(u),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::from(items.iter().map(to_value).collect::<Vec<_>>()),
        Json::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, v) in m {
                out.insert(k.as_str(), to_value(v));
            }
            Value::Map(out)
        }
    }
}

/// A stored value as LangGraph's server sends it: Python objects as their data (a
/// message or any pydantic model as its fields, which carry `type`; a UUID or datetime as
/// its text; a set as a list), everything else in the JSON form of [`Value::to_json`].
pub fn api_json(value: &Value) -> Json {
    unwrap_objects(value.to_json())
}

/// Replaces each `{"$py": class, "value": data}` with its data, at any depth.
fn unwrap_objects(json: Json) -> Json {
    match json {
        Json::Object(mut m) if m.len() == 2 && m.contains_key("$py") && m.contains_key("value") => {
            unwrap_objects(m.remove("value").unwrap_or(Json::Null))
        }
        Json::Object(m) => {
            Json::Object(m.into_iter().map(|(k, v)| (k, unwrap_objects(v))).collect())
        }
        Json::Array(items) => Json::Array(items.into_iter().map(unwrap_objects).collect()),
        other => other,
    }
}

/// A JSON object as channel writes, in order; `None` when it is not an object.
pub fn to_writes(json: &Json) -> Option<IndexMap<String, Value>> {
    json.as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), to_value(v))).collect())
}

/// A values map as a JSON object.
pub fn values_json(values: &IndexMap<String, Value>) -> Json {
    Json::Object(
        values
            .iter()
            .map(|(k, v)| (k.clone(), api_json(v)))
            .collect::<JsonMap<_, _>>(),
    )
}

/// An interrupt as the server shows it: `{"value": ..., "id": ...}`.
pub fn interrupt_json(i: &Interrupt) -> Json {
    json!({ "value": api_json(&i.value), "id": i.id })
}

/// A checkpoint config as the server's `checkpoint` object.
pub fn checkpoint_json(cfg: &CheckpointConfig) -> Json {
    json!({
        "thread_id": cfg.thread_id,
        "checkpoint_ns": cfg.ns(),
        "checkpoint_id": cfg.checkpoint_id,
        "checkpoint_map": Json::Null,
    })
}

/// A snapshot as the SDK's `ThreadState`.
pub fn thread_state_json(s: &StateSnapshot) -> Json {
    let tasks: Vec<Json> = s
        .tasks
        .iter()
        .map(|t| {
            json!({
                "id": t.id,
                "name": t.name,
                "path": t.path.to_path_string(),
                "error": t.error.as_ref().map(api_json),
                "interrupts": t.interrupts.iter().map(interrupt_json).collect::<Vec<_>>(),
                "checkpoint": Json::Null,
                "state": Json::Null,
                "result": t.result.as_ref().map(api_json),
            })
        })
        .collect();
    json!({
        "values": values_json(&s.values),
        "next": s.next,
        "checkpoint": s.config.as_ref().map(checkpoint_json),
        "metadata": s.metadata.as_ref().map(|m| api_json(&m.to_value())),
        "created_at": s.created_at,
        "parent_checkpoint": s.parent_config.as_ref().map(checkpoint_json),
        "tasks": tasks,
        "interrupts": s.interrupts.iter().map(interrupt_json).collect::<Vec<_>>(),
    })
}

/// A run's result as `runs.wait` returns it: the final values, with the pending
/// interrupts under `__interrupt__` when the run paused.
pub fn run_output_json(s: &StateSnapshot) -> Json {
    let mut out = values_json(&s.values);
    if !s.interrupts.is_empty() {
        if let Json::Object(m) = &mut out {
            m.insert(
                "__interrupt__".into(),
                Json::Array(s.interrupts.iter().map(interrupt_json).collect()),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trips_through_values() {
        let j = json!({"a": 1, "b": [true, null, 2.5, "x"], "c": {"d": -3}});
        assert_eq!(to_value(&j).to_json(), j);
    }

    #[test]
    fn messages_are_sent_as_their_fields() {
        let m = stategraph::Message::human("hi").with_id("m1");
        let j = api_json(&Value::from(vec![m.to_value()]));
        assert_eq!(j[0]["type"], "human");
        assert_eq!(j[0]["content"], "hi");
        assert_eq!(j[0]["id"], "m1");
        assert!(j[0].get("$py").is_none());
    }

    #[test]
    fn writes_need_an_object() {
        assert!(to_writes(&json!([1])).is_none());
        let w = to_writes(&json!({"name": "a"})).expect("object");
        assert_eq!(w.get("name"), Some(&Value::from("a")));
    }
}
