//! `get_delta_channel_history` (docs/format.md#deltachannel): what a DeltaChannel is rebuilt from.
//! Not in
//! the Python suite; every saver has the operation (the trait provides a walk through
//! `get_tuple`), so these run with `get_tuple`.
//!
//! The threads are built by hand: a *snapshot* is a stored ext-7 `_DeltaSnapshot` value, a
//! step between snapshots stores a version for the channel but no value, and the channel's
//! writes are stored on the checkpoint each step started from.

use stategraph_checkpoint::{
    CheckpointConfig, CheckpointSaver, DeltaChannelHistory, Ext, PendingWrite, Value,
};

use crate::fixtures::{loop_step, root, uuid4, write, NewCheckpoint};
use crate::Failure;

fn snapshot(items: &[&str]) -> Value {
    Value::ext(Ext::DeltaSnapshot(list(items)))
}

fn list(items: &[&str]) -> Value {
    Value::list(items.iter().map(|s| Value::from(*s)).collect::<Vec<_>>())
}

/// `(task_id, value)` of each write, for messages.
fn shown(h: &DeltaChannelHistory) -> Vec<(String, Value)> {
    h.writes
        .iter()
        .map(|w: &PendingWrite| (w.task_id.clone(), w.value.clone()))
        .collect()
}

async fn history(
    saver: &dyn CheckpointSaver,
    config: &CheckpointConfig,
    channels: &[&str],
) -> Result<indexmap::IndexMap<String, DeltaChannelHistory>, Failure> {
    let channels: Vec<String> = channels.iter().map(|c| (*c).to_owned()).collect();
    Ok(saver.get_delta_channel_history(config, &channels).await?)
}

/// Puts `cp` as the child of `parent` (a stored config) in `thread`'s root namespace.
async fn child(
    saver: &dyn CheckpointSaver,
    thread: &str,
    parent: Option<&CheckpointConfig>,
    cp: NewCheckpoint,
    step: usize,
) -> Result<CheckpointConfig, Failure> {
    let mut cfg = root(thread);
    cfg.checkpoint_id = parent.and_then(|p| p.checkpoint_id.clone());
    cp.put(saver, &cfg, &loop_step(step)).await
}

/// A chain snapshot → delta → delta → target: the seed is the snapshot, the writes are
/// those stored on the snapshot and on each later ancestor, oldest first; the target's own
/// writes are not part of it.
pub async fn seed_and_writes_oldest_first(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let c1 = child(
        saver,
        &thread,
        None,
        NewCheckpoint::new().value("m", snapshot(&["a"]), 1),
        0,
    )
    .await?;
    saver
        .put_writes(&c1, &[write("m", list(&["b"]))], "t1", "")
        .await?;
    let c2 = child(
        saver,
        &thread,
        Some(&c1),
        NewCheckpoint::new().unstored("m", 2),
        1,
    )
    .await?;
    saver
        .put_writes(
            &c2,
            &[write("m", list(&["c"])), write("m", list(&["d"]))],
            "t2",
            "",
        )
        .await?;
    let c3 = child(
        saver,
        &thread,
        Some(&c2),
        NewCheckpoint::new().unstored("m", 3),
        2,
    )
    .await?;
    saver
        .put_writes(&c3, &[write("m", list(&["later"]))], "t3", "")
        .await?;
    let got = history(saver, &c3, &["m"]).await?;
    let m = got.get("m").ok_or_else(|| Failure::new("no entry for m"))?;
    ensure_eq!(m.seed, Some(snapshot(&["a"])), "seed");
    ensure_eq!(
        shown(m),
        vec![
            ("t1".to_owned(), list(&["b"])),
            ("t2".to_owned(), list(&["c"])),
            ("t2".to_owned(), list(&["d"])),
        ],
        "writes"
    );
    Ok(())
}

/// Without a stored value anywhere, the walk reaches the root: no seed, every write.
pub async fn no_seed_walks_to_the_root(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let c1 = child(saver, &thread, None, NewCheckpoint::new(), 0).await?;
    saver
        .put_writes(&c1, &[write("m", list(&["a"]))], "t1", "")
        .await?;
    let c2 = child(
        saver,
        &thread,
        Some(&c1),
        NewCheckpoint::new().unstored("m", 2),
        1,
    )
    .await?;
    saver
        .put_writes(&c2, &[write("m", list(&["b"]))], "t2", "")
        .await?;
    let c3 = child(
        saver,
        &thread,
        Some(&c2),
        NewCheckpoint::new().unstored("m", 3),
        2,
    )
    .await?;
    let got = history(saver, &c3, &["m"]).await?;
    let m = got.get("m").ok_or_else(|| Failure::new("no entry for m"))?;
    ensure_eq!(m.seed, None, "seed");
    ensure_eq!(
        shown(m),
        vec![
            ("t1".to_owned(), list(&["a"])),
            ("t2".to_owned(), list(&["b"]))
        ],
        "writes"
    );
    Ok(())
}

