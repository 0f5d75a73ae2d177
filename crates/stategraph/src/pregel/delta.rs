//! DeltaChannel bookkeeping of the run loop and the state API (docs/format.md#deltachannel):
//! rebuilding a
//! delta channel from its history when a checkpoint is loaded, the per-channel counters
//! kept in metadata (`counters_since_delta_snapshot`), which channels store a snapshot at
//! a checkpoint, and the version bumps a snapshot of an unchanged channel needs
//! (recorded under `versions_seen["__snapshot_bumps__"]`).
//!
//! Everything here but [`load_channels`] is pure: the loop calls it with its state.

use std::collections::BTreeSet;

use indexmap::IndexMap;
use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, Value,
};

use super::algo::channels_from_checkpoint;
use super::graph::PregelGraph;
use crate::channels::{max_supersteps_since_snapshot, Channels};
use crate::error::{Error, Result};

/// The metadata key of the counters.
pub const COUNTERS_KEY: &str = "counters_since_delta_snapshot";

/// The `versions_seen` entry that records snapshot bumps.
pub const SNAPSHOT_BUMPS: &str = "__snapshot_bumps__";

/// Per delta channel: `(updates, supersteps)` since its last snapshot.
pub type Counters = IndexMap<String, (i64, i64)>;

/// True when the graph has at least one DeltaChannel.
pub fn has_delta_channels(graph: &PregelGraph) -> bool {
    graph
        .channels
        .values()
        .any(|c| c.delta_snapshot_frequency().is_some())
}

/// True when `channel` is a DeltaChannel of `graph`.
pub fn is_delta(graph: &PregelGraph, channel: &str) -> bool {
    graph
        .channels
        .get(channel)
        .is_some_and(|c| c.delta_snapshot_frequency().is_some())
}

/// The channels whose value at `checkpoint` must be rebuilt from history: a DeltaChannel
/// (or a reducer channel that was one when the thread was written) that has a version but
/// no stored value. A channel without a version was never written and is simply empty.
pub fn channels_to_replay(graph: &PregelGraph, checkpoint: &Checkpoint) -> Vec<String> {
    graph
        .channels
        .iter()
        .filter(|(k, spec)| {
            matches!(spec.kind(), "DeltaChannel" | "BinaryOperatorAggregate")
                && checkpoint.channel_versions.contains_key(*k)
                && !checkpoint.channel_values.contains_key(*k)
        })
        .map(|(k, _)| k.clone())
        .collect()
}

/// Builds the live channels of `checkpoint`, rebuilding delta channels from the history
/// `saver` returns for `config` (the config addressing `checkpoint`). Without a saver, a
/// channel that needs its history is an error (LangGraph raises the same).
pub async fn load_channels(
    graph: &PregelGraph,
    checkpoint: &mut Checkpoint,
    saver: Option<&dyn CheckpointSaver>,
    config: &CheckpointConfig,
) -> Result<Channels> {
    let replay = channels_to_replay(graph, checkpoint);
    let histories = match (replay.is_empty(), saver) {
        (true, _) => IndexMap::new(),
        (false, Some(saver)) => {
            let mut cfg = config.clone();
            cfg.checkpoint_id = Some(checkpoint.id.clone());
            saver.get_delta_channel_history(&cfg, &replay).await?
        }
        (false, None) => {
            return Err(Error::InvalidUpdate(format!(
                "DeltaChannel {replay:?} has history to replay but no checkpointer to read it"
            )))
        }
    };
    let mut channels = channels_from_checkpoint(graph, checkpoint)?;
    for (k, history) in histories {
        let Some(spec) = graph.channels.get(&k) else {
            continue;
        };
        let writes = history.writes.into_iter().map(|w| w.value).collect();
        let ch = spec
            .from_history(history.seed, writes)
            .map_err(|e| Error::InvalidUpdate(format!("At key '{k}': {e}")))?;
        channels.insert(k, ch);
    }
    Ok(channels)
}

/// The counters stored in `metadata` (absent or malformed entries count as zero).
pub fn read_counters(metadata: &CheckpointMetadata) -> Counters {
    let mut out = Counters::new();
    if let Some(Value::Map(m)) = metadata.extra.get(COUNTERS_KEY) {
        for (k, v) in m.iter() {
            let (Some(k), Value::List(pair)) = (k.as_str(), v) else {
                continue;
            };
            let num = |i: usize| match pair.get(i) {
                Some(Value::Int(x)) => *x,
                Some(Value::UInt(x)) => i64::try_from(*x).unwrap_or(i64::MAX),
                _ => 0,
            };
            out.insert(k.to_owned(), (num(0), num(1)));
        }
    }
    out
}

