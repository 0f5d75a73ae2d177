//! Runs: create (background), wait, stream (SSE), get, list, join, cancel, delete; and
//! the stateless forms on a thread of their own that is deleted afterwards.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast;
use uuid::Uuid;

use super::extract::{body_json, page, uuid_of, St};
use crate::app::AppState;
use crate::db::{self, NewRun};
use crate::error::{Result, ServerError};
use crate::graph_input::GraphInput;
use crate::hub::{HubEvent, RunEnd};
use crate::run_config::{run_config, stream_modes};

/// A queued run and the receiver of its events (subscribed before it was queued).
struct Created {
    /// The run as the SDK's `Run` when the caller asked for it, else null.
    run: Value,
    /// The body asked for a resumable stream (`stream_resumable`).
    resumable: bool,
    run_id: Uuid,
    thread_id: Uuid,
    events: broadcast::Receiver<Arc<HubEvent>>,
}

/// A run body, checked: what the run's row holds besides its ids.
struct RunRequest {
    body: Value,
    resumable: bool,
    graph_id: String,
    assistant_id: Uuid,
    strategy: &'static str,
    metadata: Value,
}

/// Checks a run body, then queues the run on `thread` (a new thread when `None`); with
/// `answer`, builds the run's JSON (the caller answers with it).
async fn create_run(
    state: &Arc<AppState>,
    thread: Option<&str>,
    body: Bytes,
    answer: bool,
) -> Result<Created> {
    let request = checked(state, &body).await?;
    let resumable = request.resumable;
    let (thread_id, stateless) = match thread {
        Some(t) => {
            let id = uuid_of("thread", t)?;
            if request.body.get("if_not_exists").and_then(Value::as_str) == Some("create") {
                db::create_thread(&state.pool, id, &json!({}), true).await?;
            }
            (id, false)
        }
        None => {
            let id = Uuid::new_v4();
            db::create_thread(&state.pool, id, &json!({}), false).await?;
            (id, true)
        }
    };
    let run_id = Uuid::new_v4();
    let events = state.hub.subscribe(run_id);
    let inserted = queue(state, request, (run_id, thread_id), stateless, answer).await?;
    let run = match inserted {
        Ok((ins, run)) => {
            for id in ins.stopped.pending {
                state.hub.finish(id, None);
            }
            for id in ins.stopped.running {
                state.hub.cancel(id);
            }
            if ins.announced {
                // One idle worker of this process looks (the other processes got the
                // NOTIFY).
                state.idle.announce();
            }
            run
        }
        Err(e) => {
            drop(events);
            state.hub.release(run_id);
            if stateless {
                db::delete_thread_row(&state.pool, thread_id).await?;
            }
            return Err(e);
        }
    };
    Ok(Created {
        run,
        resumable,
        run_id,
        thread_id,
        events,
    })
}

/// The body of a run, checked: everything the worker will read is checked now, so a bad
/// body is a 422 here.
async fn checked(state: &AppState, body: &Bytes) -> Result<RunRequest> {
    let body = body_json(body)?;
    let resumable = body.get("stream_resumable") == Some(&Value::Bool(true));
    let assistant = body
        .get("assistant_id")
        .and_then(Value::as_str)
        .ok_or_else(|| ServerError::Invalid("assistant_id is required".into()))?;
    let found = state.assistant(assistant).await?;
    GraphInput::from_body(body.get("input"), body.get("command"))?;
    run_config("t", &body)?;
    stream_modes(&body)?;
    let strategy = match body.get("multitask_strategy").and_then(Value::as_str) {
        None | Some("reject") => "reject",
        Some("enqueue") => "enqueue",
        Some("interrupt") => "interrupt",
        Some("rollback") => "rollback",
        Some(other) => {
            return Err(ServerError::Invalid(format!(
                "unknown multitask_strategy {other:?} (reject, enqueue, interrupt, rollback)"
            )))
        }
    };
    let metadata = match body.get("metadata") {
        None | Some(Value::Null) => json!({}),
        Some(m @ Value::Object(_)) => m.clone(),
        Some(_) => return Err(ServerError::Invalid("metadata must be an object".into())),
    };
    Ok(RunRequest {
        body,
        resumable,
        graph_id: found.graph_id,
        assistant_id: found.assistant_id,
        strategy,
        metadata,
    })
}

