//! A run's events on their way into its log (`run_events`): named as the client asked,
//! numbered, kept back until what they report is stored, and filtered after a takeover.
//!
//! Under durability `async` a finished task's `updates` event is held, with every event
//! after it, until the saver has stored the task's writes ([`crate::durable`]); the task's
//! result in the `tasks` stream (asked for internally when the client did not) names the
//! task and releases the held events. After a takeover, [`Replay`] drops what the dead
//! worker had published already.

use std::time::Duration;

use stategraph::{StreamEvent, StreamMode};
use tracing::warn;

use crate::app::AppState;
use crate::db::{self, Claimed};
use crate::hub::HubEvent;
use crate::message_log::MessageLog;
use crate::replay::{Replay, Verdict};
use crate::run_config::StreamModes;
use crate::run_events::RunEvents;

/// The events of one run, from the graph to the log.
pub(crate) struct Outbox<'a> {
    state: &'a AppState,
    run: &'a Claimed,
    thread: String,
    /// The SSE name of each mode the client asked for, with the graph's mode.
    modes: Vec<(String, StreamMode)>,
    /// The number of the last event in the log.
    seq: i64,
    replay: Replay,
    /// Whether finished tasks' updates wait for their writes to be stored.
    hold: bool,
    /// Events kept back until a task's writes are stored, in order: `(name, data)`.
    held: Vec<(String, String)>,
    /// How long to wait for a task's writes before publishing anyway.
    patience: Duration,
    /// The `messages` mode's messages, when the client asked for it.
    messages: Option<MessageLog>,
    /// The `events` mode's runs, when the client asked for it.
    events: Option<RunEvents>,
}