/// The counters after one more superstep: every delta channel's superstep count grows by
/// one, its update count when it was updated.
pub fn advance_counters(
    graph: &PregelGraph,
    previous: &Counters,
    updated: Option<&BTreeSet<String>>,
) -> Counters {
    graph
        .channels
        .iter()
        .filter(|(_, c)| c.delta_snapshot_frequency().is_some())
        .map(|(k, _)| {
            let (u, s) = previous.get(k).copied().unwrap_or((0, 0));
            let u = if updated.is_some_and(|x| x.contains(k)) {
                u + 1
            } else {
                u
            };
            (k.clone(), (u, s + 1))
        })
        .collect()
}

/// The delta channels due for a snapshot by their counters: `snapshot_frequency` updates
/// or the superstep bound. Only written channels (with a version) have one to store.
pub fn due_by_counters(
    channels: &Channels,
    counters: &Counters,
    versions: &ChannelVersions,
) -> BTreeSet<String> {
    let bound = i64::try_from(max_supersteps_since_snapshot()).unwrap_or(i64::MAX);
    channels
        .iter()
        .filter_map(|(k, ch)| {
            let freq = i64::try_from(ch.delta_snapshot_frequency()?).unwrap_or(i64::MAX);
            if !ch.is_available() || !versions.contains_key(k) {
                return None;
            }
            let (u, s) = counters.get(k).copied().unwrap_or((0, 0));
            (u >= freq || s >= bound).then(|| k.clone())
        })
        .collect()
}

/// Stores `counters` in `metadata`, the snapshotted channels reset, zero pairs dropped;
/// the key is removed when nothing is left.
pub fn write_counters(
    metadata: &mut CheckpointMetadata,
    mut counters: Counters,
    snapshotted: &BTreeSet<String>,
) {
    for k in snapshotted {
        counters.insert(k.clone(), (0, 0));
    }
    let mut map = stategraph_checkpoint::Map::new();
    for (k, (u, s)) in counters {
        if (u, s) != (0, 0) {
            map.insert(k.as_str(), Value::list(vec![Value::Int(u), Value::Int(s)]));
        }
    }
    if map.is_empty() {
        metadata.extra.shift_remove(COUNTERS_KEY);
    } else {
        metadata
            .extra
            .insert(COUNTERS_KEY.to_owned(), Value::Map(map));
    }
}

/// Stores a snapshot of each channel of `to_snapshot` in `checkpoint.channel_values` (in
/// channel order, among the other values). A channel whose version has not moved since the
/// last stored checkpoint (`stored`) gets a fresh version so that the saver stores the
/// blob; a channel never written gets its first one. Bumps are marked seen for the nodes
/// that had seen the old version (see [`mark_bumps_seen`]).
pub fn apply_snapshots(
    checkpoint: &mut Checkpoint,
    channels: &Channels,
    to_snapshot: &BTreeSet<String>,
    stored: &ChannelVersions,
    next_version: &dyn Fn(Option<&ChannelVersion>) -> ChannelVersion,
    trigger_to_nodes: &IndexMap<String, Vec<String>>,
) {
    if to_snapshot.is_empty() {
        return;
    }
    let mut bumped: Vec<(String, Option<ChannelVersion>, ChannelVersion)> = Vec::new();
    let mut values = IndexMap::with_capacity(checkpoint.channel_values.len() + to_snapshot.len());
    let mut old_values = std::mem::take(&mut checkpoint.channel_values);
    for (k, ch) in channels {
        if to_snapshot.contains(k) {
            let Some(snap) = ch.snapshot() else {
                continue;
            };
            match checkpoint.channel_versions.get(k).cloned() {
                None => {
                    let v = next_version(None);
                    checkpoint.channel_versions.insert(k.clone(), v.clone());
                    bumped.push((k.clone(), None, v));
                }
                Some(current) if stored.get(k) == Some(&current) => {
                    let v = next_version(Some(&current));
                    checkpoint.channel_versions.insert(k.clone(), v.clone());
                    bumped.push((k.clone(), Some(current), v));
                }
                Some(_) => {}
            }
            values.insert(k.clone(), snap);
        } else if let Some(v) = old_values.swap_remove(k) {
            values.insert(k.clone(), v);
        }
    }
    values.extend(old_values);
    checkpoint.channel_values = values;
    mark_bumps_seen(&mut checkpoint.versions_seen, &bumped, trigger_to_nodes);
}

