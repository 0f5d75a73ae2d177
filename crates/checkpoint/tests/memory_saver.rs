//! Focused tests of `MemorySaver`: the put_writes conflict rule, reads, list filters,
//! deletes that really remove writes and blobs, prune, copy, and concurrent writers.

use std::collections::BTreeSet;
use std::sync::Arc;

use stategraph_checkpoint::memory::MemoryLayout;
use stategraph_checkpoint::serde::Typed;
use stategraph_checkpoint::version_gen::VersionGenerator;
use stategraph_checkpoint::{
    Capabilities, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig,
    CheckpointMetadata, CheckpointSaver, CheckpointSource, Error, ListOptions, MemorySaver,
    PruneStrategy, Value,
};

fn id(n: u32) -> String {
    format!("1ef00000-0000-6000-8000-{n:012}")
}

fn v(n: i64) -> ChannelVersion {
    ChannelVersion::Str(format!("{n:032}.0.5"))
}

/// A checkpoint with the given channel values, all at the given versions.
fn checkpoint(n: u32, values: &[(&str, Value, i64)]) -> Checkpoint {
    let mut cp = Checkpoint::empty(id(n), "2025-01-01T00:00:00+00:00");
    for (channel, value, version) in values {
        cp.channel_values
            .insert((*channel).to_owned(), value.clone());
        cp.channel_versions
            .insert((*channel).to_owned(), v(*version));
    }
    cp
}

fn versions(pairs: &[(&str, i64)]) -> ChannelVersions {
    pairs
        .iter()
        .map(|(c, n)| ((*c).to_owned(), v(*n)))
        .collect()
}

fn md(step: i64) -> CheckpointMetadata {
    CheckpointMetadata::new(CheckpointSource::Loop, step)
}

/// Puts checkpoint `n` on `(thread, ns)` with `parent`, storing every channel as new.
async fn put(
    saver: &MemorySaver,
    thread: &str,
    ns: &str,
    parent: Option<u32>,
    cp: &Checkpoint,
    metadata: CheckpointMetadata,
) -> CheckpointConfig {
    let mut config = CheckpointConfig::thread(thread).with_ns(ns);
    config.checkpoint_id = parent.map(id);
    let new_versions = cp.channel_versions.clone();
    saver
        .put(&config, cp, &metadata, &new_versions)
        .await
        .expect("put")
}

fn at(thread: &str, ns: &str, n: u32) -> CheckpointConfig {
    CheckpointConfig::for_checkpoint(thread, ns, id(n))
}

fn writes(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
    pairs
        .iter()
        .map(|(c, v)| ((*c).to_owned(), v.clone()))
        .collect()
}

async fn pending(saver: &MemorySaver, config: &CheckpointConfig) -> Vec<(String, String, Value)> {
    saver
        .get_tuple(config)
        .await
        .expect("get_tuple")
        .expect("checkpoint exists")
        .pending_writes
        .into_iter()
        .map(|w| (w.task_id, w.channel, w.value))
        .collect()
}

fn threads_of(layout: &MemoryLayout) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    out.extend(layout.storage.iter().map(|e| e.thread_id.clone()));
    out.extend(layout.writes.iter().map(|e| e.thread_id.clone()));
    out.extend(layout.blobs.iter().map(|e| e.thread_id.clone()));
    out
}

async fn ids(
    saver: &MemorySaver,
    config: Option<&CheckpointConfig>,
    options: ListOptions,
) -> Vec<String> {
    saver
        .list(config, &options)
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.checkpoint.id)
        .collect()
}

#[tokio::test]
async fn memory_saver_has_every_capability() {
    let fenced = Capabilities {
        fence: true,
        ..Capabilities::ALL
    };
    assert_eq!(MemorySaver::new().capabilities(), fenced);
    assert_eq!(
        MemorySaver::new().with_fencing(false).capabilities(),
        Capabilities::ALL
    );
    assert_eq!(
        MemorySaver::default().dump(),
        "storage: {}\nwrites: {}\nblobs: {}\n"
    );
}

