//! Assistants: one per graph (compiled in, or registered in the database by a worker
//! process), with the id LangGraph derives from the graph id.

use axum::body::Bytes;
use axum::extract::Path;
use axum::Json;
use serde_json::{json, Value};

use super::extract::{body_json, page, St};
use crate::app::Assistant;
use crate::error::Result;

fn assistant_json(a: &Assistant) -> Value {
    json!({
        "assistant_id": a.assistant_id.to_string(),
        "graph_id": a.graph_id,
        "config": {},
        "context": {},
        "metadata": { "created_by": "system" },
        "name": a.graph_id,
        "description": null,
        "version": 1,
        "created_at": a.created_at,
        "updated_at": a.updated_at,
    })
}

pub(super) async fn search(axum::extract::State(state): St, body: Bytes) -> Result<Json<Value>> {
    let body = body_json(&body)?;
    let (limit, offset) = page(&body, 10)?;
    let graph = body.get("graph_id").and_then(Value::as_str);
    let name = body.get("name").and_then(Value::as_str);
    let found: Vec<Value> = state
        .assistants()
        .await?
        .iter()
        .filter(|a| graph.is_none_or(|want| want == a.graph_id))
        .filter(|a| name.is_none_or(|want| a.graph_id.contains(want)))
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(assistant_json)
        .collect();
    Ok(Json(Value::Array(found)))
}

pub(super) async fn get_one(
    axum::extract::State(state): St,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    Ok(Json(assistant_json(&state.assistant(&id).await?)))
}

pub(super) async fn graph(
    axum::extract::State(state): St,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    Ok(Json(state.drawing(&id).await?))
}