/// Advances every node that had seen a bumped channel's old version to the new one (a
/// bump stores a snapshot; it is not a write, and must not trigger anyone), recording in
/// `versions_seen["__snapshot_bumps__"]` the new version under `"node|channel"` and the
/// version really read under `"node:channel"`. A channel bumped from no version also goes
/// to the nodes it triggers that never ran.
pub fn mark_bumps_seen(
    versions_seen: &mut IndexMap<String, ChannelVersions>,
    bumped: &[(String, Option<ChannelVersion>, ChannelVersion)],
    trigger_to_nodes: &IndexMap<String, Vec<String>>,
) {
    if bumped.is_empty() {
        return;
    }
    for (k, old, _) in bumped {
        if old.is_none() {
            for node in trigger_to_nodes.get(k).into_iter().flatten() {
                versions_seen.entry(node.clone()).or_default();
            }
        }
    }
    let mut marks = versions_seen
        .get(SNAPSHOT_BUMPS)
        .cloned()
        .unwrap_or_default();
    let nodes: Vec<String> = versions_seen
        .keys()
        .filter(|n| *n != SNAPSHOT_BUMPS)
        .cloned()
        .collect();
    for node in nodes {
        for (k, old, new) in bumped {
            let seen = versions_seen.get(&node).and_then(|s| s.get(k));
            if seen != old.as_ref() {
                continue;
            }
            let advanced = format!("{node}|{k}");
            let read = format!("{node}:{k}");
            if let Some(old) = old {
                if marks.get(&advanced) != Some(old) {
                    marks.insert(read, old.clone());
                }
            }
            marks.insert(advanced, new.clone());
            if let Some(s) = versions_seen.get_mut(&node) {
                s.insert(k.clone(), new.clone());
            }
        }
    }
    if !marks.is_empty() {
        versions_seen.insert(SNAPSHOT_BUMPS.to_owned(), marks);
    }
}

/// `versions_seen` as the nodes really read it: an entry a bump advanced goes back to the
/// version read, or away when the node never read one; the bump record is dropped.
pub fn versions_seen_without_bumps(
    versions_seen: &IndexMap<String, ChannelVersions>,
) -> IndexMap<String, ChannelVersions> {
    let Some(marks) = versions_seen.get(SNAPSHOT_BUMPS).filter(|m| !m.is_empty()) else {
        return versions_seen.clone();
    };
    let mut out = IndexMap::new();
    for (node, seen) in versions_seen {
        if node == SNAPSHOT_BUMPS {
            continue;
        }
        let mut s = ChannelVersions::default();
        for (k, v) in seen {
            let advanced = format!("{node}|{k}");
            let read = format!("{node}:{k}");
            if marks.get(&advanced) != Some(v) {
                s.insert(k.clone(), v.clone());
            } else if let Some(r) = marks.get(&read) {
                s.insert(k.clone(), r.clone());
            }
        }
        out.insert(node.clone(), s);
    }
    out
}

/// The delta channels among the channels of `writes`.
pub fn delta_channels_in<'a>(
    graph: &PregelGraph,
    writes: impl IntoIterator<Item = &'a str>,
) -> BTreeSet<String> {
    writes
        .into_iter()
        .filter(|c| is_delta(graph, c))
        .map(str::to_owned)
        .collect()
}

