//! Workers: claim pending runs from Postgres (or receive runs claimed at insert, see
//! [`crate::idle`]), run them, record the result, publish their events; and the `LISTEN`
//! connection that wakes idle workers.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value as Json};
use stategraph::checkpoint::ListOptions;
use stategraph::RunConfig;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{debug, info, warn, Instrument};

use crate::app::AppState;
use crate::db::{self, Claimed};
use crate::graph_input::GraphInput;
use crate::hub::{HubEvent, RunEnd};
use crate::idle::Wake;
use crate::json::{interrupt_json, run_output_json, values_json};
use crate::outbox::Outbox;
use crate::replay::Replay;
use crate::run_config::{run_config, stream_modes};

/// How long the listener waits before it connects again.
const RECONNECT: Duration = Duration::from_secs(1);

/// Starts `n` workers and the listener; they stop when `shutdown` becomes true (a worker
/// hands its current run back to the queue, to be continued from its last checkpoint).
pub(crate) fn spawn(
    state: Arc<AppState>,
    n: usize,
    shutdown: watch::Receiver<bool>,
) -> Vec<JoinHandle<()>> {
    let mut handles = vec![tokio::spawn(listen(state.clone(), shutdown.clone()))];
    if let (Some(retention), true) = (state.event_retention, n > 0) {
        handles.push(tokio::spawn(prune(
            state.clone(),
            retention,
            shutdown.clone(),
        )));
    }
    let poll = state.poll;
    for i in 0..n {
        handles.push(tokio::spawn(
            work(
                state.clone(),
                shutdown.clone(),
                poll * (i as u32 + 1),
                poll * n as u32,
            )
            .instrument(tracing::info_span!("worker", i)),
        ));
    }
    handles
}

async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    while !*shutdown.borrow() {
        if shutdown.changed().await.is_err() {
            // The sender is gone: nobody can ask to stop; wait forever.
            futures::future::pending::<()>().await;
        }
    }
}

/// Deletes the events of runs that finished more than `retention` ago, every tenth of
/// it (between a second and a minute).
async fn prune(state: Arc<AppState>, retention: Duration, mut shutdown: watch::Receiver<bool>) {
    let every = (retention / 10).clamp(Duration::from_secs(1), Duration::from_secs(60));
    loop {
        match db::prune_events(&state.pool, retention).await {
            Ok(0) => {}
            Ok(n) => info!(events = n, "pruned the events of finished runs"),
            Err(e) => warn!(error = %e, "pruning run events failed"),
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stopped(&mut shutdown) => return,
        }
    }
}