#[tokio::test]
async fn a_repeated_normal_index_keeps_the_first_write() {
    let saver = MemorySaver::new().with_fencing(false);
    let stored = put(&saver, "t", "", None, &checkpoint(1, &[]), md(0)).await;
    saver
        .put_writes(
            &stored,
            &writes(&[("a", 1.into()), ("b", 2.into())]),
            "task",
            "p",
        )
        .await
        .expect("first");
    saver
        .put_writes(
            &stored,
            &writes(&[("a", 10.into()), ("c", 20.into())]),
            "task",
            "p",
        )
        .await
        .expect("second");
    assert_eq!(
        pending(&saver, &stored).await,
        vec![
            ("task".into(), "a".into(), Value::Int(1)),
            ("task".into(), "b".into(), Value::Int(2)),
        ]
    );
    // Another task at the same index is a different key.
    saver
        .put_writes(&stored, &writes(&[("a", 3.into())]), "other", "p")
        .await
        .expect("other task");
    assert_eq!(pending(&saver, &stored).await.len(), 3);
}

#[tokio::test]
async fn a_reserved_index_keeps_the_last_write_even_in_a_mixed_batch() {
    let saver = MemorySaver::new().with_fencing(false);
    let stored = put(&saver, "t", "", None, &checkpoint(1, &[]), md(0)).await;
    saver
        .put_writes(
            &stored,
            &writes(&[("__interrupt__", "first".into())]),
            "task",
            "p",
        )
        .await
        .expect("interrupt 1");
    saver
        .put_writes(
            &stored,
            &writes(&[("__interrupt__", "second".into())]),
            "task",
            "p",
        )
        .await
        .expect("interrupt 2");
    saver
        .put_writes(
            &stored,
            &writes(&[("__resume__", "X".into()), ("a", 1.into())]),
            "task",
            "p",
        )
        .await
        .expect("mixed 1");
    saver
        .put_writes(
            &stored,
            &writes(&[("__resume__", "Y".into()), ("a", 2.into())]),
            "task",
            "p",
        )
        .await
        .expect("mixed 2");
    let got = pending(&saver, &stored).await;
    assert_eq!(
        got,
        vec![
            ("task".into(), "__resume__".into(), Value::from("Y")),
            ("task".into(), "__interrupt__".into(), Value::from("second")),
            ("task".into(), "a".into(), Value::Int(1)),
        ]
    );
    // The reserved writes are stored at their fixed indexes; `a` was at position 1.
    let idx: BTreeSet<i64> = saver
        .storage_snapshot()
        .writes
        .iter()
        .map(|w| w.idx)
        .collect();
    assert_eq!(idx, BTreeSet::from([-4, -3, 1]));
}