/// A branch reads only its own ancestors: the writes stored on a sibling branch's
/// checkpoints are not in its history, even though their ids sort in between.
pub async fn follows_the_parent_chain(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let c1 = child(
        saver,
        &thread,
        None,
        NewCheckpoint::new().value("m", snapshot(&["a"]), 1),
        0,
    )
    .await?;
    saver
        .put_writes(&c1, &[write("m", list(&["b"]))], "t1", "")
        .await?;
    let left = child(
        saver,
        &thread,
        Some(&c1),
        NewCheckpoint::new().unstored("m", 2),
        1,
    )
    .await?;
    saver
        .put_writes(&left, &[write("m", list(&["left"]))], "tl", "")
        .await?;
    let left2 = child(
        saver,
        &thread,
        Some(&left),
        NewCheckpoint::new().unstored("m", 3),
        2,
    )
    .await?;
    let right = child(
        saver,
        &thread,
        Some(&c1),
        NewCheckpoint::new().unstored("m", 4),
        1,
    )
    .await?;
    saver
        .put_writes(&right, &[write("m", list(&["right"]))], "tr", "")
        .await?;
    let right2 = child(
        saver,
        &thread,
        Some(&right),
        NewCheckpoint::new().unstored("m", 5),
        2,
    )
    .await?;
    let got = history(saver, &right2, &["m"]).await?;
    ensure_eq!(
        got.get("m").map(shown),
        Some(vec![
            ("t1".to_owned(), list(&["b"])),
            ("tr".to_owned(), list(&["right"]))
        ]),
        "right branch"
    );
    let got = history(saver, &left2, &["m"]).await?;
    ensure_eq!(
        got.get("m").map(shown),
        Some(vec![
            ("t1".to_owned(), list(&["b"])),
            ("tl".to_owned(), list(&["left"]))
        ]),
        "left branch"
    );
    Ok(())
}

/// Each channel stops at its own nearest stored value: a channel snapshotted recently
/// gets few writes while another walks further back; writes to other channels are left
/// out; a channel never written gets an empty entry.
pub async fn each_channel_stops_at_its_seed(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let c1 = child(
        saver,
        &thread,
        None,
        NewCheckpoint::new().value("a", snapshot(&["a0"]), 1),
        0,
    )
    .await?;
    saver
        .put_writes(
            &c1,
            &[
                write("a", list(&["a1"])),
                write("b", list(&["b1"])),
                write("x", 1),
            ],
            "t1",
            "",
        )
        .await?;
    let c2 = child(
        saver,
        &thread,
        Some(&c1),
        NewCheckpoint::new()
            .unstored("a", 2)
            .value("b", snapshot(&["b0", "b1"]), 2),
        1,
    )
    .await?;
    saver
        .put_writes(
            &c2,
            &[write("a", list(&["a2"])), write("b", list(&["b2"]))],
            "t2",
            "",
        )
        .await?;
    let c3 = child(
        saver,
        &thread,
        Some(&c2),
        NewCheckpoint::new().unstored("a", 3).unstored("b", 3),
        2,
    )
    .await?;
    let got = history(saver, &c3, &["a", "b", "never"]).await?;
    let entry = |k: &str| got.get(k).cloned().unwrap_or_default();
    ensure_eq!(entry("a").seed, Some(snapshot(&["a0"])), "seed of a");
    ensure_eq!(
        shown(&entry("a")),
        vec![
            ("t1".to_owned(), list(&["a1"])),
            ("t2".to_owned(), list(&["a2"]))
        ],
        "writes of a"
    );
    ensure_eq!(entry("b").seed, Some(snapshot(&["b0", "b1"])), "seed of b");
    ensure_eq!(
        shown(&entry("b")),
        vec![("t2".to_owned(), list(&["b2"]))],
        "writes of b"
    );
    ensure_eq!(
        entry("never"),
        DeltaChannelHistory::default(),
        "never written"
    );
    ensure_eq!(got.len(), 3, "one entry per requested channel");
    Ok(())
}

