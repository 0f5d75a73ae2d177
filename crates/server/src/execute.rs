//! One claimed run, from its row to its recorded end ([`execute`]): its input and config,
//! where it starts (a run taken over continues from its last checkpoint), its events
//! passed to the outbox under a kept lease, and how it ended.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::{json, Value as Json};
use stategraph::checkpoint::ListOptions;
use stategraph::pregel::snapshot::StateSnapshot;
use stategraph::{RunConfig, RunStream};
use tokio::sync::watch;
use tracing::{debug, info, warn};

use crate::app::AppState;
use crate::db::{self, Claimed};
use crate::graph::ServedGraph;
use crate::graph_input::GraphInput;
use crate::hub::{HubEvent, RunEnd};
use crate::json::{interrupt_json, run_output_json, values_json};
use crate::outbox::Outbox;
use crate::replay::Replay;
use crate::run_config::{run_config, stream_modes, StreamModes};
use crate::shutdown::stopped;

fn error_json(kind: &str, message: &str) -> Json {
    json!({ "error": kind, "message": message })
}

/// What a claimed run needs to start.
struct Prepared {
    graph: Arc<dyn ServedGraph>,
    input: GraphInput,
    config: RunConfig,
    modes: StreamModes,
}

/// How the loop over a run's events stopped (all false, no failure: the run ended).
#[derive(Default)]
struct Stop {
    failure: Option<stategraph::Error>,
    cancelled: bool,
    lost: bool,
    handed_back: bool,
}

impl Stop {
    /// The run itself ended, normally: not stopped, not taken away, no error.
    fn ended(&self) -> bool {
        !(self.cancelled || self.lost || self.handed_back) && self.failure.is_none()
    }
}