#[tokio::test]
async fn pending_writes_are_sorted_by_task_path_task_id_and_index() {
    let saver = MemorySaver::new();
    let stored = put(&saver, "t", "", None, &checkpoint(1, &[]), md(0)).await;
    saver
        .put_writes(
            &stored,
            &writes(&[("x", 1.into()), ("__error__", "e".into())]),
            "b-task",
            "~z",
        )
        .await
        .expect("b");
    saver
        .put_writes(
            &stored,
            &writes(&[("__interrupt__", "i".into())]),
            "b-task",
            "~z",
        )
        .await
        .expect("b interrupt");
    saver
        .put_writes(&stored, &writes(&[("y", 2.into())]), "a-task", "~z")
        .await
        .expect("a");
    saver
        .put_writes(&stored, &writes(&[("z", 3.into())]), "z-task", "~a")
        .await
        .expect("z");
    let order: Vec<(String, String)> = pending(&saver, &stored)
        .await
        .into_iter()
        .map(|(t, c, _)| (t, c))
        .collect();
    let expected = [
        ("z-task", "z"),
        ("a-task", "y"),
        ("b-task", "__interrupt__"),
        ("b-task", "__error__"),
        ("b-task", "x"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(t, c)| ((*t).into(), (*c).into()))
        .collect();
    assert_eq!(order, expected);
}

#[tokio::test]
async fn put_writes_needs_a_checkpoint_id() {
    let saver = MemorySaver::new();
    let err = saver
        .put_writes(
            &CheckpointConfig::thread("t"),
            &writes(&[("a", 1.into())]),
            "task",
            "",
        )
        .await
        .expect_err("no checkpoint id");
    assert!(matches!(err, Error::InvalidConfig(_)), "{err:?}");
}

#[tokio::test]
async fn put_stores_blobs_for_new_versions_and_reads_only_own_versions() {
    let saver = MemorySaver::new();
    let cp1 = checkpoint(1, &[("a", "v1".into(), 1), ("b", "v2".into(), 1)]);
    put(&saver, "t", "", None, &cp1, md(0)).await;
    // cp2: `a` changes, `b` is dropped, `gone` has a version but no value.
    let mut cp2 = checkpoint(2, &[("a", "v1b".into(), 2)]);
    cp2.channel_versions.insert("gone".into(), v(2));
    let new_versions = versions(&[("a", 2), ("gone", 2)]);
    saver
        .put(&at("t", "", 1), &cp2, &md(1), &new_versions)
        .await
        .expect("put 2");

    let layout = saver.storage_snapshot();
    let blob = |channel: &str, n: i64| {
        layout
            .blobs
            .iter()
            .find(|b| b.channel == channel && b.version == v(n))
            .map(|b| b.value.clone())
    };
    assert_eq!(blob("gone", 2), Some(Typed::empty()));
    assert_eq!(layout.blobs.len(), 4);
    assert_eq!(layout.storage[1].parent_checkpoint_id, Some(id(1)));
    assert_eq!(layout.storage[0].parent_checkpoint_id, None);

    let t2 = saver
        .get_tuple(&at("t", "", 2))
        .await
        .expect("get")
        .expect("cp2");
    assert_eq!(t2.checkpoint.channel_values.len(), 1);
    assert_eq!(t2.checkpoint.channel_values["a"], Value::from("v1b"));
    assert_eq!(t2.parent_config, Some(at("t", "", 1)));
    let t1 = saver
        .get_tuple(&at("t", "", 1))
        .await
        .expect("get")
        .expect("cp1");
    assert_eq!(t1.checkpoint.channel_values["a"], Value::from("v1"));
    assert_eq!(t1.checkpoint.channel_values["b"], Value::from("v2"));
}

#[tokio::test]
async fn blobs_are_kept_apart_per_thread() {
    let saver = MemorySaver::new();
    put(
        &saver,
        "t1",
        "",
        None,
        &checkpoint(1, &[("x", "one".into(), 1)]),
        md(0),
    )
    .await;
    put(
        &saver,
        "t2",
        "",
        None,
        &checkpoint(2, &[("x", "two".into(), 1)]),
        md(0),
    )
    .await;
    for (thread, want) in [("t1", "one"), ("t2", "two")] {
        let t = saver
            .get_tuple(&CheckpointConfig::thread(thread))
            .await
            .expect("get")
            .expect("found");
        assert_eq!(t.checkpoint.channel_values["x"], Value::from(want));
    }
}

#[tokio::test]
async fn get_tuple_finds_the_latest_or_the_given_id() {
    let saver = MemorySaver::new().with_fencing(false);
    put(&saver, "t", "", None, &checkpoint(2, &[]), md(0)).await;
    put(&saver, "t", "", Some(2), &checkpoint(3, &[]), md(1)).await;
    put(&saver, "t", "", None, &checkpoint(1, &[]), md(2)).await;

    let latest = saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get");
    let latest = latest.expect("latest");
    assert_eq!(latest.checkpoint.id, id(3));
    assert_eq!(latest.config, at("t", "", 3));
    assert_eq!(latest.metadata.step, Some(1));

    // An explicit id returns the caller's config as given; an empty id means "latest".
    let asked = CheckpointConfig {
        thread_id: "t".into(),
        checkpoint_ns: None,
        checkpoint_id: Some(id(1)),
        ..Default::default()
    }
    .with_configurable("user", "u");
    let got = saver.get_tuple(&asked).await.expect("get").expect("cp1");
    assert_eq!(got.config, asked);
    let empty_id = CheckpointConfig::thread("t").with_checkpoint_id("");
    let got = saver
        .get_tuple(&empty_id)
        .await
        .expect("get")
        .expect("latest");
    assert_eq!(got.checkpoint.id, id(3));

    assert!(saver
        .get_tuple(&at("t", "", 9))
        .await
        .expect("get")
        .is_none());
    assert!(saver
        .get_tuple(&CheckpointConfig::thread("nope"))
        .await
        .expect("get")
        .is_none());
    assert!(saver
        .get_tuple(&CheckpointConfig::thread("t").with_ns("child"))
        .await
        .expect("get")
        .is_none());
}

#[tokio::test]
async fn put_copies_config_keys_into_metadata() {
    let saver = MemorySaver::new();
    let config = CheckpointConfig::thread("t")
        .with_configurable("run_id", "r-1")
        .with_configurable("__secret", "no");
    let cp = checkpoint(1, &[]);
    saver
        .put(&config, &cp, &md(0), &ChannelVersions::default())
        .await
        .expect("put");
    let t = saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("found");
    assert_eq!(t.metadata.get("run_id"), Some(Value::from("r-1")));
    assert_eq!(t.metadata.get("__secret"), None);
}

#[tokio::test]
async fn put_without_a_namespace_stores_at_the_root() {
    let saver = MemorySaver::new();
    let config = CheckpointConfig {
        thread_id: "t".into(),
        ..Default::default()
    };
    let stored = saver
        .put(
            &config,
            &checkpoint(1, &[]),
            &md(0),
            &ChannelVersions::default(),
        )
        .await
        .expect("put");
    assert_eq!(stored, at("t", "", 1));
    assert_eq!(saver.storage_snapshot().storage[0].checkpoint_ns, "");
}

#[tokio::test]
async fn list_orders_newest_first_and_applies_filters() {
    let saver = MemorySaver::new();
    put(
        &saver,
        "t",
        "",
        None,
        &checkpoint(1, &[]),
        CheckpointMetadata::new(CheckpointSource::Input, -1),
    )
    .await;
    put(&saver, "t", "", Some(1), &checkpoint(2, &[]), md(0)).await;
    put(
        &saver,
        "t",
        "",
        Some(2),
        &checkpoint(3, &[]),
        md(1).with("score", 42),
    )
    .await;
    put(
        &saver,
        "t",
        "",
        Some(3),
        &checkpoint(4, &[]),
        CheckpointMetadata::new(CheckpointSource::Input, 2),
    )
    .await;
    put(&saver, "t", "child:1", None, &checkpoint(5, &[]), md(0)).await;
    put(&saver, "u", "", None, &checkpoint(6, &[]), md(0)).await;

    let root = CheckpointConfig::thread("t");
    assert_eq!(
        ids(&saver, Some(&root), ListOptions::default()).await,
        [id(4), id(3), id(2), id(1)]
    );
    let input = ListOptions::default().filter("source", "input");
    assert_eq!(ids(&saver, Some(&root), input).await, [id(4), id(1)]);
    let both = ListOptions::default()
        .filter("source", "input")
        .filter("step", 2);
    assert_eq!(ids(&saver, Some(&root), both).await, [id(4)]);
    let score = ListOptions::default().filter("score", 42.0);
    assert_eq!(ids(&saver, Some(&root), score).await, [id(3)]);
    let before = ListOptions::default().before(at("t", "", 3));
    assert_eq!(ids(&saver, Some(&root), before).await, [id(2), id(1)]);
    let before_limit = ListOptions::default().before(at("t", "", 4)).limit(1);
    assert_eq!(ids(&saver, Some(&root), before_limit).await, [id(3)]);
    assert!(ids(&saver, Some(&root), ListOptions::default().limit(0))
        .await
        .is_empty());
    assert_eq!(
        ids(&saver, Some(&at("t", "", 2)), ListOptions::default()).await,
        [id(2)]
    );
    let child = CheckpointConfig::thread("t").with_ns("child:1");
    assert_eq!(
        ids(&saver, Some(&child), ListOptions::default()).await,
        [id(5)]
    );

    // No namespace: every namespace of the thread, one namespace after the other.
    let any_ns = CheckpointConfig {
        thread_id: "t".into(),
        ..Default::default()
    };
    assert_eq!(
        ids(&saver, Some(&any_ns), ListOptions::default()).await,
        [id(4), id(3), id(2), id(1), id(5)]
    );
    // No config: every thread.
    assert_eq!(ids(&saver, None, ListOptions::default()).await.len(), 6);
    assert_eq!(
        ids(&saver, None, ListOptions::default().limit(5))
            .await
            .len(),
        5
    );
    assert!(ids(
        &saver,
        Some(&CheckpointConfig::thread("none")),
        ListOptions::default()
    )
    .await
    .is_empty());
}

#[tokio::test]
async fn list_includes_values_and_pending_writes() {
    let saver = MemorySaver::new();
    let stored = put(
        &saver,
        "t",
        "",
        None,
        &checkpoint(1, &[("k", "v".into(), 1)]),
        md(0),
    )
    .await;
    saver
        .put_writes(&stored, &writes(&[("ch", "val".into())]), "task", "")
        .await
        .expect("write");
    let listed = saver
        .list(
            Some(&CheckpointConfig::thread("t")),
            &ListOptions::default(),
        )
        .await
        .expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].checkpoint.channel_values["k"], Value::from("v"));
    assert_eq!(listed[0].pending_writes.len(), 1);
    assert_eq!(listed[0].pending_writes[0].value, Value::from("val"));
}

