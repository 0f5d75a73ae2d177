//! Threads: create, get, search, delete; state, state at a checkpoint, update_state, history.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};
use stategraph::checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions};
use stategraph::pregel::spec::GraphSpec;
use stategraph::{CompileOptions, CompiledGraph, DynState, RunConfig};
use uuid::Uuid;

use super::extract::{body_json, page, uuid_of, St};
use crate::app::AppState;
use crate::error::{Result, ServerError};
use crate::graph::ServedGraph;
use crate::json::{
    checkpoint_json, interrupt_json, thread_state_json, to_value, to_writes, values_json,
};
use crate::{db, registry};

pub(super) async fn create(axum::extract::State(state): St, body: Bytes) -> Result<Json<Value>> {
    let body = body_json(&body)?;
    let id = match body.get("thread_id").and_then(Value::as_str) {
        Some(id) => Uuid::parse_str(id)
            .map_err(|_| ServerError::Invalid(format!("thread_id {id} is not a UUID")))?,
        None => Uuid::new_v4(),
    };
    let metadata = match body.get("metadata") {
        None | Some(Value::Null) => json!({}),
        Some(m @ Value::Object(_)) => m.clone(),
        Some(_) => return Err(ServerError::Invalid("metadata must be an object".into())),
    };
    let do_nothing = match body.get("if_exists").and_then(Value::as_str) {
        None | Some("raise") => false,
        Some("do_nothing") => true,
        Some(other) => return Err(ServerError::Invalid(format!("unknown if_exists {other:?}"))),
    };
    Ok(Json(
        db::create_thread(&state.pool, id, &metadata, do_nothing).await?,
    ))
}

pub(super) async fn get_one(
    axum::extract::State(state): St,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    let id = uuid_of("thread", &id)?;
    Ok(Json(db::get_thread(&state.pool, id).await?))
}

pub(super) async fn search(axum::extract::State(state): St, body: Bytes) -> Result<Json<Value>> {
    let body = body_json(&body)?;
    let (limit, offset) = page(&body, 10)?;
    let metadata = match body.get("metadata") {
        None | Some(Value::Null) => json!({}),
        Some(m @ Value::Object(_)) => m.clone(),
        Some(_) => return Err(ServerError::Invalid("metadata must be an object".into())),
    };
    let status = body.get("status").and_then(Value::as_str);
    let found = db::search_threads(&state.pool, &metadata, status, limit, offset).await?;
    Ok(Json(Value::Array(found)))
}

pub(super) async fn patch(
    axum::extract::State(state): St,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let id = uuid_of("thread", &id)?;
    let body = body_json(&body)?;
    let metadata = match body.get("metadata") {
        None | Some(Value::Null) => json!({}),
        Some(m @ Value::Object(_)) => m.clone(),
        Some(_) => return Err(ServerError::Invalid("metadata must be an object".into())),
    };
    Ok(Json(db::patch_thread(&state.pool, id, &metadata).await?))
}

pub(super) async fn copy(
    axum::extract::State(state): St,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    let source = uuid_of("thread", &id)?;
    let target = Uuid::new_v4();
    let thread = db::copy_thread_row(&state.pool, source, target).await?;
    let saver = state.saver.as_ref();
    stategraph::checkpoint::CheckpointSaver::copy_thread(
        saver,
        &source.to_string(),
        &target.to_string(),
    )
    .await?;
    Ok(Json(thread))
}

