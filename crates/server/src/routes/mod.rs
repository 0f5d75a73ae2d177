//! The HTTP API: paths, bodies and answers as the `langgraph-sdk` client uses them.

mod assistants;
mod extract;
mod runs;
mod store;
mod system;
mod threads;

use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;

use crate::app::AppState;
use crate::error::ServerError;

/// The API's router over the shared state.
pub(crate) fn router(state: Arc<AppState>) -> Router {
    let cors = state.cors.layer();
    Router::new()
        .route("/ok", get(system::ok))
        .route("/info", get(system::info))
        .route("/assistants/search", post(assistants::search))
        .route("/assistants/{assistant_id}", get(assistants::get_one))
        .route("/assistants/{assistant_id}/graph", get(assistants::graph))
        .route("/threads", post(threads::create))
        .route("/threads/search", post(threads::search))
        .route(
            "/threads/{thread_id}",
            get(threads::get_one)
                .delete(threads::delete)
                .patch(threads::patch),
        )
        .route("/threads/{thread_id}/copy", post(threads::copy))
        .route(
            "/threads/{thread_id}/state",
            get(threads::state).post(threads::update_state),
        )
        .route(
            "/threads/{thread_id}/state/checkpoint",
            post(threads::state_at_body),
        )
        .route(
            "/threads/{thread_id}/state/{checkpoint_id}",
            get(threads::state_at),
        )
        .route("/threads/{thread_id}/history", post(threads::history))
        .route(
            "/threads/{thread_id}/runs",
            post(runs::create).get(runs::list),
        )
        .route("/threads/{thread_id}/runs/wait", post(runs::wait))
        .route("/threads/{thread_id}/runs/stream", post(runs::stream))
        .route(
            "/threads/{thread_id}/runs/{run_id}",
            get(runs::get_one).delete(runs::delete),
        )
        .route("/threads/{thread_id}/runs/{run_id}/join", get(runs::join))
        .route(
            "/threads/{thread_id}/runs/{run_id}/stream",
            get(runs::join_stream),
        )
        .route(
            "/threads/{thread_id}/runs/{run_id}/cancel",
            post(runs::cancel),
        )
        .route(
            "/store/items",
            get(store::get).put(store::put).delete(store::delete),
        )
        .route("/store/items/search", post(store::search))
        .route("/store/namespaces", post(store::namespaces))
        .route("/runs", post(runs::create_stateless))
        .route("/runs/wait", post(runs::wait_stateless))
        .route("/runs/stream", post(runs::stream_stateless))
        .fallback(not_found)
        .layer(axum::middleware::map_response(json_errors))
        // Outside the error shaping: a preflight is answered before any route, and every
        // answer (errors too) carries the CORS headers a page needs to read it.
        .layer(cors)
        .layer(axum::middleware::from_fn(crate::cors::log_request))
        .with_state(state)
}

/// Gives the errors axum answers by itself (a body over the 2 MB limit, a wrong method)
/// the server's `{"detail": ...}` shape.
async fn json_errors(response: axum::response::Response) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !status.is_client_error() || is_json {
        return response;
    }
    let detail = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "request body too large".to_owned(),
        other => other.canonical_reason().unwrap_or("error").to_owned(),
    };
    (status, axum::Json(serde_json::json!({ "detail": detail }))).into_response()
}

async fn not_found() -> ServerError {
    ServerError::NotFound("Not Found".into())
}
