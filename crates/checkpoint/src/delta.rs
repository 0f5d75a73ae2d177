//! What a saver returns to rebuild a DeltaChannel's value (docs/format.md#deltachannel):
//! [`DeltaChannelHistory`], and the [`Collector`] every saver's walk of the parent chain
//! fills (the walk through `get_tuple` is `saver::history_by_walk`).
//!
//! A DeltaChannel stores its value only now and then (a `_DeltaSnapshot`, msgpack ext 7);
//! in between, only the writes it received are stored, as pending writes of the checkpoint
//! each step started from. The value at a checkpoint is therefore the nearest ancestor's
//! stored value (the *seed*) with every later write on the parent chain replayed over it.
//! The walk starts at the target's parent: the target's own value, when stored, is read
//! directly, and the target's own writes belong to the step after it.

use indexmap::IndexMap;

use crate::checkpoint::PendingWrite;
use crate::value::Value;

/// The history of one channel up to a checkpoint (LangGraph's `DeltaChannelHistory`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeltaChannelHistory {
    /// The value stored by the nearest ancestor that stored one (a `_DeltaSnapshot` ext,
    /// or a plain value left by a thread written before the key became a DeltaChannel).
    /// `None` when the walk reached the root without one: the channel starts empty.
    pub seed: Option<Value>,
    /// The channel's writes between the seed and the target, oldest first; within one
    /// checkpoint in `(task_path, task_id, idx)` order.
    pub writes: Vec<PendingWrite>,
}

/// One empty history per requested channel, in the order asked: what every saver returns
/// for a channel before (or without) finding its seed and writes.
pub fn empty_histories(channels: &[String]) -> IndexMap<String, DeltaChannelHistory> {
    channels
        .iter()
        .map(|c| (c.clone(), DeltaChannelHistory::default()))
        .collect()
}

/// Accumulates a newest-first walk of the parent chain into per-channel histories: the
/// building block of every saver's `get_delta_channel_history`.
#[derive(Debug)]
pub struct Collector {
    /// Channels still looking for their seed.
    active: Vec<String>,
    /// Per channel: the writes of each visited checkpoint, newest checkpoint first.
    writes: IndexMap<String, Vec<Vec<PendingWrite>>>,
    seeds: IndexMap<String, Value>,
}

impl Collector {
    /// A walk for `channels`, none of them seeded yet.
    pub fn new(channels: &[String]) -> Collector {
        Collector {
            active: channels.to_vec(),
            writes: channels.iter().map(|c| (c.clone(), Vec::new())).collect(),
            seeds: IndexMap::new(),
        }
    }

    /// True when every channel found its seed: older ancestors add nothing.
    pub fn done(&self) -> bool {
        self.active.is_empty()
    }

    /// The channels still looking for their seed.
    pub fn active(&self) -> &[String] {
        &self.active
    }

    /// Visits the next (older) checkpoint of the chain: its writes, in stored order, and
    /// `stored(channel)`, the value it stores for a channel, if any.
    pub fn visit(
        &mut self,
        writes: Vec<PendingWrite>,
        mut stored: impl FnMut(&str) -> Option<Value>,
    ) {
        let mut per: IndexMap<&str, Vec<PendingWrite>> = IndexMap::new();
        for w in writes {
            if let Some(c) = self.active.iter().find(|c| **c == w.channel) {
                per.entry(c.as_str()).or_default().push(w);
            }
        }
        let mut per: IndexMap<String, Vec<PendingWrite>> =
            per.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let mut still = Vec::with_capacity(self.active.len());
        for c in std::mem::take(&mut self.active) {
            if let Some(ws) = per.swap_remove(&c) {
                if let Some(list) = self.writes.get_mut(&c) {
                    list.push(ws);
                }
            }
            match stored(&c) {
                Some(seed) => {
                    self.seeds.insert(c, seed);
                }
                None => still.push(c),
            }
        }
        self.active = still;
    }

    /// Writes the histories into `out` (oldest writes first).
    pub fn finish(mut self, out: &mut IndexMap<String, DeltaChannelHistory>) {
        for (c, entry) in out.iter_mut() {
            entry.seed = self.seeds.swap_remove(c);
            if let Some(per) = self.writes.swap_remove(c) {
                entry.writes = per.into_iter().rev().flatten().collect();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(task: &str, ch: &str, v: i64) -> PendingWrite {
        PendingWrite {
            task_id: task.into(),
            channel: ch.into(),
            value: Value::Int(v),
        }
    }

    #[test]
    fn collector_orders_oldest_first_and_stops_per_channel_at_its_seed() {
        let chans = vec!["a".to_owned(), "b".to_owned()];
        let mut c = Collector::new(&chans);
        // Newest ancestor: writes to both, no seeds.
        c.visit(
            vec![w("t1", "a", 3), w("t2", "b", 30), w("t3", "a", 4)],
            |_| None,
        );
        // Older: seed for a, writes for both.
        c.visit(vec![w("t0", "a", 2), w("t0", "b", 20)], |ch| {
            (ch == "a").then_some(Value::Int(1))
        });
        assert!(!c.done());
        // Oldest: a already seeded, so its write here is ignored.
        c.visit(vec![w("x", "a", 99), w("x", "b", 10)], |ch| {
            (ch == "b").then_some(Value::Int(0))
        });
        assert!(c.done());
        let mut out = empty_histories(&chans);
        c.finish(&mut out);
        let vals = |h: &DeltaChannelHistory| -> Vec<Value> {
            h.writes.iter().map(|w| w.value.clone()).collect()
        };
        assert_eq!(out["a"].seed, Some(Value::Int(1)));
        assert_eq!(
            vals(&out["a"]),
            vec![Value::Int(2), Value::Int(3), Value::Int(4)]
        );
        assert_eq!(out["b"].seed, Some(Value::Int(0)));
        assert_eq!(
            vals(&out["b"]),
            vec![Value::Int(10), Value::Int(20), Value::Int(30)]
        );
    }
}