pub(super) async fn delete(
    axum::extract::State(state): St,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    let id = uuid_of("thread", &id)?;
    if !db::delete_thread(&state.pool, id).await? {
        return Err(ServerError::NotFound(format!("thread {id} not found")));
    }
    stategraph::checkpoint::CheckpointSaver::delete_thread(state.saver.as_ref(), &id.to_string())
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The graph of a thread.
struct ThreadGraph {
    served: Arc<dyn ServedGraph>,
    /// False for a graph rebuilt from its description (see [`described`]).
    has_code: bool,
}

/// The thread (404 if unknown) and the graph that runs it: the one named in its metadata
/// (`graph_id`, set by its first run), else the only graph of this process, else none.
/// A named graph that this process does not have is rebuilt from the description its
/// worker process registered (see [`described`]).
async fn thread_graph(state: &AppState, id: &str) -> Result<(Uuid, Option<ThreadGraph>)> {
    let id = uuid_of("thread", id)?;
    let thread = db::get_thread(&state.pool, id).await?;
    let with_code = |g: &Arc<dyn ServedGraph>| ThreadGraph {
        served: g.clone(),
        has_code: true,
    };
    let graph = match thread.pointer("/metadata/graph_id").and_then(Value::as_str) {
        Some(g) => match state.graphs.get(g) {
            Some(local) => Some(with_code(local)),
            None => Some(ThreadGraph {
                served: described(state, g).await?,
                has_code: false,
            }),
        },
        None if state.graphs.len() == 1 => state.graphs.values().next().map(with_code),
        None => None,
    };
    Ok((id, graph))
}

/// Graph `graph_id` as its registered description rebuilds it: it reads the threads'
/// state with the engine's own functions, as the process with the code does, but cannot
/// run a node. A graph without a description (registered by an older version, or with a
/// reducer of its own) is [`ServerError::NotHere`].
async fn described(state: &AppState, graph_id: &str) -> Result<Arc<dyn ServedGraph>> {
    let not_here = |why: &str| {
        ServerError::NotHere(format!(
            "graph {graph_id} is not compiled into this process and {why}: read this \
             thread's state through a process that registers {graph_id}"
        ))
    };
    let registered = registry::find(&state.pool, graph_id)
        .await?
        .ok_or_else(|| not_here("no process registered it"))?;
    let topology = registered.topology.ok_or_else(|| {
        not_here(
            "its registration has no description of it (a graph with a reducer or channel \
             type of its own, or registered by an older version)",
        )
    })?;
    let spec: GraphSpec = serde_json::from_value(topology)
        .map_err(|e| not_here(&format!("its registered description is unreadable ({e})")))?;
    let saver: Arc<dyn CheckpointSaver> = state.saver.clone();
    let graph =
        CompiledGraph::<DynState>::from_spec(&spec, CompileOptions::new().checkpointer(saver))
            .map_err(|e| {
                not_here(&format!(
                    "its registered description cannot be rebuilt ({e})"
                ))
            })?;
    Ok(Arc::new(graph))
}

fn empty_state() -> Value {
    json!({
        "values": {}, "next": [], "checkpoint": null, "metadata": null, "created_at": null,
        "parent_checkpoint": null, "tasks": [], "interrupts": [],
    })
}

async fn state_of(
    state: &AppState,
    thread: &str,
    checkpoint_id: Option<&str>,
) -> Result<Json<Value>> {
    let (id, graph) = thread_graph(state, thread).await?;
    let Some(ThreadGraph { served: graph, .. }) = graph else {
        return Ok(Json(empty_state()));
    };
    let mut cfg = RunConfig::thread(id.to_string());
    if let Some(c) = checkpoint_id {
        cfg = cfg.at_checkpoint(c);
    }
    let snapshot = graph.state(cfg).await?;
    Ok(Json(thread_state_json(&snapshot)))
}

pub(super) async fn state(
    axum::extract::State(state): St,
    Path(thread): Path<String>,
) -> Result<Json<Value>> {
    state_of(&state, &thread, None).await
}

pub(super) async fn state_at(
    axum::extract::State(state): St,
    Path((thread, checkpoint)): Path<(String, String)>,
) -> Result<Json<Value>> {
    state_of(&state, &thread, Some(&checkpoint)).await
}

pub(super) async fn state_at_body(
    axum::extract::State(state): St,
    Path(thread): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let body = body_json(&body)?;
    let checkpoint = body
        .pointer("/checkpoint/checkpoint_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    state_of(&state, &thread, checkpoint.as_deref()).await
}

pub(super) async fn update_state(
    axum::extract::State(state): St,
    Path(thread): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let body = body_json(&body)?;
    let (id, graph) = thread_graph(&state, &thread).await?;
    let ThreadGraph {
        served: graph,
        has_code,
    } = graph
        .ok_or_else(|| ServerError::Invalid("the thread has no graph yet: run it first".into()))?;
    let values = match body.get("values") {
        None | Some(Value::Null) => Default::default(),
        Some(v) => to_writes(v).ok_or_else(|| {
            ServerError::Invalid("values must be an object of channel values".into())
        })?,
    };
    let as_node = match body.get("as_node") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(ServerError::Invalid("as_node must be a string".into())),
    };
    if !has_code {
        writers_are_data(graph.as_ref(), as_node.as_deref())?;
    }
    let mut cfg = RunConfig::thread(id.to_string());
    let checkpoint_id = body
        .get("checkpoint_id")
        .and_then(Value::as_str)
        .or_else(|| {
            body.pointer("/checkpoint/checkpoint_id")
                .and_then(Value::as_str)
        });
    if let Some(c) = checkpoint_id {
        cfg = cfg.at_checkpoint(c);
    }
    let saved: CheckpointConfig = graph.update(cfg, values, as_node).await?;
    // Keep the thread row's copy of the values current.
    let snapshot = graph.state(RunConfig::thread(id.to_string())).await?;
    let interrupts: serde_json::Map<String, Value> = snapshot
        .tasks
        .iter()
        .filter(|t| !t.interrupts.is_empty())
        .map(|t| {
            (
                t.id.clone(),
                Value::Array(t.interrupts.iter().map(interrupt_json).collect()),
            )
        })
        .collect();
    db::set_thread_state(
        &state.pool,
        id,
        None,
        &values_json(&snapshot.values),
        &Value::Object(interrupts),
    )
    .await?;
    Ok(Json(json!({ "checkpoint": checkpoint_json(&saved) })))
}

/// For a graph rebuilt from its description: [`ServerError::NotHere`] when node `as_node`
/// has conditional edges, whose code `update_state` would run. (Without `as_node` the
/// engine infers the node; one with conditional edges then fails naming it.)
fn writers_are_data(graph: &dyn ServedGraph, as_node: Option<&str>) -> Result<()> {
    let Some(name) = as_node else {
        return Ok(());
    };
    let spec = graph.spec();
    let node = spec
        .as_ref()
        .and_then(|s| s.nodes.iter().find(|n| n.name == name));
    match node {
        Some(n) if n.writes.is_none() => Err(ServerError::NotHere(format!(
            "update_state as {name} runs its conditional edges, code that is not compiled \
             into this process: update the thread through a process that registers its graph"
        ))),
        _ => Ok(()),
    }
}

pub(super) async fn history(
    axum::extract::State(state): St,
    Path(thread): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let body = body_json(&body)?;
    let (limit, _) = page(&body, 10)?;
    let (id, graph) = thread_graph(&state, &thread).await?;
    let Some(ThreadGraph { served: graph, .. }) = graph else {
        return Ok(Json(json!([])));
    };
    let mut options = ListOptions {
        limit: Some(usize::try_from(limit).unwrap_or(usize::MAX)),
        ..ListOptions::default()
    };
    let before = match body.get("before") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(b @ Value::Object(_)) => b
            .get("checkpoint_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    };
    if let Some(b) = before {
        options.before = Some(CheckpointConfig::thread(id.to_string()).with_checkpoint_id(b));
    }
    if let Some(Value::Object(m)) = body.get("metadata") {
        for (k, v) in m {
            options = options.filter(k.as_str(), to_value(v));
        }
    }
    let mut cfg = RunConfig::thread(id.to_string());
    if let Some(c) = body
        .pointer("/checkpoint/checkpoint_id")
        .and_then(Value::as_str)
    {
        cfg = cfg.at_checkpoint(c);
    }
    let snapshots = graph.history(cfg, options).await?;
    Ok(Json(Value::Array(
        snapshots.iter().map(thread_state_json).collect(),
    )))
}
