//! What a taken-over run does not publish twice.
//!
//! **The rule.** A client streaming a run sees each node's update once, even when the
//! worker running it dies and another takes the run over.
//!
//! **Why a takeover repeats events.** Under durability `async` (the default) a finished
//! task's writes are queued for the saver and its `updates` event is emitted at once; the
//! step's checkpoint follows through the same queue. A worker killed while a later task of
//! the step (or the next step) runs has usually published the finished task's update, and
//! its writes are stored, but the checkpoint that closes the step may not be. The new
//! worker continues from the last *stored* checkpoint: it does not run the finished task
//! again (its writes are there), but, as LangGraph does on every resume, it streams those
//! writes again as a *cached* update (`"__metadata__": {"cached": true}`), and it streams
//! the resumed state as a `values` event first. Under durability `sync` the checkpoint is
//! stored before the next step starts, which is why the repeat was only seen under `async`.
//! And a task whose update was published while its writes were still queued would run
//! again and be streamed twice, which is why updates wait for their writes.
//!
//! **How it is kept out.** Before the new worker publishes anything it reads what the run
//! already published ([`Replay::load`]), and drops
//! - a cached update equal to an update the run published (each published update
//!   absorbs one cached update; the metadata is not compared), until the resumed run's
//!   first freshly computed update; a cached update the client never saw is published
//!   without its metadata, as the update the dead worker would have sent;
//! - `values` events that repeat the published ones: the resumed run's first `values`
//!   event is looked up among them (the last equal one), and it and the events that
//!   follow it equal to the published ones, in order, are dropped; from the first that
//!   differs or goes past them, all are published. (A run resumed from an older stored
//!   checkpoint than the last published state repeats those states; none is sent twice.)
//!
//! Events of other modes pass.
//!
//! **What makes it exact.** A fresh update of the resumed run was never published: under
//! `async` the dead worker published a task's update only after the task's writes were
//! stored ([`crate::durable`]), and a task with stored writes is not run again. Under
//! `sync` writes are stored before the update is emitted. Not promised: under `exit`
//! nothing is stored before the end, so a run taken over starts again and the updates the
//! dead worker had published are sent again. Events of other modes (`custom`, `messages`, `tasks`, `debug`) of the step the dead
//! worker was in are sent again.

use serde_json::Value as Json;

/// The published events a taken-over run checks its replayed events against.
#[derive(Debug, Default)]
pub(crate) struct Replay {
    /// The published updates not yet matched, as `(event name, data)`.
    updates: Vec<(String, Json)>,
    /// Whether the resumed run may still replay updates (until its first fresh one).
    updates_replaying: bool,
    /// The published `values` events, per event name (subgraphs have their own).
    values: Vec<ValuesLog>,
}

/// The `values` events published under one name, and where the resumed run is in them.
#[derive(Debug)]
struct ValuesLog {
    name: String,
    published: Vec<Json>,
    /// The published event the resumed run's next `values` event repeats, if it repeats
    /// one; `None` before its first.
    next: Option<usize>,
    /// The resumed run went past what was published.
    done: bool,
}

/// What to do with one event of a taken-over run.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Publish it as it is.
    Publish,
    /// Publish this instead (a cached update without its metadata).
    PublishAs(Json),
    /// The client has it already.
    Drop,
}

impl Replay {
    /// A filter that publishes everything (a run's first attempt).
    pub(crate) fn off() -> Replay {
        Replay::default()
    }

    /// A filter for a run taken over, from the events it published: `(event name, data)`
    /// in order.
    pub(crate) fn load(published: impl IntoIterator<Item = (String, String)>) -> Replay {
        let mut replay = Replay {
            updates_replaying: true,
            ..Replay::default()
        };
        for (name, data) in published {
            let Ok(data) = serde_json::from_str::<Json>(&data) else {
                continue;
            };
            if is_mode(&name, "updates") {
                replay.updates.push((name, data));
            } else if is_mode(&name, "values") {
                match replay.values.iter_mut().find(|l| l.name == name) {
                    Some(log) => log.published.push(data),
                    None => replay.values.push(ValuesLog {
                        name,
                        published: vec![data],
                        next: None,
                        done: false,
                    }),
                }
            }
        }
        replay
    }

    /// Whether to publish event `name` with `data`.
    pub(crate) fn judge(&mut self, name: &str, data: &Json) -> Verdict {
        if is_mode(name, "values") {
            return self.judge_values(name, data);
        }
        if !self.updates_replaying || !is_mode(name, "updates") {
            return Verdict::Publish;
        }
        let Some(plain) = without_cached_marker(data) else {
            // A freshly computed update: the replay is over.
            self.updates_replaying = false;
            return Verdict::Publish;
        };
        match self
            .updates
            .iter()
            .position(|(n, v)| n == name && *v == plain)
        {
            Some(i) => {
                self.updates.remove(i);
                Verdict::Drop
            }
            None => Verdict::PublishAs(plain),
        }
    }

    /// The resumed run's `values` events repeat the published ones from the state it
    /// resumed at (the last published event equal to its first) for as long as they are
    /// equal; from the first that differs, or goes past the published ones, all are new.
    fn judge_values(&mut self, name: &str, data: &Json) -> Verdict {
        let Some(log) = self.values.iter_mut().find(|l| l.name == name) else {
            return Verdict::Publish;
        };
        if log.done {
            return Verdict::Publish;
        }
        let at = match log.next {
            None => log.published.iter().rposition(|v| v == data),
            Some(i) => (log.published.get(i) == Some(data)).then_some(i),
        };
        match at {
            Some(i) => {
                log.next = Some(i + 1);
                Verdict::Drop
            }
            None => {
                log.done = true;
                Verdict::Publish
            }
        }
    }
}

