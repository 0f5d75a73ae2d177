//! `/ok` and `/info`.

use axum::Json;
use serde_json::{json, Value};

pub(super) async fn ok() -> Json<Value> {
    Json(json!({ "ok": true }))
}

pub(super) async fn info() -> Json<Value> {
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "server": "stategraph-server",
        "flags": { "assistants": true, "crons": false, "langsmith": false },
        "metadata": {},
    }))
}