#[tokio::test]
async fn delete_thread_really_removes_writes_and_blobs() {
    let saver = MemorySaver::new();
    let cp = checkpoint(1, &[("k", "v".into(), 1)]);
    let stored = put(&saver, "t", "", None, &cp, md(0)).await;
    put(
        &saver,
        "t",
        "child:1",
        None,
        &checkpoint(2, &[("k", "w".into(), 1)]),
        md(0),
    )
    .await;
    saver
        .put_writes(&stored, &writes(&[("ch", "val".into())]), "task", "")
        .await
        .expect("write");
    put(
        &saver,
        "other",
        "",
        None,
        &checkpoint(3, &[("k", "o".into(), 1)]),
        md(0),
    )
    .await;

    saver.delete_thread("t").await.expect("delete");
    let layout = saver.storage_snapshot();
    assert_eq!(threads_of(&layout), BTreeSet::from(["other".to_owned()]));
    assert!(saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .is_none());

    // Re-putting the same id must not resurrect the old writes.
    put(&saver, "t", "", None, &cp, md(0)).await;
    assert!(pending(&saver, &stored).await.is_empty());
    saver.delete_thread("never-existed").await.expect("no-op");
}

#[tokio::test]
async fn delete_for_runs_removes_checkpoints_writes_and_unreferenced_blobs() {
    let saver = MemorySaver::new();
    // r1 writes a (v1) and b (v1); r2 changes a only, so b@1 stays referenced.
    let cp1 = checkpoint(1, &[("a", "a1".into(), 1), ("b", "b1".into(), 1)]);
    let s1 = put(&saver, "t", "", None, &cp1, md(0).with("run_id", "r1")).await;
    saver
        .put_writes(&s1, &writes(&[("a", "w".into())]), "task", "")
        .await
        .expect("write");
    let cp2 = checkpoint(2, &[("a", "a2".into(), 2), ("b", "b1".into(), 1)]);
    saver
        .put(
            &s1,
            &cp2,
            &md(1).with("run_id", "r2"),
            &versions(&[("a", 2)]),
        )
        .await
        .expect("put 2");
    put(
        &saver,
        "t",
        "child:1",
        None,
        &checkpoint(3, &[("c", 1.into(), 1)]),
        md(0).with("run_id", "r1"),
    )
    .await;

    saver.delete_for_runs(&[]).await.expect("empty");
    saver
        .delete_for_runs(&["unknown".into()])
        .await
        .expect("unknown");
    assert_eq!(saver.storage_snapshot().storage.len(), 3);

    saver.delete_for_runs(&["r1".into()]).await.expect("delete");
    let layout = saver.storage_snapshot();
    let stored: Vec<&str> = layout
        .storage
        .iter()
        .map(|e| e.checkpoint_id.as_str())
        .collect();
    assert_eq!(stored, [id(2)]);
    assert!(layout.writes.is_empty());
    let blobs: BTreeSet<(String, ChannelVersion)> = layout
        .blobs
        .iter()
        .map(|b| (b.channel.clone(), b.version.clone()))
        .collect();
    assert_eq!(
        blobs,
        BTreeSet::from([("a".into(), v(2)), ("b".into(), v(1))])
    );
    let t2 = saver
        .get_tuple(&at("t", "", 2))
        .await
        .expect("get")
        .expect("cp2");
    assert_eq!(t2.checkpoint.channel_values["b"], Value::from("b1"));
    assert_eq!(
        t2.parent_config, None,
        "the deleted parent is no longer linked"
    );
}