/// Whether `data` is a cached update (`"__metadata__": {"cached": true}`).
pub(crate) fn is_cached(data: &Json) -> bool {
    data.get("__metadata__")
        .and_then(|m| m.get("cached"))
        .and_then(Json::as_bool)
        .unwrap_or(false)
}

/// Whether event `name` (`mode` or `mode|ns...`) is of `mode`.
fn is_mode(name: &str, mode: &str) -> bool {
    name.split('|').next() == Some(mode)
}

/// A cached update without its `__metadata__` (`None` when `data` is not a cached update).
fn without_cached_marker(data: &Json) -> Option<Json> {
    if !is_cached(data) {
        return None;
    }
    let mut plain = data.as_object()?.clone();
    plain.shift_remove("__metadata__");
    Some(Json::Object(plain))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn published(events: &[(&str, Json)]) -> Vec<(String, String)> {
        events
            .iter()
            .map(|(n, d)| ((*n).to_owned(), d.to_string()))
            .collect()
    }

    fn cached(update: Json) -> Json {
        let mut m = update.as_object().cloned().unwrap_or_default();
        m.insert("__metadata__".into(), json!({"cached": true}));
        Json::Object(m)
    }

    #[test]
    fn a_first_attempt_publishes_everything() {
        let mut r = Replay::off();
        let v = json!({"a": 1});
        assert_eq!(r.judge("values", &v), Verdict::Publish);
        assert_eq!(r.judge("values", &v), Verdict::Publish);
        assert_eq!(
            r.judge("updates", &cached(json!({"one": {"a": 1}}))),
            Verdict::Publish
        );
    }

    #[test]
    fn a_takeover_drops_what_the_client_saw_and_keeps_what_it_did_not() {
        let mut r = Replay::load(published(&[
            ("values", json!({"a": 0})),
            ("updates", json!({"one": {"a": 1}})),
            ("custom", json!("hello")),
        ]));
        // The resumed state, as the client saw it last.
        assert_eq!(r.judge("values", &json!({"a": 0})), Verdict::Drop);
        // `one`'s update was published; `two`'s was not (its writes were stored only).
        assert_eq!(
            r.judge("updates", &cached(json!({"one": {"a": 1}}))),
            Verdict::Drop
        );
        assert_eq!(
            r.judge("updates", &cached(json!({"two": {"b": 2}}))),
            Verdict::PublishAs(json!({"two": {"b": 2}}))
        );
        assert_eq!(r.judge("custom", &json!("again")), Verdict::Publish);
        // A fresh update ends the replay of updates: later equal ones are new.
        assert_eq!(
            r.judge("updates", &json!({"three": {"c": 3}})),
            Verdict::Publish
        );
        assert_eq!(
            r.judge("updates", &cached(json!({"one": {"a": 1}}))),
            Verdict::Publish
        );
        // A state past the published ones is new, and so is everything after it.
        assert_eq!(r.judge("values", &json!({"a": 3})), Verdict::Publish);
        assert_eq!(r.judge("values", &json!({"a": 0})), Verdict::Publish);
    }

    #[test]
    fn each_published_update_absorbs_one_cached_update() {
        let mut r = Replay::load(published(&[("updates", json!({"one": {"a": 1}}))]));
        let again = cached(json!({"one": {"a": 1}}));
        assert_eq!(r.judge("updates", &again), Verdict::Drop);
        assert_eq!(
            r.judge("updates", &again),
            Verdict::PublishAs(json!({"one": {"a": 1}}))
        );
    }

    #[test]
    fn a_run_resumed_at_an_older_state_repeats_the_published_states_once() {
        // The dead worker published the states after steps 1 and 2, but only the
        // checkpoint of step 1 was stored.
        let mut r = Replay::load(published(&[
            ("values", json!({"a": 0})),
            ("values", json!({"a": 1})),
            ("values", json!({"a": 2})),
        ]));
        assert_eq!(r.judge("values", &json!({"a": 1})), Verdict::Drop);
        assert_eq!(r.judge("values", &json!({"a": 2})), Verdict::Drop);
        assert_eq!(r.judge("values", &json!({"a": 3})), Verdict::Publish);
        // A repeat of a step that went another way this time is new.
        let mut r = Replay::load(published(&[
            ("values", json!({"a": 0})),
            ("values", json!({"a": 1})),
        ]));
        assert_eq!(r.judge("values", &json!({"a": 0})), Verdict::Drop);
        assert_eq!(r.judge("values", &json!({"a": 5})), Verdict::Publish);
        assert_eq!(r.judge("values", &json!({"a": 1})), Verdict::Publish);
    }

    #[test]
    fn subgraph_events_match_by_their_own_name() {
        let mut r = Replay::load(published(&[("updates|sub:1", json!({"inner": {"x": 1}}))]));
        assert_eq!(
            r.judge("updates", &cached(json!({"inner": {"x": 1}}))),
            Verdict::PublishAs(json!({"inner": {"x": 1}}))
        );
        assert_eq!(
            r.judge("updates|sub:1", &cached(json!({"inner": {"x": 1}}))),
            Verdict::Drop
        );
    }
}