/// The delta channels that `writes` set with an overwrite (they snapshot at the next
/// checkpoint: replaying from an older snapshot would bring back what it threw away).
pub fn overwritten<'a>(
    graph: &PregelGraph,
    writes: impl IntoIterator<Item = (&'a str, &'a Value)>,
) -> BTreeSet<String> {
    writes
        .into_iter()
        .filter(|(c, v)| is_delta(graph, c) && crate::channels::is_overwrite(v))
        .map(|(c, _)| c.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::{Channel, DeltaChannel, LastValue};

    fn v(n: i64) -> ChannelVersion {
        ChannelVersion::Int(n)
    }

    fn channels(freq: u64) -> Channels {
        let mut c = Channels::default();
        let delta = DeltaChannel::from_pairwise(crate::reducers::add(), freq);
        c.insert("m".into(), delta.from_checkpoint(None).unwrap());
        c.insert("x".into(), Box::new(LastValue::new()) as Box<dyn Channel>);
        c
    }

    #[test]
    fn counters_round_trip_through_metadata_and_drop_zero_pairs() {
        let mut md = CheckpointMetadata::default();
        let counters: Counters = [("m".to_owned(), (2, 3)), ("n".to_owned(), (0, 0))]
            .into_iter()
            .collect();
        write_counters(&mut md, counters, &BTreeSet::new());
        let back = read_counters(&md);
        assert_eq!(back.get("m"), Some(&(2, 3)));
        assert_eq!(back.get("n"), None, "zero pairs are not stored");
        let snapped: BTreeSet<String> = ["m".to_owned()].into_iter().collect();
        write_counters(&mut md, back, &snapped);
        assert!(
            md.extra.get(COUNTERS_KEY).is_none(),
            "nothing left: key removed"
        );
    }

    #[test]
    fn snapshots_are_due_by_updates_or_by_the_superstep_bound() {
        let ch = channels(3);
        let versions: ChannelVersions = [("m".to_owned(), v(1))].into_iter().collect();
        let due = |u, s| {
            let counters: Counters = [("m".to_owned(), (u, s))].into_iter().collect();
            due_by_counters(&ch, &counters, &versions)
        };
        assert!(due(2, 2).is_empty());
        assert_eq!(due(3, 3).len(), 1, "snapshot_frequency updates");
        let bound = i64::try_from(max_supersteps_since_snapshot()).unwrap();
        assert_eq!(due(0, bound).len(), 1, "the superstep bound");
        let counters: Counters = [("m".to_owned(), (9, 9))].into_iter().collect();
        assert!(
            due_by_counters(&ch, &counters, &ChannelVersions::default()).is_empty(),
            "a channel never written has nothing to store"
        );
    }

    #[test]
    fn a_bump_advances_readers_and_can_be_undone() {
        let mut seen: IndexMap<String, ChannelVersions> = IndexMap::new();
        seen.insert("a".into(), [("m".to_owned(), v(2))].into_iter().collect());
        seen.insert("b".into(), [("m".to_owned(), v(1))].into_iter().collect());
        let original = seen.clone();
        mark_bumps_seen(
            &mut seen,
            &[("m".into(), Some(v(2)), v(3))],
            &IndexMap::new(),
        );
        assert_eq!(
            seen["a"]["m"],
            v(3),
            "the reader of the old version is advanced"
        );
        assert_eq!(seen["b"]["m"], v(1), "an older reader is not");
        let marks = &seen[SNAPSHOT_BUMPS];
        assert_eq!(marks.get("a|m"), Some(&v(3)));
        assert_eq!(marks.get("a:m"), Some(&v(2)));
        assert_eq!(versions_seen_without_bumps(&seen), original);
    }

    #[test]
    fn applying_a_snapshot_bumps_an_unmoved_version_and_keeps_channel_order() {
        let mut ch = channels(3);
        ch.get_mut("m")
            .unwrap()
            .update(vec![Value::list(vec![Value::Int(1)])])
            .unwrap();
        let mut cp = Checkpoint::empty("id", "ts");
        cp.channel_versions.insert("m".into(), v(2));
        cp.channel_versions.insert("x".into(), v(2));
        cp.channel_values.insert("x".into(), Value::Int(7));
        let stored: ChannelVersions = cp.channel_versions.clone();
        let next = |c: Option<&ChannelVersion>| {
            v(c.map_or(0, |c| {
                if let ChannelVersion::Int(n) = c {
                    *n
                } else {
                    0
                }
            }) + 1)
        };
        let to: BTreeSet<String> = ["m".to_owned()].into_iter().collect();
        apply_snapshots(&mut cp, &ch, &to, &stored, &next, &IndexMap::new());
        assert_eq!(
            cp.channel_versions["m"],
            v(3),
            "bumped: the saver stores new versions only"
        );
        let keys: Vec<&String> = cp.channel_values.keys().collect();
        assert_eq!(keys, ["m", "x"], "channel order");
        assert!(
            matches!(&cp.channel_values["m"], Value::Ext(e) if matches!(**e, stategraph_checkpoint::Ext::DeltaSnapshot(_)))
        );
    }
}
