//! What the handlers share: the state they are handed, and reading a body, a page and a
//! path id.

use std::sync::Arc;

use axum::body::Bytes;
use serde_json::Value as Json;
use uuid::Uuid;

use crate::app::AppState;
use crate::error::{Result, ServerError};

/// The shared state, as a handler's extractor.
pub(super) type St = axum::extract::State<Arc<AppState>>;

/// A JSON body (an empty body is `{}`); anything else is 422.
pub(super) fn body_json(body: &Bytes) -> Result<Json> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Json::Object(Default::default()));
    }
    let json: Json = serde_json::from_slice(body)
        .map_err(|e| ServerError::Invalid(format!("invalid JSON body: {e}")))?;
    if !json.is_object() {
        return Err(ServerError::Invalid(
            "the body must be a JSON object".into(),
        ));
    }
    Ok(json)
}

/// A path id that must be a UUID; anything else names nothing (404).
pub(super) fn uuid_of(what: &str, id: &str) -> Result<Uuid> {
    Uuid::parse_str(id).map_err(|_| ServerError::NotFound(format!("{what} {id} not found")))
}

/// `limit` / `offset` from a body or query, with defaults.
pub(super) fn page(body: &Json, default_limit: i64) -> Result<(i64, i64)> {
    let num = |key: &str, default: i64| -> Result<i64> {
        match body.get(key) {
            None | Some(Json::Null) => Ok(default),
            Some(v) => v.as_i64().filter(|n| *n >= 0).ok_or_else(|| {
                ServerError::Invalid(format!("{key} must be a non-negative integer"))
            }),
        }
    };
    Ok((num("limit", default_limit)?, num("offset", 0)?))
}