/// Inserts the run `(run_id, thread_id)`, claimed at once for an idle worker of this
/// process when it has one with the graph (and the thread is free). The outer error is a
/// failure of the task the insert ran on; the inner one the insert's own.
async fn queue(
    state: &Arc<AppState>,
    request: RunRequest,
    (run_id, thread_id): (Uuid, Uuid),
    stateless: bool,
    answer: bool,
) -> Result<Result<(db::Inserted, Value)>> {
    // An idle worker of this process, when it has the graph: the insert claims the run
    // for it if the thread is free.
    let reserved = state
        .graphs
        .contains_key(&request.graph_id)
        .then(|| state.idle.reserve())
        .flatten();
    let spawned = reserved.is_some();
    let insert = {
        let state = state.clone();
        async move {
            let new = NewRun {
                run_id,
                thread_id,
                assistant_id: request.assistant_id,
                graph_id: &request.graph_id,
                metadata: &request.metadata,
                kwargs: &request.body,
                multitask_strategy: request.strategy,
                stateless,
                process: &state.process,
                claim_for: reserved.as_ref().map(|r| (r.worker(), state.lease)),
            };
            let mut inserted = db::insert_run(&state.pool, &new).await.map(|ins| {
                let run = if answer {
                    ins.run_json(&new)
                } else {
                    Value::Null
                };
                (ins, run)
            });
            // The reserved worker gets its run, or goes back to waiting (on drop).
            if let (Some(reserved), Ok((ins, _))) = (reserved, inserted.as_mut()) {
                if let Some(claimed) = ins.claimed.take() {
                    reserved.hand(claimed);
                }
            }
            inserted
        }
    };
    // With a worker reserved the insert runs on a task of its own: the run it claims
    // reaches the worker even if this request is dropped.
    if spawned {
        tokio::spawn(insert)
            .await
            .map_err(|e| ServerError::Internal(format!("queueing the run failed: {e}")))
    } else {
        Ok(insert.await)
    }
}

/// Waits for the run's end and returns what `runs.wait` / `join` answer: the final
/// values (with `__interrupt__` when paused), or `{"__error__": ...}` for a failed run.
/// `just_queued`: the run was queued by this request, so it cannot have ended before
/// `events` was subscribed; its end is awaited before the first look at its row (and
/// when a worker of this process recorded it, its end says how: no look at all).
async fn result_of(
    state: &AppState,
    run_id: Uuid,
    mut events: broadcast::Receiver<Arc<HubEvent>>,
    just_queued: bool,
) -> Result<Value> {
    let answer = |status: &str, output: Value, error: Value| {
        if status == "error" {
            json!({ "__error__": error })
        } else {
            output
        }
    };
    let mut told = None;
    if just_queued {
        told = wait_for_end(&mut events).await;
    }
    loop {
        if let Some(end) = told.take() {
            drop(events);
            state.hub.release(run_id);
            return Ok(answer(&end.status, end.output, end.error));
        }
        match db::run_result(&state.pool, run_id).await? {
            None => return Err(ServerError::NotFound(format!("run {run_id} not found"))),
            Some((status, output, error)) if db::is_final(&status) => {
                drop(events);
                state.hub.release(run_id);
                return Ok(answer(&status, output, error));
            }
            Some(_) => {}
        }
        told = wait_for_end(&mut events).await;
        if events.is_closed() {
            events = state.hub.subscribe(run_id);
        }
    }
}