#[tokio::test]
async fn prune_keep_latest_keeps_one_checkpoint_per_namespace_with_its_writes() {
    let saver = MemorySaver::new();
    let mut parent = None;
    for n in 1..=3 {
        let cp = checkpoint(
            n,
            &[("a", Value::from(n), i64::from(n)), ("b", "same".into(), 1)],
        );
        let nv = if n == 1 {
            versions(&[("a", 1), ("b", 1)])
        } else {
            versions(&[("a", i64::from(n))])
        };
        let mut config = CheckpointConfig::thread("t");
        config.checkpoint_id = parent.map(id);
        let stored = saver
            .put(&config, &cp, &md(i64::from(n)), &nv)
            .await
            .expect("put");
        saver
            .put_writes(&stored, &writes(&[("ch", Value::from(n))]), "task", "")
            .await
            .expect("write");
        parent = Some(n);
    }
    put(&saver, "t", "child:1", None, &checkpoint(4, &[]), md(0)).await;
    put(&saver, "t", "child:1", Some(4), &checkpoint(5, &[]), md(1)).await;
    put(&saver, "keep", "", None, &checkpoint(6, &[]), md(0)).await;
    put(&saver, "keep", "", Some(6), &checkpoint(7, &[]), md(1)).await;
    let before_other = ids(
        &saver,
        Some(&CheckpointConfig::thread("keep")),
        ListOptions::default(),
    )
    .await;

    saver
        .prune(&[], PruneStrategy::KeepLatest)
        .await
        .expect("empty");
    saver
        .prune(&["unknown".into()], PruneStrategy::KeepLatest)
        .await
        .expect("unknown");
    saver
        .prune(&["t".into()], PruneStrategy::KeepLatest)
        .await
        .expect("prune");

    assert_eq!(
        ids(
            &saver,
            Some(&CheckpointConfig::thread("t")),
            ListOptions::default()
        )
        .await,
        [id(3)]
    );
    let child = CheckpointConfig::thread("t").with_ns("child:1");
    assert_eq!(
        ids(&saver, Some(&child), ListOptions::default()).await,
        [id(5)]
    );
    assert_eq!(
        ids(
            &saver,
            Some(&CheckpointConfig::thread("keep")),
            ListOptions::default()
        )
        .await,
        before_other
    );
    let latest = saver
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(latest.pending_writes.len(), 1);
    assert_eq!(latest.pending_writes[0].value, Value::Int(3));
    assert_eq!(latest.checkpoint.channel_values["a"], Value::Int(3));
    assert_eq!(latest.checkpoint.channel_values["b"], Value::from("same"));
    assert_eq!(latest.parent_config, None);

    let layout = saver.storage_snapshot();
    let t_blobs: BTreeSet<(String, ChannelVersion)> = layout
        .blobs
        .iter()
        .filter(|b| b.thread_id == "t")
        .map(|b| (b.channel.clone(), b.version.clone()))
        .collect();
    assert_eq!(
        t_blobs,
        BTreeSet::from([("a".into(), v(3)), ("b".into(), v(1))])
    );
    assert_eq!(
        layout.writes.iter().filter(|w| w.thread_id == "t").count(),
        1
    );
}

