//! The `events` stream mode: a run as LangChain's `astream_events` (v2) reports it, the
//! shape LangGraph's server sends under the SSE event `events`.
//!
//! Each event is `{"event", "data", "name", "tags", "run_id", "metadata", "parent_ids"}`:
//! - the graph: `on_chain_start` (`data.input`: the run's input or command) and, when
//!   the run ends or pauses at an interrupt, `on_chain_end` (`data.output`: the state's
//!   values; no `data.input`, as on LangGraph's server). Its name is the graph id, its `run_id` the server's run id, and its
//!   `on_chain_stream` events are not sent (the real server turns them into the other
//!   modes' events);
//! - each node a task runs: `on_chain_start` (`data.input`: the task's input), then, when
//!   it finished without error or interrupt, `on_chain_stream` (`data.chunk`) and
//!   `on_chain_end` (`data.output`, `data.input`) with what the node wrote, tagged
//!   `graph:step:N` (after the run's tags), with the metadata `langgraph_step`,
//!   `langgraph_node`, `langgraph_triggers`, `langgraph_path`, `langgraph_checkpoint_ns`,
//!   and `parent_ids` `[graph run]`;
//! - each chat-model answer streamed as chunks (`NodeContext::send_message_chunk`):
//!   `on_chat_model_start`, an `on_chat_model_stream` per chunk (`data.chunk`: the
//!   `AIMessageChunk`), and, when its node finishes, `on_chat_model_end` (`data.output`:
//!   the chunks added up, as an `ai` message), with the metadata the `messages` mode
//!   gives the chunk and `parent_ids` `[graph run, node run]`.
//!
//! Metadata: the request's `metadata`, then `graph_id`, `assistant_id`, `run_attempt`,
//! `thread_id`, `run_id` and `ls_integration` (Python's server adds more of its own:
//! versions, host, plan).
//!
//! Approximated, as a Rust graph has no LangChain callbacks: the model's name is
//! `ChatModel` (Python gives its class name) and its events have no `data.input` (the
//! conversation the model was given); the runnables Python also reports (a node's
//! conditional-edge function, a `RunnableSequence` around the model, tools as
//! `on_tool_start` / `on_tool_end`, a model answer that was not streamed) are not
//! reported; a node's `langgraph_path` is `["__pregel_pull", node]` (a task made by
//! `Send` is reported that way too); only the root graph's nodes are reported, not those
//! of its subgraphs; run ids are fresh uuids (v4). A run taken over from a dead worker
//! starts its events again (the client may see a node's start twice).

use std::collections::HashMap;

use serde_json::{json, Map as JsonMap, Value as Json};
use uuid::Uuid;

use crate::message_log::{add_chunk, is_chunk, to_message};

/// The model name the events give a chat model.
const MODEL_NAME: &str = "ChatModel";

/// A node run that has started and not ended.
#[derive(Debug)]
struct NodeRun {
    run_id: String,
    name: String,
    input: Json,
    tags: Json,
    metadata: Json,
}

/// A chat-model answer being streamed.
#[derive(Debug)]
struct ModelRun {
    run_id: String,
    /// The task whose node asked the model.
    task: String,
    /// The chunks so far, added up.
    output: Json,
    metadata: Json,
}

/// The `events` of one run, built from the graph's `debug` and `messages` events.
#[derive(Debug)]
pub(crate) struct RunEvents {
    run_id: String,
    graph: String,
    /// The metadata every event of the run carries.
    base: JsonMap<String, Json>,
    /// The tags of the run's config (every event carries them).
    tags: Vec<Json>,
    nodes: HashMap<String, NodeRun>,
    /// By message id, in the order they started.
    models: Vec<(String, ModelRun)>,
}

