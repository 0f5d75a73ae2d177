//! The long-term store: put, get, delete, search items; list namespaces (LangGraph's
//! `/store/...` endpoints), on the Postgres store in the server's database.

use axum::body::Bytes;
use axum::extract::Query;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use stategraph_store::{BaseStore, IndexSpec, ListNamespacesOp, Namespace, PutOp, SearchOp};

use super::extract::{body_json, page, St};
use crate::error::{Result, ServerError};

/// A namespace given as a list of strings.
fn namespace(body: &Value, key: &str) -> Result<Namespace> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(Namespace(Vec::new())),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ServerError::Invalid(format!("{key} takes strings")))
            })
            .collect::<Result<Vec<_>>>()
            .map(Namespace),
        Some(_) => Err(ServerError::Invalid(format!(
            "{key} must be a list of strings"
        ))),
    }
}

fn key_of(body: &Value) -> Result<String> {
    body.get("key")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| ServerError::Invalid("key is required".into()))
}

pub(super) async fn put(axum::extract::State(state): St, body: Bytes) -> Result<StatusCode> {
    let body = body_json(&body)?;
    let value = match body.get("value") {
        Some(Value::Object(m)) => m.clone(),
        _ => return Err(ServerError::Invalid("value must be an object".into())),
    };
    let index = match body.get("index") {
        None | Some(Value::Null) => IndexSpec::Default,
        Some(Value::Bool(false)) => IndexSpec::Disabled,
        Some(Value::Array(paths)) => IndexSpec::Paths(
            paths
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        ),
        Some(_) => {
            return Err(ServerError::Invalid(
                "index must be false or a list of paths".into(),
            ))
        }
    };
    let ttl = body.get("ttl").and_then(Value::as_f64);
    state
        .store
        .put_op(PutOp {
            namespace: namespace(&body, "namespace")?,
            key: key_of(&body)?,
            value: Some(value),
            index,
            ttl,
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `?namespace=a.b&key=k` of `GET /store/items`.
#[derive(Deserialize)]
pub(super) struct GetQuery {
    namespace: Option<String>,
    key: String,
}

pub(super) async fn get(
    axum::extract::State(state): St,
    Query(q): Query<GetQuery>,
) -> Result<Json<Value>> {
    let ns = q
        .namespace
        .filter(|n| !n.is_empty())
        .map(|n| n.split('.').map(str::to_owned).collect())
        .unwrap_or_default();
    let item = state.store.get(Namespace(ns), &q.key).await?;
    Ok(Json(item.map_or(Value::Null, |i| i.to_json())))
}

pub(super) async fn delete(axum::extract::State(state): St, body: Bytes) -> Result<StatusCode> {
    let body = body_json(&body)?;
    state
        .store
        .delete(namespace(&body, "namespace")?, &key_of(&body)?)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(super) async fn search(axum::extract::State(state): St, body: Bytes) -> Result<Json<Value>> {
    let body = body_json(&body)?;
    let (limit, offset) = page(&body, 10)?;
    let mut op = SearchOp::new(namespace(&body, "namespace_prefix")?)
        .limit(usize::try_from(limit).unwrap_or(usize::MAX))
        .offset(usize::try_from(offset).unwrap_or(usize::MAX));
    if let Some(f) = body.get("filter").filter(|f| !f.is_null()) {
        op = op.filter(f.clone());
    }
    if let Some(q) = body.get("query").and_then(Value::as_str) {
        op = op.query(q);
    }
    let items = state.store.search(op).await?;
    Ok(Json(
        json!({ "items": items.iter().map(|i| i.to_json()).collect::<Vec<_>>() }),
    ))
}

pub(super) async fn namespaces(
    axum::extract::State(state): St,
    body: Bytes,
) -> Result<Json<Value>> {
    let body = body_json(&body)?;
    let (limit, offset) = page(&body, 100)?;
    let mut op = ListNamespacesOp::default()
        .limit(usize::try_from(limit).unwrap_or(usize::MAX))
        .offset(usize::try_from(offset).unwrap_or(usize::MAX));
    if body.get("prefix").is_some_and(|p| !p.is_null()) {
        op = op.prefix(namespace(&body, "prefix")?);
    }
    if body.get("suffix").is_some_and(|p| !p.is_null()) {
        op = op.suffix(namespace(&body, "suffix")?);
    }
    if let Some(d) = body.get("max_depth").and_then(Value::as_u64) {
        op = op.max_depth(usize::try_from(d).unwrap_or(usize::MAX));
    }
    let found = state.store.list_namespaces(op).await?;
    Ok(Json(
        json!({ "namespaces": found.iter().map(|n| n.0.clone()).collect::<Vec<_>>() }),
    ))
}