#[tokio::test]
async fn prune_delete_removes_the_listed_threads_only() {
    let saver = MemorySaver::new();
    let stored = put(
        &saver,
        "t",
        "",
        None,
        &checkpoint(1, &[("a", 1.into(), 1)]),
        md(0),
    )
    .await;
    saver
        .put_writes(&stored, &writes(&[("ch", 1.into())]), "task", "")
        .await
        .expect("write");
    put(&saver, "u", "", None, &checkpoint(2, &[]), md(0)).await;
    saver
        .prune(&["t".into()], PruneStrategy::Delete)
        .await
        .expect("prune");
    assert_eq!(
        threads_of(&saver.storage_snapshot()),
        BTreeSet::from(["u".to_owned()])
    );
}

#[tokio::test]
async fn copy_thread_copies_every_namespace_keeping_ids() {
    let saver = MemorySaver::new();
    let s1 = put(
        &saver,
        "src",
        "",
        None,
        &checkpoint(1, &[("a", 1.into(), 1)]),
        md(0),
    )
    .await;
    saver
        .put_writes(&s1, &writes(&[("ch", "w".into())]), "task", "path")
        .await
        .expect("write");
    put(
        &saver,
        "src",
        "",
        Some(1),
        &checkpoint(2, &[("a", 2.into(), 2)]),
        md(1),
    )
    .await;
    put(&saver, "src", "child:1", None, &checkpoint(3, &[]), md(0)).await;
    let before = saver.storage_snapshot();

    saver.copy_thread("src", "dst").await.expect("copy");
    let after = saver.storage_snapshot();
    let renamed = |thread: &str| {
        let mut l = MemoryLayout {
            storage: after
                .storage
                .iter()
                .filter(|e| e.thread_id == thread)
                .cloned()
                .collect(),
            writes: after
                .writes
                .iter()
                .filter(|e| e.thread_id == thread)
                .cloned()
                .collect(),
            blobs: after
                .blobs
                .iter()
                .filter(|e| e.thread_id == thread)
                .cloned()
                .collect(),
        };
        l.storage
            .iter_mut()
            .for_each(|e| e.thread_id = "src".into());
        l.writes.iter_mut().for_each(|e| e.thread_id = "src".into());
        l.blobs.iter_mut().for_each(|e| e.thread_id = "src".into());
        l
    };
    assert_eq!(renamed("src"), before, "the source is unchanged");
    assert_eq!(renamed("dst"), before, "the target holds the same entries");

    let dst = saver
        .get_tuple(&CheckpointConfig::thread("dst").with_checkpoint_id(id(1)))
        .await
        .expect("get")
        .expect("copied");
    assert_eq!(dst.pending_writes.len(), 1);
    assert_eq!(dst.checkpoint.channel_values["a"], Value::Int(1));

    saver.copy_thread("missing", "dst2").await.expect("no-op");
    assert!(ids(
        &saver,
        Some(&CheckpointConfig::thread("dst2")),
        ListOptions::default()
    )
    .await
    .is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_tasks_can_write_at_once() {
    let saver = Arc::new(MemorySaver::new().with_fencing(false));
    let stored = put(&saver, "t", "", None, &checkpoint(1, &[]), md(0)).await;
    let mut handles = Vec::new();
    for task in 0..64 {
        let saver = Arc::clone(&saver);
        let stored = stored.clone();
        handles.push(tokio::spawn(async move {
            let task_id = format!("task-{task:03}");
            for round in 0..5 {
                let batch = writes(&[("a", Value::from(round)), ("b", Value::from(task))]);
                saver
                    .put_writes(&stored, &batch, &task_id, "")
                    .await
                    .expect("write");
                let thread = format!("thread-{task}");
                let cp = checkpoint(100 + round, &[("x", Value::from(round), i64::from(round))]);
                put(&saver, &thread, "", None, &cp, md(i64::from(round))).await;
            }
        }));
    }
    for h in handles {
        h.await.expect("task");
    }
    let got = pending(&saver, &stored).await;
    assert_eq!(got.len(), 64 * 2);
    // First wins: every task kept round 0 for `a`.
    assert!(got
        .iter()
        .filter(|w| w.1 == "a")
        .all(|w| w.2 == Value::Int(0)));
    assert_eq!(
        ids(&saver, None, ListOptions::default()).await.len(),
        1 + 64 * 5
    );
}

#[tokio::test]
async fn versions_come_from_the_generator() {
    let a = MemorySaver::new().with_versions(VersionGenerator::python_seeded(7));
    let b = MemorySaver::new().with_versions(VersionGenerator::python_seeded(7));
    let first = a.get_next_version(None);
    assert_eq!(first, b.get_next_version(None));
    assert_eq!(first.integer_part(), 1);
    assert_eq!(a.get_next_version(Some(&first)).integer_part(), 2);
    assert_eq!(
        a.get_next_version(Some(&ChannelVersion::Int(41)))
            .integer_part(),
        42
    );
}

#[tokio::test]
async fn dump_shows_values_as_python_reprs() {
    let saver = MemorySaver::new();
    let cp = checkpoint(
        1,
        &[
            ("s", "it's".into(), 1),
            ("n", Value::Nil, 1),
            ("b", Value::bytes(vec![0, b'a']), 1),
        ],
    );
    let stored = put(&saver, "t", "", None, &cp, md(0)).await;
    saver
        .put_writes(&stored, &writes(&[("flag", true.into())]), "task", "")
        .await
        .expect("write");
    let dump = saver.dump();
    assert!(
        dump.contains(&format!(
            "('t', '', 's', '{}'): ('msgpack', \"it's\")\n",
            v(1)
        )),
        "{dump}"
    );
    assert!(
        dump.contains(&format!("('t', '', 'n', '{}'): ('null', None)\n", v(1))),
        "{dump}"
    );
    assert!(
        dump.contains(&format!(
            "('t', '', 'b', '{}'): ('bytes', b'\\x00a')\n",
            v(1)
        )),
        "{dump}"
    );
    assert!(
        dump.contains("{('task', 0): ('task', 'flag', ('msgpack', True), '')}"),
        "{dump}"
    );
    assert!(
        dump.contains("('msgpack', {'source': 'loop', 'step': 0, 'parents': {}}), None)"),
        "{dump}"
    );
}

/// A chat-like list: `len` maps, the first one's text `head`.
fn messages(head: &str, len: usize) -> Value {
    let items: Vec<Value> = (0..len)
        .map(|i| {
            let text = if i == 0 {
                head.to_owned()
            } else {
                format!("message {i}")
            };
            let mut m = stategraph_checkpoint::Map::new();
            m.insert(Value::from("content"), Value::from(text));
            m.insert(Value::from("n"), Value::from(i as i64));
            Value::Map(m)
        })
        .collect();
    Value::from(items)
}

#[tokio::test]
async fn long_lists_of_older_checkpoints_read_back_exactly_in_any_order() {
    // Lists of 20+ elements go through the saver's decode memo; checkpoint 4's list shares
    // no first element with the others, checkpoint 5's is shorter than the one before.
    let lists = [
        messages("a", 20),
        messages("a", 21),
        messages("a", 23),
        messages("b", 23),
        messages("b", 18),
    ];
    let saver = MemorySaver::new();
    for (i, list) in lists.iter().enumerate() {
        let n = i as u32 + 1;
        let cp = checkpoint(n, &[("messages", list.clone(), i as i64 + 1)]);
        put(&saver, "t", "", (n > 1).then(|| n - 1), &cp, md(i as i64)).await;
    }
    let read = |n: u32| {
        let saver = &saver;
        async move {
            saver
                .get_tuple(&at("t", "", n))
                .await
                .expect("get_tuple")
                .expect("stored")
                .checkpoint
                .channel_values["messages"]
                .clone()
        }
    };
    for n in [3, 2, 4, 1, 5, 3, 3, 1] {
        assert_eq!(read(n).await, lists[n as usize - 1], "checkpoint {n}");
    }
    let listed = saver
        .list(
            Some(&CheckpointConfig::thread("t")),
            &ListOptions::default(),
        )
        .await
        .expect("list");
    let got: Vec<Value> = listed
        .iter()
        .map(|t| t.checkpoint.channel_values["messages"].clone())
        .collect();
    let want: Vec<Value> = lists.iter().rev().cloned().collect();
    assert_eq!(got, want);
}
