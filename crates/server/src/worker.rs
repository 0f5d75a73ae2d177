//! Workers: claim pending runs from Postgres (or receive runs claimed at insert, see
//! [`crate::idle`]) and run each ([`crate::execute`]); and the `LISTEN` connection that
//! wakes idle workers.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value as Json;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{info, warn, Instrument};

use crate::app::AppState;
use crate::db::{self, Claimed};
use crate::execute::execute;
use crate::hub::HubEvent;
use crate::idle::Wake;
use crate::shutdown::stopped;

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