/// Runs one claimed run to its end and records it.
pub(crate) async fn execute(state: &AppState, run: Claimed, shutdown: &mut watch::Receiver<bool>) {
    // One line per run at `info`, at its end: each line is a formatted write to stderr.
    debug!(graph = %run.graph_id, "run started");
    let thread = run.thread_id.to_string();
    let Prepared {
        graph,
        mut input,
        mut config,
        modes,
    } = match prepare(state, &run, &thread) {
        Ok(p) => p,
        Err(message) => {
            let err = error_json("ValueError", &message);
            publish(state, &run, 1, "error", &err.to_string()).await;
            record(state, &run, "error", &Json::Null, &err, ("idle", None)).await;
            return;
        }
    };
    let (seq, replay) = start_point(state, &run, graph.as_ref(), &mut input, &mut config).await;
    let hold = Outbox::holds(&modes.plain, config.durability);
    let mut outbox = Outbox::new(state, &run, modes, seq, replay, hold);
    outbox.start().await;
    let mut events = graph.run(input, config, outbox.graph_modes());
    let stop = drive(state, &run, &mut events, &mut outbox, shutdown).await;
    let final_state = if stop.ended() {
        if let (Some(head), false) = (events.final_head(), run.stateless) {
            state.heads.put(run.thread_id, head.clone());
        }
        events.into_final_state()
    } else {
        drop(events);
        None
    };
    let root = RunConfig::thread(thread.as_str());
    if stop.handed_back {
        // This process stops: the run goes back to the queue, and the next worker
        // continues it from its last checkpoint.
        graph.settle(root).await;
        if let Err(e) = db::hand_back(&state.pool, &run, &state.process).await {
            warn!(error = %e, "handing the run back failed; it is taken over when its lease runs out");
        }
        info!("run handed back");
        return;
    }
    if stop.lost {
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
    if stop.cancelled {
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
    conclude(state, &run, &mut outbox, &stop, snapshot).await;
}

/// The run's graph, input, config and stream modes from its row; the message of what is
/// wrong with them otherwise.
fn prepare(state: &AppState, run: &Claimed, thread: &str) -> Result<Prepared, String> {
    let graph = state
        .graphs
        .get(&run.graph_id)
        .cloned()
        .ok_or_else(|| format!("graph {} is not registered here", run.graph_id))?;
    let input = GraphInput::from_body(run.kwargs.get("input"), run.kwargs.get("command"))
        .map_err(|e| e.to_string())?;
    // The run id goes into each checkpoint's metadata, as LangGraph's server does
    // (and as `rollback` finds the checkpoints to delete).
    let config = run_config(thread, &run.kwargs)
        .map_err(|e| e.to_string())?
        .with_metadata("run_id", run.run_id.to_string());
    let modes = stream_modes(&run.kwargs).map_err(|e| e.to_string())?;
    Ok(Prepared {
        graph,
        input,
        config,
        modes,
    })
}

/// Where the run starts: a run taken over continues from its last checkpoint (and its
/// event numbers and published states); a first run on a thread the claim saw empty, or
/// whose head this process cached, skips the read at the start. The event number to go on
/// from and what not to publish again.
async fn start_point(
    state: &AppState,
    run: &Claimed,
    graph: &dyn ServedGraph,
    input: &mut GraphInput,
    config: &mut RunConfig,
) -> (i64, Replay) {
    let mut seq: i64 = 0;
    let mut replay = Replay::off();
    // Taken out whatever the run does: only a normal end leaves a head again.
    let cached = state.heads.take(run.thread_id, run.head.as_ref());
    let thread = run.thread_id.to_string();
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
            *input = GraphInput::None;
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
        *config = std::mem::take(config).assume_new_thread();
    } else if let (Some(head), None) = (cached, &config.checkpoint_id) {
        // The head this process's last run of the thread left, and the claim saw it is
        // still the thread's: no read at the start (a resume reads anyway).
        *config = std::mem::take(config).start_from(head);
    }
    (seq, replay)
}

/// Passes the run's events to the outbox until the run ends, fails, is cancelled, loses
/// its lease, or this process stops; keeps the lease meanwhile.
async fn drive(
    state: &AppState,
    run: &Claimed,
    events: &mut RunStream,
    outbox: &mut Outbox<'_>,
    shutdown: &mut watch::Receiver<bool>,
) -> Stop {
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
    let mut stop = Stop {
        cancelled: early_cancel,
        ..Stop::default()
    };
    while !stop.cancelled {
        tokio::select! {
            _ = heartbeat.tick() => match db::heartbeat(&state.pool, run, state.lease).await {
                Ok(None) => { stop.lost = true; break; }
                // Asked to stop, and the `NOTIFY` did not reach this process.
                Ok(Some(Some(_))) => { stop.cancelled = true; break; }
                Ok(Some(None)) | Err(_) => {}
            },
            ev = events.next() => match ev {
                Some(Ok(ev)) => outbox.event(ev).await,
                Some(Err(e)) => { stop.failure = Some(e); break; }
                None => break,
            },
            _ = &mut cancel => { stop.cancelled = true; break; }
            _ = stopped(shutdown) => { stop.handed_back = true; break; }
        }
    }
    stop
}

/// Records how a run that this worker still holds ended (its status, output or error,
/// and its thread's values and interrupts) and publishes its end.
async fn conclude(
    state: &AppState,
    run: &Claimed,
    outbox: &mut Outbox<'_>,
    stop: &Stop,
    snapshot: stategraph::Result<StateSnapshot>,
) {
    let (values, interrupts, output, paused) = match &snapshot {
        Ok(s) => snapshot_json(s),
        Err(_) => (Json::Null, json!({}), Json::Null, false),
    };
    let (status, error, thread_status) = if stop.cancelled {
        ("interrupted", Json::Null, "idle")
    } else if let Some(e) = &stop.failure {
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
    if !stop.cancelled && stop.failure.is_none() && snapshot.is_ok() {
        outbox.end(&values).await;
    }
    let thread_values = (!run.stateless).then_some((&values, &interrupts));
    record(
        state,
        run,
        status,
        &output,
        &error,
        (thread_status, thread_values),
    )
    .await;
    info!(graph = %run.graph_id, status, "run ended");
}

/// A final state as the run's row and thread keep it: `(values, interrupts by task,
/// output, paused)`.
fn snapshot_json(s: &StateSnapshot) -> (Json, Json, Json, bool) {
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
