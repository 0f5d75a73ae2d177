//! A run request's body as a [`RunConfig`] and stream modes.

use serde_json::Value as Json;
use stategraph::{Durability, RunConfig, StreamMode};

use crate::error::{Result, ServerError};
use crate::json::to_value;

/// The stream modes a run body asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamModes {
    /// The modes whose events the graph streams as they are: each as the API names it
    /// (the SSE event name) and the graph's mode (`messages-tuple` arrives as `messages`).
    pub plain: Vec<(String, StreamMode)>,
    /// `messages` (without `messages-tuple`): the server's `messages/metadata`,
    /// `messages/partial` and `messages/complete` events (see `message_log`).
    pub messages: bool,
    /// `events`: the run as `astream_events` reports it (see `run_events`).
    pub events: bool,
}

/// The stream modes a run body asks for (`stream_mode`: a name or a list). Defaults to
/// `values`. As LangGraph's server does, `messages` and `messages-tuple` together stream
/// the tuples only.
pub fn stream_modes(body: &Json) -> Result<StreamModes> {
    let names: Vec<String> = match body.get("stream_mode") {
        None | Some(Json::Null) => vec!["values".into()],
        Some(Json::String(s)) => vec![s.clone()],
        Some(Json::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ServerError::Invalid("stream_mode takes strings".into()))
            })
            .collect::<Result<_>>()?,
        Some(_) => {
            return Err(ServerError::Invalid(
                "stream_mode must be a string or a list".into(),
            ))
        }
    };
    let tuples = names.iter().any(|n| n == "messages-tuple");
    let mut modes = StreamModes::default();
    for name in names {
        let mode = match name.as_str() {
            "values" => StreamMode::Values,
            "updates" => StreamMode::Updates,
            "custom" => StreamMode::Custom,
            "messages-tuple" => StreamMode::Messages,
            "messages" if tuples => continue,
            "messages" => {
                modes.messages = true;
                continue;
            }
            "events" => {
                modes.events = true;
                continue;
            }
            "debug" => StreamMode::Debug,
            "tasks" => StreamMode::Tasks,
            "checkpoints" => StreamMode::Checkpoints,
            other => {
                return Err(ServerError::Invalid(format!(
                    "unsupported stream_mode {other:?}"
                )))
            }
        };
        // The SDK's `messages-tuple` arrives as `messages` events.
        let event = if name == "messages-tuple" {
            "messages".into()
        } else {
            name
        };
        if !modes.plain.iter().any(|(e, _)| *e == event) {
            modes.plain.push((event, mode));
        }
    }
    Ok(modes)
}

fn node_list(body: &Json, key: &str) -> Result<Option<Vec<String>>> {
    match body.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) if s == "*" => Ok(Some(vec!["*".into()])),
        Some(Json::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ServerError::Invalid(format!("{key} takes node names")))
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(_) => Err(ServerError::Invalid(format!(
            "{key} must be \"*\" or a list of node names"
        ))),
    }
}

/// The run's config on `thread_id`: `config.configurable` keys, `config.recursion_limit`,
/// `checkpoint_id` (or `checkpoint.checkpoint_id`), `durability`, `interrupt_before` /
/// `interrupt_after`.
pub fn run_config(thread_id: &str, body: &Json) -> Result<RunConfig> {
    let mut cfg = RunConfig::thread(thread_id);
    if let Some(config) = body.get("config").filter(|c| !c.is_null()) {
        let obj = config
            .as_object()
            .ok_or_else(|| ServerError::Invalid("config must be an object".into()))?;
        if let Some(limit) = obj.get("recursion_limit").filter(|l| !l.is_null()) {
            let limit = limit.as_u64().filter(|l| *l >= 1).ok_or_else(|| {
                ServerError::Invalid("recursion_limit must be a positive integer".into())
            })?;
            cfg = cfg.recursion_limit(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        if let Some(Json::Object(c)) = obj.get("configurable") {
            for (k, v) in c {
                match k.as_str() {
                    "thread_id" | "checkpoint_ns" => {}
                    "checkpoint_id" => {
                        if let Some(id) = v.as_str() {
                            cfg = cfg.at_checkpoint(id);
                        }
                    }
                    _ => cfg = cfg.with_configurable(k.as_str(), to_value(v)),
                }
            }
        }
    }
    let checkpoint_id = body
        .get("checkpoint_id")
        .and_then(Json::as_str)
        .or_else(|| {
            body.pointer("/checkpoint/checkpoint_id")
                .and_then(Json::as_str)
        });
    if let Some(id) = checkpoint_id {
        cfg = cfg.at_checkpoint(id);
    }
    match body.get("durability") {
        None | Some(Json::Null) => {}
        Some(Json::String(d)) if d == "sync" => cfg = cfg.durability(Durability::Sync),
        Some(Json::String(d)) if d == "async" => cfg = cfg.durability(Durability::Async),
        Some(Json::String(d)) if d == "exit" => cfg = cfg.durability(Durability::Exit),
        Some(other) => {
            return Err(ServerError::Invalid(format!(
                "durability must be \"sync\", \"async\" or \"exit\", not {other}"
            )))
        }
    }
    if let Some(nodes) = node_list(body, "interrupt_before")? {
        cfg = cfg.interrupt_before(nodes);
    }
    if let Some(nodes) = node_list(body, "interrupt_after")? {
        cfg = cfg.interrupt_after(nodes);
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn modes_default_to_values_and_map_messages_tuple() {
        let m = stream_modes(&json!({})).expect("modes");
        assert_eq!(m.plain, vec![("values".to_string(), StreamMode::Values)]);
        let m =
            stream_modes(&json!({"stream_mode": ["updates", "messages-tuple"]})).expect("modes");
        assert_eq!(m.plain[1], ("messages".to_string(), StreamMode::Messages));
        assert!(!m.messages && !m.events);
        assert!(stream_modes(&json!({"stream_mode": ["nope"]})).is_err());
        assert!(stream_modes(&json!({"stream_mode": 3})).is_err());
    }

    #[test]
    fn messages_and_events_are_built_by_the_server() {
        let m = stream_modes(&json!({"stream_mode": ["messages", "events"]})).expect("modes");
        assert!(m.plain.is_empty());
        assert!(m.messages && m.events);
        // Both messages forms asked: the tuples win, as on LangGraph's server.
        let m =
            stream_modes(&json!({"stream_mode": ["messages", "messages-tuple"]})).expect("modes");
        assert_eq!(
            m.plain,
            vec![("messages".to_string(), StreamMode::Messages)]
        );
        assert!(!m.messages);
    }

    #[test]
    fn config_reads_interrupts_and_checkpoint() {
        let body = json!({
            "interrupt_before": ["a"],
            "interrupt_after": "*",
            "checkpoint_id": "c1",
            "durability": "sync",
            "config": {"recursion_limit": 5, "configurable": {"user": "u"}},
        });
        let cfg = run_config("t", &body).expect("config");
        assert_eq!(cfg.thread_id.as_deref(), Some("t"));
        assert_eq!(cfg.checkpoint_id.as_deref(), Some("c1"));
        assert_eq!(cfg.interrupt_before, Some(vec!["a".to_string()]));
        assert_eq!(cfg.interrupt_after, Some(vec!["*".to_string()]));
        assert_eq!(cfg.recursion_limit, 5);
        assert_eq!(cfg.durability, Durability::Sync);
        assert!(run_config("t", &json!({"durability": "never"})).is_err());
        assert!(run_config("t", &json!({"interrupt_before": 3})).is_err());
    }
}
