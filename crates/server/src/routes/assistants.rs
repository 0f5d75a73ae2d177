//! Assistants: one per registered graph, with the id LangGraph derives from the graph id.

use axum::body::Bytes;
use axum::extract::Path;
use axum::Json;
use serde_json::{json, Value};

use super::{body_json, page, St};
use crate::error::Result;
use crate::server::{assistant_id, AppState};

fn assistant_json(state: &AppState, graph_id: &str) -> Value {
    json!({
        "assistant_id": assistant_id(graph_id).to_string(),
        "graph_id": graph_id,
        "config": {},
        "context": {},
        "metadata": { "created_by": "system" },
        "name": graph_id,
        "description": null,
        "version": 1,
        "created_at": state.started_at,
        "updated_at": state.started_at,
    })
}

pub(super) async fn search(axum::extract::State(state): St, body: Bytes) -> Result<Json<Value>> {
    let body = body_json(&body)?;
    let (limit, offset) = page(&body, 10)?;
    let graph = body.get("graph_id").and_then(Value::as_str);
    let name = body.get("name").and_then(Value::as_str);
    let found: Vec<Value> = state
        .graphs
        .keys()
        .filter(|g| graph.is_none_or(|want| want == g.as_str()))
        .filter(|g| name.is_none_or(|want| g.contains(want)))
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(|g| assistant_json(&state, g))
        .collect();
    Ok(Json(Value::Array(found)))
}

pub(super) async fn get_one(
    axum::extract::State(state): St,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    let (graph_id, _, _) = state.assistant(&id)?;
    Ok(Json(assistant_json(&state, graph_id)))
}

pub(super) async fn graph(
    axum::extract::State(state): St,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    let (_, _, g) = state.assistant(&id)?;
    let drawing = g.drawing();
    let nodes: Vec<Value> = drawing
        .nodes
        .values()
        .map(|n| {
            json!({
                "id": n.id,
                "type": if n.id.starts_with("__") { "schema" } else { "runnable" },
                "data": { "id": ["stategraph", n.name], "name": n.name },
            })
        })
        .collect();
    let edges: Vec<Value> = drawing
        .edges
        .iter()
        .map(|e| {
            let mut edge = json!({ "source": e.source, "target": e.target });
            if e.conditional {
                edge["conditional"] = json!(true);
            }
            if let Some(d) = &e.data {
                edge["data"] = json!(d);
            }
            edge
        })
        .collect();
    Ok(Json(json!({ "nodes": nodes, "edges": edges })))
}