/// `LISTEN`s on the runs channel and wakes the workers on each notification.
async fn listen(state: Arc<AppState>, mut shutdown: watch::Receiver<bool>) {
    loop {
        let conn = tokio_postgres::connect(&state.database_url, tokio_postgres::NoTls).await;
        let (client, mut connection) = match conn {
            Ok(c) => c,
            Err(e) => {
                warn!(error = %e, "listener cannot connect; retrying");
                tokio::select! {
                    _ = tokio::time::sleep(RECONNECT) => continue,
                    _ = stopped(&mut shutdown) => return,
                }
            }
        };
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        let sql = format!(
            "LISTEN {}; LISTEN {}; LISTEN {}; LISTEN {}",
            db::RUNS_CHANNEL,
            db::CANCEL_CHANNEL,
            db::EVENTS_CHANNEL,
            db::RUN_END_CHANNEL
        );
        let listen = client.batch_execute(&sql);
        // The connection must be polled for LISTEN to complete.
        let mut listen = std::pin::pin!(listen);
        let ok = loop {
            tokio::select! {
                r = &mut listen => break r.is_ok(),
                m = messages.next() => if m.is_none() { break false },
            }
        };
        if !ok {
            continue;
        }
        // Runs announced while there was no connection went unheard.
        state.idle.announce();
        loop {
            tokio::select! {
                m = messages.next() => match m {
                    Some(Ok(tokio_postgres::AsyncMessage::Notification(n))) => {
                        let notice = db::run_notice(n.payload());
                        // This process's workers wake its readers themselves.
                        let mine = notice.is_some_and(|(_, p)| p == Some(state.process.as_str()));
                        match (n.channel(), notice) {
                            (db::CANCEL_CHANNEL, Some((id, _))) => state.hub.cancel(id),
                            (db::EVENTS_CHANNEL, Some((id, _))) if !mine => {
                                state.hub.publish(id, HubEvent::Events)
                            }
                            (db::RUN_END_CHANNEL, Some((id, _))) if !mine => {
                                state.hub.publish(id, HubEvent::End(None))
                            }
                            (db::EVENTS_CHANNEL | db::RUN_END_CHANNEL, _) => {}
                            // This process announced its own runs to its workers.
                            (db::RUNS_CHANNEL, _) if n.payload() == state.process => {}
                            // One idle worker looks: waking them all would have each
                            // of them query the queue for the same run.
                            _ => state.idle.announce(),
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => break,
                },
                _ = stopped(&mut shutdown) => return,
            }
        }
        warn!("listener connection lost; reconnecting");
    }
}

/// One worker: claims and runs runs until `shutdown`; idle, it waits for a wake-up (see
/// [`crate::idle`]) or `poll` (`first` the first time). Worker `i` of `n` first polls
/// after `i + 1` polls, then every `n`, so an idle process looks about once a poll, not
/// `n` times. Only its first look and its polls look for runs whose lease ran out.
async fn work(
    state: Arc<AppState>,
    mut shutdown: watch::Receiver<bool>,
    first: Duration,
    poll: Duration,
) {
    let mut wait = first;
    // The name this worker holds leases under.
    let me: Arc<str> = Arc::from(uuid::Uuid::new_v4().to_string());
    // The runs of other graphs are left to the processes that have them.
    let graphs: Vec<String> = state.graphs.keys().cloned().collect();
    let mut reap = true;
    let mut handed: Option<Claimed> = None;
    loop {
        if *shutdown.borrow() && handed.is_none() {
            return;
        }
        // The announcements up to `seen` are covered by this look (or an earlier empty
        // one).
        let seen = state.idle.announced();
        let run = match handed.take() {
            Some(run) => Some(run),
            None if !reap && state.idle.known_empty() => None,
            None => match db::claim(&state.pool, &me, state.lease, &graphs, reap).await {
                Ok(Some(run)) => Some(run),
                Ok(None) => {
                    state.idle.found_nothing(seen);
                    None
                }
                Err(e) => {
                    warn!(error = %e, "claiming a run failed");
                    None
                }
            },
        };
        reap = false;
        if let Some(run) = run {
            // The run's trace: the graph's `invoke_workflow` / `invoke_agent` span and its
            // tasks go under this one (README, "Traces (OpenTelemetry)"). A root: the
            // worker's span never ends, so it would never be exported.
            let span = tracing::info_span!(
                parent: None,
                "run",
                run_id = %run.run_id,
                thread_id = %run.thread_id,
                otel.name = %format_args!("run {}", run.graph_id),
                gen_ai.conversation.id = %run.thread_id,
                stategraph.run.id = %run.run_id,
                stategraph.graph.id = %run.graph_id,
                // As the client named it (an assistant's id or its graph's name).
                stategraph.assistant.id = run.kwargs.get("assistant_id").and_then(Json::as_str),
                stategraph.run.attempt = run.attempt,
            );
            execute(&state, run, &mut shutdown).instrument(span).await;
            continue;
        }
        // Idle until woken, handed a run, the poll, or shutdown.
        let Some(mut waiter) = state.idle.wait(&me, seen) else {
            continue;
        };
        let sleep = tokio::time::sleep(std::mem::replace(&mut wait, poll));
        let wake = tokio::select! {
            w = &mut waiter.rx => w.ok(),
            _ = sleep => {
                reap = true;
                None
            }
            _ = stopped(&mut shutdown) => None,
        };
        let wake = match wake {
            Some(w) => Some(w),
            // Woken or reserved as the poll came: the wake-up is on its way.
            None if !state.idle.leave(&waiter) => waiter.rx.await.ok(),
            None => None,
        };
        if let Some(Wake::Run(run)) = wake {
            handed = Some(*run);
        }
    }
}

fn error_json(kind: &str, message: &str) -> Json {
    json!({ "error": kind, "message": message })
}

/// Runs one claimed run to its end and records it.
async fn execute(state: &AppState, run: Claimed, shutdown: &mut watch::Receiver<bool>) {
    // One line per run at `info`, at its end: each line is a formatted write to stderr.
    debug!(graph = %run.graph_id, "run started");
    let thread = run.thread_id.to_string();
    let prepared = (|| {
        let graph = state
            .graphs
            .get(&run.graph_id)
            .cloned()
            .ok_or_else(|| format!("graph {} is not registered here", run.graph_id))?;
        let input = GraphInput::from_body(run.kwargs.get("input"), run.kwargs.get("command"))
            .map_err(|e| e.to_string())?;
        // The run id goes into each checkpoint's metadata, as LangGraph's server does
        // (and as `rollback` finds the checkpoints to delete).
        let config = run_config(&thread, &run.kwargs)
            .map_err(|e| e.to_string())?
            .with_metadata("run_id", run.run_id.to_string());
        let modes = stream_modes(&run.kwargs).map_err(|e| e.to_string())?;
        Ok::<_, String>((graph, input, config, modes))
    })();
    let (graph, mut input, mut config, modes) = match prepared {
        Ok(p) => p,
        Err(message) => {
            let err = error_json("ValueError", &message);
            publish(state, &run, 1, "error", &err.to_string()).await;
            record(state, &run, "error", &Json::Null, &err, ("idle", None)).await;
            return;
        }
    };
    let mut seq: i64 = 0;
    let mut replay = Replay::off();
    // Taken out whatever the run does: only a normal end leaves a head again.
    let cached = state.heads.take(run.thread_id, run.head.as_ref());
    if run.attempt > 1 {
        // Taken over from a dead worker: continue from the run's last checkpoint (its
        // finished tasks' writes are saved and are not run again) if it saved one.
        let mine = ListOptions::default()
            .filter("run_id", run.run_id.to_string().as_str())
            .limit(1);
        let saved = graph
            .history(RunConfig::thread(thread.as_str()), mine)
            .await;
        if saved.is_ok_and(|h| !h.is_empty()) {
            input = GraphInput::None;
            config.checkpoint_id = None;
        }
        seq = db::last_event(&state.pool, run.run_id).await.unwrap_or(0);
        // What the client saw from the dead worker is not published again.
        match db::published_states(&state.pool, run.run_id).await {
            Ok(published) => replay = Replay::load(published),
            Err(e) => warn!(error = %e, "reading the run's published events failed"),
        }
        info!(attempt = run.attempt, "run taken over");
    } else if run.fresh() && config.checkpoint_id.is_none() {
        // The claim saw no checkpoint on the thread: no read at the start (a wrong
        // assumption is refused by the saver's fence with a conflict).
        config = config.assume_new_thread();
    } else if let (Some(head), None) = (cached, &config.checkpoint_id) {
        // The head this process's last run of the thread left, and the claim saw it is
        // still the thread's: no read at the start (a resume reads anyway).
        config = config.start_from(head);
    }
    let hold = Outbox::holds(&modes.plain, config.durability);
    let mut outbox = Outbox::new(state, &run, modes, seq, replay, hold);
    outbox.start().await;
    let mut events = graph.run(input, config, outbox.graph_modes());
    // A cancel requested before the claim is in the run's row; one requested between the
    // claim and this line is remembered by the hub.
    let mut signal = state.hub.cancel_signal(run.run_id);
    let early_cancel = run.cancel.is_some() || *signal.borrow_and_update();
    let cancel = async move {
        loop {
            if signal.changed().await.is_err() {
                // Nobody can cancel any more.
                futures::future::pending::<()>().await;
            }
            if *signal.borrow() {
                break;
            }
        }
    };
    let mut cancel = std::pin::pin!(cancel);
    let mut heartbeat = tokio::time::interval(state.lease / 3);
    heartbeat.tick().await;
    let mut failure: Option<stategraph::Error> = None;
    let mut cancelled = early_cancel;
    let mut lost = false;
    let mut handed_back = false;
    while !cancelled {
        tokio::select! {
            _ = heartbeat.tick() => match db::heartbeat(&state.pool, &run, state.lease).await {
                Ok(None) => { lost = true; break; }
                // Asked to stop, and the `NOTIFY` did not reach this process.
                Ok(Some(Some(_))) => { cancelled = true; break; }
                Ok(Some(None)) | Err(_) => {}
            },
            ev = events.next() => match ev {
                Some(Ok(ev)) => outbox.event(ev).await,
                Some(Err(e)) => { failure = Some(e); break; }
                None => break,
            },
            _ = &mut cancel => { cancelled = true; break; }
            _ = stopped(shutdown) => { handed_back = true; break; }
        }
    }
    let ended = !(cancelled || lost || handed_back) && failure.is_none();
    let final_state = if ended {
        if let (Some(head), false) = (events.final_head(), run.stateless) {
            state.heads.put(run.thread_id, head.clone());
        }
        events.into_final_state()
    } else {
        drop(events);
        None
    };
    let root = RunConfig::thread(thread.as_str());
    if handed_back {
        // This process stops: the run goes back to the queue, and the next worker
        // continues it from its last checkpoint.
        graph.settle(root).await;
        if let Err(e) = db::hand_back(&state.pool, &run, &state.process).await {
            warn!(error = %e, "handing the run back failed; it is taken over when its lease runs out");
        }
        info!("run handed back");
        return;
    }
    if lost {
        // Another worker has the run now: it records the end.
        warn!("lease lost; run left to the worker that took it over");
        graph.settle(root).await;
        state.hub.cancel(run.run_id);
        return;
    }
    // What the run reported last. (Not when the run goes to another worker: the events
    // still held wait for writes that may not be stored; that worker replays the stored
    // ones.)
    outbox.flush().await;
    if cancelled {
        graph.settle(root.clone()).await;
        if let Ok(Some(action)) = db::cancel_requested(&state.pool, run.run_id).await {
            if action == "rollback" {
                rollback(state, &run).await;
                return;
            }
        }
    }
    // The run's own final state; read only when it did not end normally.
    let snapshot = match final_state {
        Some(state) => Ok(state),
        None => graph.state(root).await,
    };
    let (values, interrupts, output, paused) = match &snapshot {
        Ok(s) => {
            let interrupts: serde_json::Map<String, Json> = s
                .tasks
                .iter()
                .filter(|t| !t.interrupts.is_empty())
                .map(|t| {
                    (
                        t.id.clone(),
                        Json::Array(t.interrupts.iter().map(interrupt_json).collect()),
                    )
                })
                .collect();
            let values = values_json(&s.values);
            // Without interrupts the output is the values (built once).
            let output = if s.interrupts.is_empty() {
                values.clone()
            } else {
                run_output_json(s)
            };
            (values, Json::Object(interrupts), output, !s.next.is_empty())
        }
        Err(_) => (Json::Null, json!({}), Json::Null, false),
    };
    let (status, error, thread_status) = if cancelled {
        ("interrupted", Json::Null, "idle")
    } else if let Some(e) = &failure {
        let err = error_json(error_kind(e), &e.to_string());
        outbox.publish("error", &err.to_string()).await;
        ("error", err, "error")
    } else if let Err(e) = &snapshot {
        let err = error_json("StateError", &e.to_string());
        outbox.publish("error", &err.to_string()).await;
        ("error", err, "error")
    } else if paused {
        ("interrupted", Json::Null, "interrupted")
    } else {
        ("success", Json::Null, "idle")
    };
    if !cancelled && failure.is_none() && snapshot.is_ok() {
        outbox.end(&values).await;
    }
    let thread_values = (!run.stateless).then_some((&values, &interrupts));
    record(
        state,
        &run,
        status,
        &output,
        &error,
        (thread_status, thread_values),
    )
    .await;
    info!(graph = %run.graph_id, status, "run ended");
}

/// Deletes a cancelled run and the checkpoints it wrote, and frees its thread.
async fn rollback(state: &AppState, run: &Claimed) {
    let saver = state.saver.as_ref();
    if let Err(e) =
        stategraph::checkpoint::CheckpointSaver::delete_for_runs(saver, &[run.run_id.to_string()])
            .await
    {
        warn!(error = %e, "deleting a rolled-back run's checkpoints failed");
    }
    record(
        state,
        run,
        "interrupted",
        &Json::Null,
        &Json::Null,
        ("idle", None),
    )
    .await;
    if let Err(e) = db::delete_run(&state.pool, run.run_id).await {
        warn!(error = %e, "deleting a rolled-back run failed");
    }
    info!("run rolled back");
}

fn error_kind(e: &stategraph::Error) -> &'static str {
    match e {
        stategraph::Error::RecursionLimit(_) => "GraphRecursionError",
        stategraph::Error::InvalidConfig(_) | stategraph::Error::UnknownNode { .. } => "ValueError",
        _ => "GraphError",
    }
}

/// Appends an event to the run's log and wakes this process's readers of the run.
async fn publish(state: &AppState, run: &Claimed, seq: i64, name: &str, data: &str) {
    if let Err(e) = db::append_event(&state.pool, &state.process, run, seq, name, data).await {
        warn!(error = %e, "storing a run event failed");
    }
    state.hub.publish(run.run_id, HubEvent::Events);
}

/// Records the run's end (see [`db::finish_run`]), deletes a stateless run's thread, and
/// wakes the run's readers in this process with how it ended.
async fn record(
    state: &AppState,
    run: &Claimed,
    status: &str,
    output: &Json,
    error: &Json,
    thread: (&str, Option<(&Json, &Json)>),
) {
    let finished = db::finish_run(
        &state.pool,
        run,
        &state.process,
        status,
        output,
        error,
        thread,
    )
    .await;
    let recorded = match finished {
        Ok(f) => {
            if f.queued_behind {
                // The other processes got the NOTIFY; here this worker looks next.
                state.idle.note();
            }
            f.recorded
        }
        Err(e) => {
            warn!(error = %e, "recording the run's end failed");
            false
        }
    };
    if run.stateless {
        if let Err(e) = stategraph::checkpoint::CheckpointSaver::delete_thread(
            state.saver.as_ref(),
            &run.thread_id.to_string(),
        )
        .await
        {
            warn!(error = %e, "deleting a stateless run's checkpoints failed");
        }
        if let Err(e) = db::delete_thread_row(&state.pool, run.thread_id).await {
            warn!(error = %e, "deleting a stateless run's thread failed");
        }
    }
    // Only an end that is in the runs table is told: a reader that reads the row agrees.
    let end = recorded.then(|| RunEnd {
        status: status.to_owned(),
        output: output.clone(),
        error: error.clone(),
    });
    state.hub.finish(run.run_id, end);
}