impl<'a> Outbox<'a> {
    /// An outbox after event `seq` of the run's log. With `hold`, the caller runs the
    /// graph with [`StreamMode::Tasks`] too (see [`Outbox::graph_modes`]).
    pub(crate) fn new(
        state: &'a AppState,
        run: &'a Claimed,
        modes: StreamModes,
        seq: i64,
        replay: Replay,
        hold: bool,
    ) -> Outbox<'a> {
        let thread = run.thread_id.to_string();
        if hold {
            state.stored.watch(&thread);
        }
        let events = modes.events.then(|| {
            RunEvents::new(
                &run.run_id.to_string(),
                &run.graph_id,
                &thread,
                run.attempt,
                &run.kwargs,
            )
        });
        Outbox {
            state,
            run,
            thread,
            modes: modes.plain,
            messages: modes.messages.then(MessageLog::default),
            events,
            seq,
            replay,
            hold,
            held: Vec::new(),
            patience: state.lease / 2,
        }
    }

    /// Whether a run streaming `modes` under `durability` holds updates back: under
    /// `async` with a mode that reports finished tasks (under `sync` writes are stored
    /// before the next event, under `exit` only at the end).
    pub(crate) fn holds(
        modes: &[(String, StreamMode)],
        durability: stategraph::Durability,
    ) -> bool {
        durability == stategraph::Durability::Async
            && modes.iter().any(|(_, m)| {
                matches!(
                    m,
                    StreamMode::Updates | StreamMode::Tasks | StreamMode::Debug
                )
            })
    }

    /// The modes to run the graph with.
    pub(crate) fn graph_modes(&self) -> Vec<StreamMode> {
        let mut graph_modes: Vec<StreamMode> = Vec::new();
        for (_, m) in &self.modes {
            if !graph_modes.contains(m) {
                graph_modes.push(*m);
            }
        }
        if self.hold && !graph_modes.contains(&StreamMode::Tasks) {
            graph_modes.push(StreamMode::Tasks);
        }
        let mut built = Vec::new();
        if self.messages.is_some() || self.events.is_some() {
            built.push(StreamMode::Messages);
        }
        if self.events.is_some() {
            // Task starts and results, with their step.
            built.push(StreamMode::Debug);
        }
        for m in built {
            if !graph_modes.contains(&m) {
                graph_modes.push(m);
            }
        }
        graph_modes
    }

    /// Takes one event of the graph.
    pub(crate) async fn event(&mut self, ev: StreamEvent) {
        let result_of = (self.hold && ev.mode == StreamMode::Tasks)
            .then(|| finished_task(&ev))
            .flatten();
        let wanted = self.modes.iter().any(|(_, m)| *m == ev.mode);
        if wanted {
            let json = crate::json::api_json(&ev.data);
            let mut text = None;
            for i in 0..self.modes.len() {
                if self.modes[i].1 != ev.mode {
                    continue;
                }
                let name = if ev.ns.is_empty() {
                    self.modes[i].0.clone()
                } else {
                    format!("{}|{}", self.modes[i].0, ev.ns.join("|"))
                };
                let data = match self.replay.judge(&name, &json) {
                    Verdict::Drop => continue,
                    Verdict::PublishAs(other) => other.to_string(),
                    Verdict::Publish => text.get_or_insert_with(|| json.to_string()).clone(),
                };
                let fresh_update =
                    self.hold && ev.mode == StreamMode::Updates && !crate::replay::is_cached(&json);
                if fresh_update || !self.held.is_empty() {
                    self.held.push((name, data));
                } else {
                    self.publish(&name, &data).await;
                }
            }
        }
        for (name, data) in self.built(&ev) {
            self.send(name, data.to_string()).await;
        }
        if let Some(task) = result_of {
            // The task finished: once its writes are stored, what it reported goes out.
            if !self.held.is_empty()
                && !self
                    .state
                    .stored
                    .wait(&self.thread, &task, self.patience)
                    .await
            {
                warn!(
                    task,
                    "a task's writes were not stored in time; publishing anyway"
                );
            }
            self.flush().await;
        }
    }

    /// The `messages` and `events` mode events the server builds from one of the graph's.
    fn built(&mut self, ev: &StreamEvent) -> Vec<(String, serde_json::Value)> {
        let mut out = Vec::new();
        let root = ev.ns.is_empty();
        let wanted = match ev.mode {
            StreamMode::Messages => self.messages.is_some() || self.events.is_some(),
            StreamMode::Debug => root && self.events.is_some(),
            _ => false,
        };
        if !wanted {
            return out;
        }
        let json = crate::json::api_json(&ev.data);
        if ev.mode == StreamMode::Messages {
            if let Some(log) = &mut self.messages {
                out.extend(log.take(&json).into_iter().map(|(n, d)| (n.to_owned(), d)));
            }
        }
        if let Some(events) = &mut self.events {
            let built = if ev.mode == StreamMode::Messages {
                events.message(&json)
            } else {
                events.debug(&json)
            };
            out.extend(built.into_iter().map(|e| ("events".to_owned(), e)));
        }
        out
    }

    /// The graph's `on_chain_start` of the `events` mode, before the run's first event.
    pub(crate) async fn start(&mut self) {
        let kwargs = &self.run.kwargs;
        let input = kwargs
            .get("command")
            .filter(|c| !c.is_null())
            .or_else(|| kwargs.get("input"))
            .cloned()
            .unwrap_or(serde_json::Value::Null);
        if let Some(start) = self.events.as_mut().map(|e| e.start(&input)) {
            self.send("events".into(), start.to_string()).await;
        }
    }

    /// The graph's `on_chain_end` of the `events` mode, for a run that ended or paused
    /// with these `values`.
    pub(crate) async fn end(&mut self, values: &serde_json::Value) {
        if let Some(end) = self.events.as_mut().map(|e| e.end(values)) {
            self.send("events".into(), end.to_string()).await;
        }
    }

    /// Publishes an event, or holds it behind the events held before it.
    async fn send(&mut self, name: String, data: String) {
        if self.held.is_empty() {
            self.publish(&name, &data).await;
        } else {
            self.held.push((name, data));
        }
    }

    /// Publishes what is held (the run ended, or a task's writes are stored).
    pub(crate) async fn flush(&mut self) {
        for (name, data) in std::mem::take(&mut self.held) {
            self.publish(&name, &data).await;
        }
    }

    /// Appends an event to the run's log and wakes this process's readers of the run.
    pub(crate) async fn publish(&mut self, name: &str, data: &str) {
        self.seq += 1;
        if let Err(e) = db::append_event(
            &self.state.pool,
            &self.state.process,
            self.run,
            self.seq,
            name,
            data,
        )
        .await
        {
            warn!(error = %e, "storing a run event failed");
        }
        self.state.hub.publish(self.run.run_id, HubEvent::Events);
    }
}

impl Drop for Outbox<'_> {
    fn drop(&mut self) {
        if self.hold {
            self.state.stored.forget(&self.thread);
        }
    }
}

/// The id of the task whose result a `tasks` event reports (`None` for a task start).
fn finished_task(ev: &StreamEvent) -> Option<String> {
    let result = ev.data.get("result");
    let id = ev.data.get("id");
    match (result, id) {
        (Some(_), Some(id)) => id.as_str().map(str::to_owned),
        _ => None,
    }
}