/// Within one checkpoint the writes come in `(task_path, task_id, idx)` order, whatever
/// order the tasks stored them in.
pub async fn writes_in_task_path_order(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let c1 = child(
        saver,
        &thread,
        None,
        NewCheckpoint::new().value("m", snapshot(&[]), 1),
        0,
    )
    .await?;
    saver
        .put_writes(
            &c1,
            &[write("m", list(&["z"]))],
            "task-b",
            "~__pregel_pull, z",
        )
        .await?;
    saver
        .put_writes(
            &c1,
            &[write("m", list(&["a"]))],
            "task-a",
            "~__pregel_pull, b",
        )
        .await?;
    saver
        .put_writes(
            &c1,
            &[write("m", list(&["y"])), write("m", list(&["y2"]))],
            "task-c",
            "~__pregel_pull, b",
        )
        .await?;
    let c2 = child(
        saver,
        &thread,
        Some(&c1),
        NewCheckpoint::new().unstored("m", 2),
        1,
    )
    .await?;
    let got = history(saver, &c2, &["m"]).await?;
    ensure_eq!(
        got.get("m").map(shown),
        Some(vec![
            ("task-a".to_owned(), list(&["a"])),
            ("task-c".to_owned(), list(&["y"])),
            ("task-c".to_owned(), list(&["y2"])),
            ("task-b".to_owned(), list(&["z"])),
        ]),
        "order"
    );
    Ok(())
}

/// A config without a checkpoint id addresses the thread's latest checkpoint; an unknown
/// thread or id gives an empty entry per channel.
pub async fn latest_and_unknown_targets(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let c1 = child(
        saver,
        &thread,
        None,
        NewCheckpoint::new().value("m", snapshot(&["a"]), 1),
        0,
    )
    .await?;
    saver
        .put_writes(&c1, &[write("m", list(&["b"]))], "t1", "")
        .await?;
    child(
        saver,
        &thread,
        Some(&c1),
        NewCheckpoint::new().unstored("m", 2),
        1,
    )
    .await?;
    let got = history(saver, &root(&thread), &["m"]).await?;
    let m = got.get("m").cloned().unwrap_or_default();
    ensure_eq!(m.seed, Some(snapshot(&["a"])), "latest: seed");
    ensure_eq!(
        shown(&m),
        vec![("t1".to_owned(), list(&["b"]))],
        "latest: writes"
    );
    let got = history(saver, &root(&uuid4()), &["m"]).await?;
    ensure_eq!(
        got.get("m").cloned(),
        Some(DeltaChannelHistory::default()),
        "unknown thread"
    );
    let mut unknown = root(&thread);
    unknown.checkpoint_id = Some(crate::fixtures::checkpoint_id());
    let got = history(saver, &unknown, &["m"]).await?;
    ensure_eq!(
        got.get("m").cloned(),
        Some(DeltaChannelHistory::default()),
        "unknown id"
    );
    Ok(())
}

/// `prune(KeepLatest)` never loses a DeltaChannel's value: a saver either keeps the
/// ancestors the latest checkpoint's delta channels are rebuilt from (their seed and the
/// writes after it), removing the checkpoints older than those, or refuses the thread with
/// an error and leaves it as it was (LangGraph's Postgres saver refuses).
pub async fn prune_keeps_what_the_chain_needs(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let old = child(
        saver,
        &thread,
        None,
        NewCheckpoint::new().value("m", snapshot(&["x"]), 1),
        0,
    )
    .await?;
    saver
        .put_writes(&old, &[write("m", list(&["a"]))], "t0", "")
        .await?;
    let seed = child(
        saver,
        &thread,
        Some(&old),
        NewCheckpoint::new().value("m", snapshot(&["a"]), 2),
        1,
    )
    .await?;
    saver
        .put_writes(&seed, &[write("m", list(&["b"]))], "t1", "")
        .await?;
    let mid = child(
        saver,
        &thread,
        Some(&seed),
        NewCheckpoint::new().unstored("m", 3),
        2,
    )
    .await?;
    saver
        .put_writes(&mid, &[write("m", list(&["c"]))], "t2", "")
        .await?;
    let mut md = loop_step(3);
    md.extra.insert(
        "counters_since_delta_snapshot".into(),
        stategraph_checkpoint::map! { "m" => Value::list(vec![Value::Int(2), Value::Int(2)]) },
    );
    let mut cfg = root(&thread);
    cfg.checkpoint_id = mid.checkpoint_id.clone();
    let latest = NewCheckpoint::new()
        .unstored("m", 4)
        .put(saver, &cfg, &md)
        .await?;
    let before = history(saver, &latest, &["m"]).await?;
    ensure_eq!(
        before.get("m").map(shown).unwrap_or_default().len(),
        2,
        "the history before pruning"
    );
    let pruned = saver
        .prune(
            std::slice::from_ref(&thread),
            stategraph_checkpoint::PruneStrategy::KeepLatest,
        )
        .await;
    let after = history(saver, &root(&thread), &["m"]).await?;
    ensure_eq!(after, before, "the delta history after prune ({pruned:?})");
    if pruned.is_ok() {
        ensure!(
            saver.get_tuple(&old).await?.is_none(),
            "the checkpoint older than the seed is pruned"
        );
    }
    Ok(())
}