impl RunEvents {
    /// The events of run `run_id` of graph `graph_id` on `thread_id`, attempt `attempt`,
    /// whose request body is `body` (its `config.tags` and `metadata` are the graph
    /// run's).
    pub(crate) fn new(
        run_id: &str,
        graph_id: &str,
        thread_id: &str,
        attempt: i32,
        body: &Json,
    ) -> RunEvents {
        let mut base = JsonMap::new();
        if let Some(Json::Object(m)) = body.get("metadata") {
            base.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        base.insert("graph_id".into(), json!(graph_id));
        base.insert(
            "assistant_id".into(),
            json!(crate::registry::assistant_id(graph_id).to_string()),
        );
        base.insert("run_attempt".into(), json!(attempt));
        base.insert("thread_id".into(), json!(thread_id));
        base.insert("run_id".into(), json!(run_id));
        base.insert("ls_integration".into(), json!("langgraph"));
        let tags = body
            .pointer("/config/tags")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        RunEvents {
            run_id: run_id.to_owned(),
            graph: graph_id.to_owned(),
            base,
            tags,
            nodes: HashMap::new(),
            models: Vec::new(),
        }
    }

    /// The graph's `on_chain_start`, for a run with `input` (or a command).
    pub(crate) fn start(&self, input: &Json) -> Json {
        self.event(
            "on_chain_start",
            json!({ "input": input }),
            (self.graph.as_str(), self.run_id.as_str()),
            Json::Array(self.tags.clone()),
            Json::Object(self.base.clone()),
            &[],
        )
    }

    /// The graph's `on_chain_end` with the state's `values` (after the models and nodes
    /// still open, which a failure left so, are dropped).
    pub(crate) fn end(&mut self, values: &Json) -> Json {
        self.nodes.clear();
        self.models.clear();
        self.event(
            "on_chain_end",
            json!({ "output": values }),
            (self.graph.as_str(), self.run_id.as_str()),
            Json::Array(self.tags.clone()),
            Json::Object(self.base.clone()),
            &[],
        )
    }

    /// The events for one `debug` event of the root graph (in its JSON form): a task's
    /// start or result.
    pub(crate) fn debug(&mut self, debug: &Json) -> Vec<Json> {
        let step = debug.get("step").cloned().unwrap_or(Json::Null);
        let payload = debug.get("payload").unwrap_or(&Json::Null);
        let Some(id) = payload.get("id").and_then(Json::as_str) else {
            return Vec::new();
        };
        let name = payload
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or_default();
        match debug.get("type").and_then(Json::as_str) {
            Some("task") => {
                let mut metadata = self.base.clone();
                metadata.insert("langgraph_step".into(), step.clone());
                metadata.insert("langgraph_node".into(), json!(name));
                metadata.insert(
                    "langgraph_triggers".into(),
                    payload.get("triggers").cloned().unwrap_or(json!([])),
                );
                metadata.insert("langgraph_path".into(), json!(["__pregel_pull", name]));
                metadata.insert(
                    "langgraph_checkpoint_ns".into(),
                    json!(format!("{name}:{id}")),
                );
                // The run's tags, then the step's (LangChain puts inherited tags first).
                let mut tags = self.tags.clone();
                tags.push(json!(format!("graph:step:{step}")));
                let node = NodeRun {
                    run_id: Uuid::new_v4().to_string(),
                    name: name.to_owned(),
                    input: payload.get("input").cloned().unwrap_or(Json::Null),
                    tags: Json::Array(tags),
                    metadata: Json::Object(metadata),
                };
                let start = self.event(
                    "on_chain_start",
                    json!({ "input": node.input }),
                    (node.name.as_str(), node.run_id.as_str()),
                    node.tags.clone(),
                    node.metadata.clone(),
                    &[self.run_id.as_str()],
                );
                self.nodes.insert(id.to_owned(), node);
                vec![start]
            }
            Some("task_result") => {
                let mut out = self.models_of(id);
                let Some(node) = self.nodes.remove(id) else {
                    return out;
                };
                let failed = !payload.get("error").unwrap_or(&Json::Null).is_null()
                    || payload
                        .get("interrupts")
                        .and_then(Json::as_array)
                        .is_some_and(|i| !i.is_empty());
                if failed {
                    // Python reports neither: the node raised (an error or an interrupt).
                    return out;
                }
                let result = payload.get("result").cloned().unwrap_or(Json::Null);
                let who = (node.name.as_str(), node.run_id.as_str());
                out.push(self.event(
                    "on_chain_stream",
                    json!({ "chunk": result }),
                    who,
                    node.tags.clone(),
                    node.metadata.clone(),
                    &[self.run_id.as_str()],
                ));
                out.push(self.event(
                    "on_chain_end",
                    json!({ "output": result, "input": node.input }),
                    who,
                    node.tags.clone(),
                    node.metadata.clone(),
                    &[self.run_id.as_str()],
                ));
                out
            }
            _ => Vec::new(),
        }
    }

    /// The events for one `messages` pair (`[message, metadata]`, in JSON): a chunk is
    /// an `on_chat_model_stream` (after `on_chat_model_start` for its first); a whole
    /// message is not reported.
    pub(crate) fn message(&mut self, pair: &Json) -> Vec<Json> {
        let (Some(chunk), Some(meta)) = (pair.get(0), pair.get(1)) else {
            return Vec::new();
        };
        if !is_chunk(chunk) {
            return Vec::new();
        }
        let Some(id) = chunk.get("id").and_then(Json::as_str) else {
            return Vec::new();
        };
        let task = meta
            .get("langgraph_checkpoint_ns")
            .and_then(Json::as_str)
            .and_then(|ns| ns.rsplit('|').next())
            .and_then(|ns| ns.split_once(':'))
            .map(|(_, task)| task.to_owned())
            .unwrap_or_default();
        let node_run = self.nodes.get(&task).map(|n| n.run_id.clone());
        let parents: Vec<String> = std::iter::once(self.run_id.clone())
            .chain(node_run)
            .collect();
        let parents: Vec<&str> = parents.iter().map(String::as_str).collect();
        let mut out = Vec::with_capacity(2);
        let known = self.models.iter().position(|(m, _)| m == id);
        let index = match known {
            Some(i) => i,
            None => {
                let model = ModelRun {
                    run_id: Uuid::new_v4().to_string(),
                    task,
                    output: Json::Null,
                    metadata: meta.clone(),
                };
                out.push(self.event(
                    "on_chat_model_start",
                    json!({}),
                    (MODEL_NAME, model.run_id.as_str()),
                    Json::Array(self.tags.clone()),
                    model.metadata.clone(),
                    &parents,
                ));
                self.models.push((id.to_owned(), model));
                self.models.len() - 1
            }
        };
        let Some((_, model)) = self.models.get_mut(index) else {
            return out;
        };
        if model.output.is_null() {
            model.output = chunk.clone();
        } else {
            add_chunk(&mut model.output, chunk);
        }
        let (run_id, metadata) = (model.run_id.clone(), model.metadata.clone());
        out.push(self.event(
            "on_chat_model_stream",
            json!({ "chunk": chunk }),
            (MODEL_NAME, run_id.as_str()),
            Json::Array(self.tags.clone()),
            metadata,
            &parents,
        ));
        out
    }

    /// The `on_chat_model_end` of the models task `task` asked, which are done.
    fn models_of(&mut self, task: &str) -> Vec<Json> {
        let node_run = self.nodes.get(task).map(|n| n.run_id.clone());
        let (done, open): (Vec<_>, Vec<_>) = std::mem::take(&mut self.models)
            .into_iter()
            .partition(|(_, m)| m.task == task);
        self.models = open;
        done.into_iter()
            .map(|(_, m)| {
                let mut parents = vec![self.run_id.as_str()];
                if let Some(node) = &node_run {
                    parents.push(node.as_str());
                }
                self.event(
                    "on_chat_model_end",
                    json!({ "output": to_message(&m.output) }),
                    (MODEL_NAME, m.run_id.as_str()),
                    Json::Array(self.tags.clone()),
                    m.metadata,
                    &parents,
                )
            })
            .collect()
    }

    /// One event in `astream_events` v2's shape; `who` is `(name, run_id)`.
    fn event(
        &self,
        kind: &str,
        data: Json,
        who: (&str, &str),
        tags: Json,
        metadata: Json,
        parents: &[&str],
    ) -> Json {
        json!({
            "event": kind,
            "data": data,
            "name": who.0,
            "tags": tags,
            "run_id": who.1,
            "metadata": metadata,
            "parent_ids": parents,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events() -> RunEvents {
        let body = json!({"config": {"tags": ["t"]}, "metadata": {"owner": "me"}});
        RunEvents::new("r1", "agent", "th1", 1, &body)
    }

    #[test]
    fn a_node_reports_start_stream_and_end_under_the_graph() {
        let mut ev = events();
        let start = ev.start(&json!({"messages": []}));
        assert_eq!(start["event"], "on_chain_start");
        assert_eq!(start["name"], "agent");
        assert_eq!(start["run_id"], "r1");
        assert_eq!(start["tags"], json!(["t"]));
        assert_eq!(start["metadata"]["owner"], "me");
        assert_eq!(start["parent_ids"], json!([]));
        let task = json!({"step": 1, "type": "task",
            "payload": {"id": "k1", "name": "n", "input": {"x": 1}, "triggers": ["branch:to:n"]}});
        let s = ev.debug(&task);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0]["name"], "n");
        assert_eq!(s[0]["tags"], json!(["t", "graph:step:1"]));
        assert_eq!(s[0]["metadata"]["langgraph_node"], "n");
        assert_eq!(s[0]["metadata"]["langgraph_step"], 1);
        assert_eq!(s[0]["metadata"]["langgraph_checkpoint_ns"], "n:k1");
        assert_eq!(s[0]["parent_ids"], json!(["r1"]));
        let result = json!({"step": 1, "type": "task_result",
            "payload": {"id": "k1", "name": "n", "error": null, "result": {"x": 2}, "interrupts": []}});
        let r = ev.debug(&result);
        let kinds: Vec<&str> = r.iter().filter_map(|e| e["event"].as_str()).collect();
        assert_eq!(kinds, ["on_chain_stream", "on_chain_end"]);
        assert_eq!(r[0]["data"]["chunk"], json!({"x": 2}));
        assert_eq!(r[1]["data"]["input"], json!({"x": 1}));
        assert_eq!(r[1]["run_id"], s[0]["run_id"]);
        let end = ev.end(&json!({"x": 2}));
        assert_eq!(end["event"], "on_chain_end");
        assert_eq!(end["data"]["output"], json!({"x": 2}));
        assert!(end["data"].get("input").is_none());
    }

    #[test]
    fn model_chunks_stream_under_their_node_and_end_with_it() {
        let mut ev = events();
        ev.start(&Json::Null);
        let task = json!({"step": 2, "type": "task",
            "payload": {"id": "k2", "name": "agent", "input": {}, "triggers": []}});
        let node = ev.debug(&task).remove(0);
        let meta = json!({"langgraph_checkpoint_ns": "agent:k2", "langgraph_node": "agent"});
        let c1 = json!({"type": "AIMessageChunk", "id": "m", "content": "The"});
        let c2 = json!({"type": "AIMessageChunk", "id": "m", "content": " sum"});
        let a = ev.message(&json!([c1, meta]));
        let kinds: Vec<&str> = a.iter().filter_map(|e| e["event"].as_str()).collect();
        assert_eq!(kinds, ["on_chat_model_start", "on_chat_model_stream"]);
        assert_eq!(a[1]["parent_ids"], json!(["r1", node["run_id"]]));
        assert_eq!(a[1]["data"]["chunk"]["content"], "The");
        let b = ev.message(&json!([c2, meta]));
        assert_eq!(b.len(), 1);
        assert_eq!(b[0]["run_id"], a[0]["run_id"]);
        let whole = json!({"type": "tool", "id": "t", "content": "3"});
        assert!(ev.message(&json!([whole, meta])).is_empty());
        let result = json!({"step": 2, "type": "task_result",
            "payload": {"id": "k2", "name": "agent", "error": null, "result": {}, "interrupts": []}});
        let r = ev.debug(&result);
        let kinds: Vec<&str> = r.iter().filter_map(|e| e["event"].as_str()).collect();
        assert_eq!(
            kinds,
            ["on_chat_model_end", "on_chain_stream", "on_chain_end"]
        );
        assert_eq!(r[0]["data"]["output"]["content"], "The sum");
        assert_eq!(r[0]["data"]["output"]["type"], "ai");
    }

    #[test]
    fn an_interrupted_node_does_not_end() {
        let mut ev = events();
        let task = json!({"step": 1, "type": "task",
            "payload": {"id": "k", "name": "ask", "input": {}, "triggers": []}});
        ev.debug(&task);
        let result = json!({"step": 1, "type": "task_result",
            "payload": {"id": "k", "name": "ask", "error": null, "result": {},
                        "interrupts": [{"value": "q", "id": "i"}]}});
        assert!(ev.debug(&result).is_empty());
        assert!(ev
            .debug(&json!({"type": "checkpoint", "payload": {}}))
            .is_empty());
    }
}