/// Until the run's end is announced in this process (its own worker, or the `NOTIFY` of
/// another process's), or a second passes (a missed announcement costs a second, not a
/// hang). Returns how the run ended when this process's worker said so.
async fn wait_for_end(events: &mut broadcast::Receiver<Arc<HubEvent>>) -> Option<RunEnd> {
    let ended = tokio::time::timeout(Duration::from_secs(1), async {
        loop {
            match events.recv().await {
                Ok(ev) => {
                    if let HubEvent::End(end) = &*ev {
                        break end.clone();
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => {
                    futures::future::pending::<()>().await;
                }
            }
        }
    })
    .await;
    ended.ok().flatten()
}

fn sse_frame(event: &str, data: &str) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// An SSE frame of the run's log: its id is the event's number, which a client that lost
/// the stream sends back as `Last-Event-ID` to `join_stream` to get what followed.
fn sse_log_frame(seq: i64, event: &str, data: &str) -> String {
    format!("id: {seq}\nevent: {event}\ndata: {data}\n\n")
}

/// Where an SSE reader is in a run's event log.
struct Reader {
    state: Arc<AppState>,
    run_id: Uuid,
    wake: broadcast::Receiver<Arc<HubEvent>>,
    seq: i64,
    frames: std::collections::VecDeque<String>,
    ended: bool,
    done: bool,
}

impl Reader {
    /// The next SSE frame, reading the log when the buffer is empty and waiting for a
    /// wake-up (or a second) when the log has nothing new; `None` after the run ended
    /// and its log was read to the end.
    async fn next(&mut self) -> Option<String> {
        loop {
            if let Some(frame) = self.frames.pop_front() {
                return Some(frame);
            }
            if self.done {
                return None;
            }
            match db::events_after(&self.state.pool, self.run_id, self.seq).await {
                Ok(rows) if !rows.is_empty() => {
                    for (seq, event, data) in rows {
                        self.seq = seq;
                        self.frames.push_back(sse_log_frame(seq, &event, &data));
                    }
                    continue;
                }
                Ok(_) => {}
                Err(_) => self.done = true,
            }
            if self.ended {
                // The log was read once more after the end: nothing can follow.
                self.done = true;
                continue;
            }
            // A run's events are all stored before its final status is.
            match db::run_result(&self.state.pool, self.run_id).await {
                Ok(Some((status, _, _))) if !db::is_final(&status) => {}
                _ => {
                    self.ended = true;
                    continue;
                }
            }
            let woken = tokio::time::timeout(Duration::from_secs(1), self.wake.recv()).await;
            if let Ok(Err(broadcast::error::RecvError::Closed)) = woken {
                // The run ended in this process (its channel is gone): read again.
                self.ended = true;
            }
        }
    }
}

/// Where an SSE response starts in the run's log.
#[derive(Clone, Copy)]
enum From {
    /// At the start, after a `metadata` event.
    Start,
    /// After event `seq` (a `Last-Event-ID`), without the `metadata` event.
    After(i64),
}

/// The run's events as an SSE response: `metadata` first, then the events of its log
/// until the run ends. With `resumable`, a `Location` header names the run's
/// `join_stream`, where the SDK reconnects (with `Last-Event-ID`) if the stream breaks.
fn sse(state: Arc<AppState>, created: Created, from: From, resumable: bool) -> Response {
    let (seq, frames) = match from {
        From::Start => (
            0,
            std::collections::VecDeque::from([sse_frame(
                "metadata",
                &json!({ "run_id": created.run_id.to_string(), "attempt": 1 }).to_string(),
            )]),
        ),
        From::After(seq) => (seq, std::collections::VecDeque::new()),
    };
    let reader = Reader {
        state,
        run_id: created.run_id,
        wake: created.events,
        seq,
        frames,
        ended: false,
        done: false,
    };
    let stream = futures::stream::unfold(reader, |mut r| async move {
        match r.next().await {
            Some(frame) => Some((frame, r)),
            None => {
                let (hub_state, run_id) = (r.state.clone(), r.run_id);
                drop(r);
                hub_state.hub.release(run_id);
                None
            }
        }
    })
    .map(Ok::<_, std::convert::Infallible>);
    let location = format!("/threads/{}/runs/{}", created.thread_id, created.run_id);
    let mut response = Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-store");
    if resumable {
        response = response.header(header::LOCATION, format!("{location}/stream"));
    }
    response
        .header(header::CONTENT_LOCATION, location)
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

pub(super) async fn create(
    axum::extract::State(state): St,
    Path(thread): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let created = create_run(&state, Some(&thread), body, true).await?;
    Ok(Json(created.run))
}

pub(super) async fn create_stateless(
    axum::extract::State(state): St,
    body: Bytes,
) -> Result<Json<Value>> {
    let created = create_run(&state, None, body, true).await?;
    Ok(Json(created.run))
}

pub(super) async fn wait(
    axum::extract::State(state): St,
    Path(thread): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let created = create_run(&state, Some(&thread), body, false).await?;
    Ok(Json(
        result_of(&state, created.run_id, created.events, true).await?,
    ))
}

pub(super) async fn wait_stateless(
    axum::extract::State(state): St,
    body: Bytes,
) -> Result<Json<Value>> {
    let created = create_run(&state, None, body, false).await?;
    Ok(Json(
        result_of(&state, created.run_id, created.events, true).await?,
    ))
}

pub(super) async fn stream(
    axum::extract::State(state): St,
    Path(thread): Path<String>,
    body: Bytes,
) -> Result<Response> {
    let created = create_run(&state, Some(&thread), body, false).await?;
    let resumable = created.resumable;
    Ok(sse(state, created, From::Start, resumable))
}

pub(super) async fn stream_stateless(
    axum::extract::State(state): St,
    body: Bytes,
) -> Result<Response> {
    let created = create_run(&state, None, body, false).await?;
    // A stateless run's thread is deleted at its end: nothing to reconnect to.
    Ok(sse(state, created, From::Start, false))
}

pub(super) async fn get_one(
    axum::extract::State(state): St,
    Path((thread, run)): Path<(String, String)>,
) -> Result<Json<Value>> {
    let (t, r) = (uuid_of("thread", &thread)?, uuid_of("run", &run)?);
    Ok(Json(db::get_run(&state.pool, t, r).await?))
}

/// `?limit=&offset=&status=` of `GET /threads/{id}/runs`.
#[derive(Deserialize)]
pub(super) struct ListQuery {
    limit: Option<i64>,
    offset: Option<i64>,
    status: Option<String>,
}

pub(super) async fn list(
    axum::extract::State(state): St,
    Path(thread): Path<String>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Value>> {
    let t = uuid_of("thread", &thread)?;
    db::get_thread(&state.pool, t).await?;
    let (limit, offset) = page(&json!({ "limit": q.limit, "offset": q.offset }), 10)?;
    let runs = db::list_runs(&state.pool, t, q.status.as_deref(), limit, offset).await?;
    Ok(Json(Value::Array(runs)))
}

/// Checks that the run is the thread's, and has its end and events announced to this
/// process (its worker may be another process's).
async fn watch(state: &AppState, thread: Uuid, run: Uuid) -> Result<()> {
    db::get_run(&state.pool, thread, run).await?;
    db::watch_run(&state.pool, run).await
}

pub(super) async fn join(
    axum::extract::State(state): St,
    Path((thread, run)): Path<(String, String)>,
) -> Result<Json<Value>> {
    let (t, r) = (uuid_of("thread", &thread)?, uuid_of("run", &run)?);
    let events = state.hub.subscribe(r);
    if let Err(e) = watch(&state, t, r).await {
        drop(events);
        state.hub.release(r);
        return Err(e);
    }
    Ok(Json(result_of(&state, r, events, false).await?))
}

pub(super) async fn join_stream(
    axum::extract::State(state): St,
    Path((thread, run)): Path<(String, String)>,
    headers: axum::http::HeaderMap,
) -> Result<Response> {
    let (t, r) = (uuid_of("thread", &thread)?, uuid_of("run", &run)?);
    // After the event a client got last, or from the start.
    let from = match headers.get("last-event-id") {
        None => From::Start,
        Some(v) => match v.to_str().ok().map(str::trim) {
            Some("") | Some("-1") => From::Start,
            Some(v) => From::After(v.parse().map_err(|_| {
                ServerError::Invalid(format!("Last-Event-ID must be an event number, not {v:?}"))
            })?),
            None => return Err(ServerError::Invalid("Last-Event-ID is not text".into())),
        },
    };
    let events = state.hub.subscribe(r);
    if let Err(e) = watch(&state, t, r).await {
        drop(events);
        state.hub.release(r);
        return Err(e);
    }
    // The run's log from its start (or after `Last-Event-ID`), then what follows until it
    // ends.
    let created = Created {
        run: Value::Null,
        resumable: true,
        run_id: r,
        thread_id: t,
        events,
    };
    Ok(sse(state, created, from, true))
}

/// `?wait=&action=` of the cancel endpoint.
#[derive(Deserialize)]
pub(super) struct CancelQuery {
    wait: Option<String>,
    action: Option<String>,
}

pub(super) async fn cancel(
    axum::extract::State(state): St,
    Path((thread, run)): Path<(String, String)>,
    Query(q): Query<CancelQuery>,
) -> Result<Response> {
    let (t, r) = (uuid_of("thread", &thread)?, uuid_of("run", &run)?);
    let action = match q.action.as_deref() {
        None | Some("interrupt") => "interrupt",
        Some("rollback") => "rollback",
        Some(other) => {
            return Err(ServerError::Invalid(format!(
                "unknown cancel action {other:?} (interrupt, rollback)"
            )))
        }
    };
    let events = state.hub.subscribe(r);
    if let Err(e) = db::get_run(&state.pool, t, r).await {
        drop(events);
        state.hub.release(r);
        return Err(e);
    }
    if db::cancel_pending(&state.pool, r).await? {
        state.hub.finish(r, None);
    } else if db::request_cancel(&state.pool, r, action).await? {
        state.hub.cancel(r);
    }
    if matches!(q.wait.as_deref(), Some("1" | "true")) {
        db::watch_run(&state.pool, r).await?;
        result_of(&state, r, events, false).await?;
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    drop(events);
    Ok(StatusCode::ACCEPTED.into_response())
}

pub(super) async fn delete(
    axum::extract::State(state): St,
    Path((thread, run)): Path<(String, String)>,
) -> Result<StatusCode> {
    let (t, r) = (uuid_of("thread", &thread)?, uuid_of("run", &run)?);
    let run = db::get_run(&state.pool, t, r).await?;
    if !run["status"].as_str().is_some_and(db::is_final) {
        return Err(ServerError::Conflict(
            "the run is not finished: cancel it first".into(),
        ));
    }
    db::delete_run(&state.pool, r).await?;
    Ok(StatusCode::NO_CONTENT)
}
