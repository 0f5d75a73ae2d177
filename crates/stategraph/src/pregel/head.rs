//! The head a run leaves in its saver: the newest checkpoint of the run's namespace and the
//! writes stored against it, mirrored in memory as the run's writer hands them to the
//! saver, so that the caller can build the thread's final state without reading it back.
//!
//! The mirror follows what every saver stores (`CheckpointSaver::put_writes`): a write is
//! keyed by `(task_id, idx)`, `idx` being its position in the call or, for the reserved
//! channels, their fixed negative index; a normal write already stored stays (a repeat is
//! identical, or a fenced saver refuses it), a reserved one is replaced. The metadata is
//! what a saver stores for the put ([`CheckpointMetadata::for_put`]). Nothing here
//! depends on the saver, so the head reads the same on every one.

use std::sync::Arc;

use stategraph_checkpoint::{
    write_index, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple, PendingWrite,
    Value,
};

/// The newest checkpoint a run stored (or loaded) and the writes stored against it.
pub(crate) struct Head {
    /// The checkpoint, with its channel values.
    checkpoint: Arc<Checkpoint>,
    /// Its metadata as stored.
    metadata: CheckpointMetadata,
    /// Its parent's id.
    parent: Option<String>,
    /// `(task_id, idx, channel, value)` as stored.
    writes: Vec<(String, i64, String, Value)>,
}

impl Head {
    /// The head a run loaded: the saver's tuple, before the run takes its values.
    pub(crate) fn loaded(tuple: &CheckpointTuple) -> Head {
        let mut head = Head {
            checkpoint: Arc::new(tuple.checkpoint.clone()),
            metadata: tuple.metadata.clone(),
            parent: tuple
                .parent_config
                .as_ref()
                .and_then(|p| p.checkpoint_id.clone()),
            writes: Vec::with_capacity(tuple.pending_writes.len()),
        };
        let mut position = 0usize;
        let mut task: Option<&str> = None;
        for w in &tuple.pending_writes {
            // A saver returns each task's writes together, in index order.
            if task != Some(w.task_id.as_str()) {
                task = Some(w.task_id.as_str());
                position = 0;
            }
            let idx = write_index(&w.channel, position);
            if idx >= 0 {
                position += 1;
            }
            head.writes
                .push((w.task_id.clone(), idx, w.channel.clone(), w.value.clone()));
        }
        head
    }

    /// The head after a put of `checkpoint` with `config` (whose `checkpoint_id` is the
    /// parent): no writes yet.
    pub(crate) fn put(
        checkpoint: Arc<Checkpoint>,
        metadata: &CheckpointMetadata,
        config: &CheckpointConfig,
    ) -> Head {
        Head {
            checkpoint,
            metadata: metadata.for_put(config),
            parent: config.checkpoint_id.clone(),
            writes: Vec::new(),
        }
    }

    /// The id of the head checkpoint.
    pub(crate) fn id(&self) -> &str {
        &self.checkpoint.id
    }

    /// Records a `put_writes` of `task_id` against the head, as a saver stores it.
    pub(crate) fn record(&mut self, task_id: &str, writes: &[(String, Value)]) {
        for (position, (channel, value)) in writes.iter().enumerate() {
            let idx = write_index(channel, position);
            let stored = self
                .writes
                .iter_mut()
                .find(|w| w.0 == task_id && w.1 == idx);
            match stored {
                Some(_) if idx >= 0 => {}
                Some(w) => {
                    w.2 = channel.clone();
                    w.3 = value.clone();
                }
                None => self
                    .writes
                    .push((task_id.to_owned(), idx, channel.clone(), value.clone())),
            }
        }
    }

    /// The head as the saver returns it for `(thread, ns)`: the writes of each task
    /// together, in index order.
    pub(crate) fn into_tuple(self, thread: &str, ns: &str) -> CheckpointTuple {
        let mut writes = self.writes;
        writes.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let checkpoint = Arc::try_unwrap(self.checkpoint).unwrap_or_else(|c| (*c).clone());
        CheckpointTuple {
            config: CheckpointConfig::for_checkpoint(thread, ns, checkpoint.id.clone()),
            parent_config: self
                .parent
                .map(|p| CheckpointConfig::for_checkpoint(thread, ns, p)),
            checkpoint,
            metadata: self.metadata,
            pending_writes: writes
                .into_iter()
                .map(|(task_id, _, channel, value)| PendingWrite {
                    task_id,
                    channel,
                    value,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head() -> Head {
        Head::put(
            Arc::new(Checkpoint::empty("c1", "ts")),
            &CheckpointMetadata::default(),
            &CheckpointConfig::thread("t"),
        )
    }

    fn channels(t: &CheckpointTuple) -> Vec<(&str, &str)> {
        t.pending_writes
            .iter()
            .map(|w| (w.task_id.as_str(), w.channel.as_str()))
            .collect()
    }

    #[test]
    fn a_normal_write_stays_and_a_reserved_one_is_replaced() {
        let mut h = head();
        h.record("a", &[("x".into(), Value::from(1))]);
        h.record("a", &[("x".into(), Value::from(2))]);
        h.record("a", &[("__interrupt__".into(), Value::from(1))]);
        h.record("a", &[("__interrupt__".into(), Value::from(2))]);
        let t = h.into_tuple("t", "");
        let values: Vec<&Value> = t.pending_writes.iter().map(|w| &w.value).collect();
        assert_eq!(values, [&Value::from(2), &Value::from(1)]);
        assert_eq!(channels(&t), [("a", "__interrupt__"), ("a", "x")]);
    }

    #[test]
    fn a_loaded_head_keeps_its_writes_and_their_indexes() {
        let mut h = head();
        h.record(
            "b",
            &[("y".into(), Value::from(1)), ("z".into(), Value::Nil)],
        );
        h.record("a", &[("x".into(), Value::from(1))]);
        let loaded = Head::loaded(&h.into_tuple("t", ""));
        let mut again = Head::loaded(&loaded.into_tuple("t", ""));
        // A repeat of b's second write is the stored one; a third is new.
        again.record(
            "b",
            &[
                ("y".into(), Value::from(9)),
                ("z".into(), Value::from(9)),
                ("w".into(), Value::from(3)),
            ],
        );
        let t = again.into_tuple("t", "");
        assert_eq!(
            channels(&t),
            [("a", "x"), ("b", "y"), ("b", "z"), ("b", "w")]
        );
        assert_eq!(t.pending_writes[2].value, Value::Nil);
        assert_eq!(t.config.checkpoint_id.as_deref(), Some("c1"));
        assert_eq!(t.parent_config, None);
    }
}
