//! `put` (required, behaviours #1–#17): what is stored comes back, per thread and namespace.

use indexmap::IndexMap;
use stategraph_checkpoint::{map, CheckpointConfig, CheckpointSaver, CheckpointSource, Value};

use crate::fixtures::{
    get_existing, id_of, in_ns, loop_metadata, loop_step, metadata, put_chain, put_plain, root,
    uuid4, version_is, NewCheckpoint,
};
use crate::Failure;

/// #1: `put` returns the config of the stored checkpoint: thread, namespace and the new id.
pub async fn returns_config(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let cp = NewCheckpoint::new().value("k", "v", 1);
    let stored = cp.put(saver, &root(&thread), &loop_metadata(0)).await?;
    ensure_eq!(stored.thread_id, thread, "returned thread_id");
    ensure_eq!(
        stored.checkpoint_ns.as_deref(),
        Some(""),
        "returned checkpoint_ns"
    );
    ensure_eq!(
        stored.checkpoint_id.as_deref(),
        Some(cp.id()),
        "returned checkpoint_id"
    );
    Ok(())
}

/// #2: a stored checkpoint reads back by its returned config, with exactly its values.
pub async fn roundtrip(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let cp = NewCheckpoint::new().value("msg", "hello", 1);
    let md = metadata(CheckpointSource::Input, -1);
    let stored = cp.put(saver, &root(&uuid4()), &md).await?;
    let tuple = get_existing(saver, &stored).await?;
    ensure_eq!(tuple.checkpoint.id, cp.id(), "checkpoint id");
    let want: IndexMap<String, Value> = [("msg".to_owned(), Value::from("hello"))].into();
    ensure_eq!(tuple.checkpoint.channel_values, want, "channel_values");
    Ok(())
}

/// #3: string, integer, list and map channel values come back equal (and of the same type).
pub async fn preserves_channel_values(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let values = [
        ("str", Value::from("hello")),
        ("int", Value::from(42)),
        ("list", stategraph_checkpoint::list![1, 2, 3]),
        ("map", map! { "nested" => true }),
    ];
    let cp = values
        .iter()
        .fold(NewCheckpoint::new(), |cp, (k, v)| cp.value(k, v.clone(), 1));
    let stored = cp.put(saver, &root(&uuid4()), &loop_metadata(0)).await?;
    let tuple = get_existing(saver, &stored).await?;
    for (k, v) in &values {
        ensure_eq!(
            tuple.checkpoint.channel_values.get(*k),
            Some(v),
            "channel {k:?}"
        );
    }
    Ok(())
}

/// #4: channel versions come back (compared by their integer part).
pub async fn preserves_channel_versions(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let cp = NewCheckpoint::new().value("a", "x", 1).value("b", "y", 2);
    let stored = cp.put(saver, &root(&uuid4()), &loop_metadata(0)).await?;
    let versions = get_existing(saver, &stored)
        .await?
        .checkpoint
        .channel_versions;
    for (ch, n) in [("a", 1), ("b", 2)] {
        ensure!(
            version_is(versions.get(ch), n),
            "channel_versions[{ch:?}] should be {n}, got {versions:?}"
        );
    }
    Ok(())
}

/// #5: the nodes of `versions_seen` come back.
pub async fn preserves_versions_seen(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let cp = NewCheckpoint::new()
        .seen("node1", &[("ch", 1)])
        .seen("node2", &[("ch", 2)]);
    let stored = cp.put(saver, &root(&uuid4()), &loop_metadata(0)).await?;
    let seen = get_existing(saver, &stored).await?.checkpoint.versions_seen;
    for node in ["node1", "node2"] {
        ensure!(
            seen.contains_key(node),
            "versions_seen lacks {node:?}: {seen:?}"
        );
    }
    Ok(())
}

/// #6: source, step and custom metadata keys come back.
pub async fn preserves_metadata(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let md = loop_metadata(3).with("custom_key", "custom_value");
    let stored = put_plain(saver, &root(&uuid4()), &md).await?;
    let got = get_existing(saver, &stored).await?.metadata;
    ensure_eq!(got.source, Some(CheckpointSource::Loop), "metadata source");
    ensure_eq!(got.step, Some(3), "metadata step");
    ensure_eq!(
        got.get("custom_key"),
        Some(Value::from("custom_value")),
        "metadata custom_key"
    );
    Ok(())
}

/// #7: a checkpoint of the root namespace reads back with namespace `""` (or none).
pub async fn root_namespace(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = put_plain(saver, &root(&uuid4()), &loop_metadata(0)).await?;
    let tuple = get_existing(saver, &stored).await?;
    ensure_eq!(tuple.config.ns(), "", "tuple config checkpoint_ns");
    Ok(())
}

/// #8: a checkpoint of a child namespace reads back with that namespace in its config.
pub async fn child_namespace(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = put_plain(saver, &in_ns(&uuid4(), "child:abc"), &loop_metadata(0)).await?;
    let tuple = get_existing(saver, &stored).await?;
    ensure_eq!(
        tuple.config.checkpoint_ns.as_deref(),
        Some("child:abc"),
        "tuple config checkpoint_ns"
    );
    Ok(())
}

/// #9: a hand-built config `{thread_id, checkpoint_ns: ""}` works for `put` (see
/// `tightened::absent_ns_gets_root` for a config without the namespace).
pub async fn default_namespace(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let config = CheckpointConfig {
        thread_id: uuid4(),
        checkpoint_ns: Some(String::new()),
        ..CheckpointConfig::default()
    };
    let stored = put_plain(saver, &config, &loop_metadata(0)).await?;
    get_existing(saver, &stored).await?;
    Ok(())
}

/// #10: every checkpoint of a chain reads back by its own id.
pub async fn multiple_checkpoints_same_thread(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let stored = put_chain(saver, &thread, "", 3, loop_step).await?;
    for config in &stored {
        let id = id_of(config, "stored config")?;
        let tuple = get_existing(saver, &CheckpointConfig::for_checkpoint(&thread, "", id)).await?;
        ensure_eq!(tuple.checkpoint.id, id, "checkpoint read by id");
    }
    Ok(())
}

/// #11: two threads storing the same channel at the same version keep their own values.
pub async fn multiple_threads_isolated(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (t1, t2) = (uuid4(), uuid4());
    for (thread, value) in [(&t1, "thread1"), (&t2, "thread2")] {
        let cp = NewCheckpoint::new().value("x", value, 1);
        cp.put(saver, &root(thread), &loop_metadata(0)).await?;
    }
    for (thread, value) in [(&t1, "thread1"), (&t2, "thread2")] {
        let tuple = get_existing(saver, &root(thread)).await?;
        ensure_eq!(
            tuple.checkpoint.channel_values.get("x"),
            Some(&Value::from(value)),
            "value of x in its own thread"
        );
    }
    Ok(())
}

/// #12: a chained checkpoint's `parent_config` names its parent.
pub async fn parent_config(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = put_chain(saver, &uuid4(), "", 2, loop_step).await?;
    let tuple = get_existing(saver, &stored[1]).await?;
    let parent = tuple
        .parent_config
        .ok_or_else(|| Failure::new("parent_config is None"))?;
    ensure_eq!(
        parent.checkpoint_id.as_deref(),
        Some(id_of(&stored[0], "first stored config")?),
        "parent checkpoint_id"
    );
    Ok(())
}

/// Puts `first`, then `second` as its child, in a fresh thread; returns both stored configs.
async fn put_pair(
    saver: &dyn CheckpointSaver,
    first: NewCheckpoint,
    second: NewCheckpoint,
) -> Result<(CheckpointConfig, CheckpointConfig), Failure> {
    let thread = uuid4();
    let stored1 = first.put(saver, &root(&thread), &loop_metadata(0)).await?;
    let parent = CheckpointConfig::for_checkpoint(&thread, "", first.id());
    let stored2 = second.put(saver, &parent, &loop_metadata(1)).await?;
    Ok((stored1, stored2))
}

/// The value of `channel` in the checkpoint `config` addresses.
async fn value_of(
    saver: &dyn CheckpointSaver,
    config: &CheckpointConfig,
    channel: &str,
) -> Result<Option<Value>, Failure> {
    let tuple = get_existing(saver, config).await?;
    Ok(tuple.checkpoint.channel_values.get(channel).cloned())
}

/// #13: a channel left out of `new_versions` reads back from the earlier checkpoint's
/// value, and the earlier checkpoint keeps its own values.
pub async fn incremental_channel_update(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let first = NewCheckpoint::new().value("a", "v1", 1).value("b", "v2", 1);
    let second = NewCheckpoint::new()
        .value("a", "v1_updated", 2)
        .carried("b", "v2", 1);
    let (stored1, stored2) = put_pair(saver, first, second).await?;
    let expected = [
        (&stored2, "a", "v1_updated"),
        (&stored2, "b", "v2"),
        (&stored1, "a", "v1"),
        (&stored1, "b", "v2"),
    ];
    for (config, ch, want) in expected {
        let got = value_of(saver, config, ch).await?;
        ensure_eq!(
            got,
            Some(Value::from(want)),
            "{ch:?} of {:?}",
            config.checkpoint_id
        );
    }
    Ok(())
}

/// #14: a channel added in a later checkpoint reads back next to the unchanged ones.
pub async fn new_channel_added(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let first = NewCheckpoint::new().value("a", "v1", 1);
    let second = NewCheckpoint::new()
        .carried("a", "v1", 1)
        .value("b", "new_channel", 1);
    let (_, stored2) = put_pair(saver, first, second).await?;
    for (ch, want) in [("a", "v1"), ("b", "new_channel")] {
        let got = value_of(saver, &stored2, ch).await?;
        ensure_eq!(got, Some(Value::from(want)), "channel {ch:?}");
    }
    Ok(())
}

/// #15: a channel missing from a later checkpoint's versions is absent from its values.
pub async fn channel_removed(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let first = NewCheckpoint::new().value("a", "v1", 1).value("b", "v2", 1);
    let second = NewCheckpoint::new().value("a", "v1_updated", 2);
    let (_, stored2) = put_pair(saver, first, second).await?;
    let values = get_existing(saver, &stored2)
        .await?
        .checkpoint
        .channel_values;
    ensure_eq!(
        values.get("a"),
        Some(&Value::from("v1_updated")),
        "channel \"a\""
    );
    ensure!(
        !values.contains_key("b"),
        "channel \"b\" should be absent: {values:?}"
    );
    Ok(())
}

/// #16: a `run_id` metadata key comes back exactly.
pub async fn preserves_run_id(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let run_id = uuid4();
    let md = loop_metadata(0).with("run_id", run_id.as_str());
    let stored = put_plain(saver, &root(&uuid4()), &md).await?;
    let got = get_existing(saver, &stored).await?.metadata;
    ensure_eq!(
        got.get("run_id"),
        Some(Value::from(run_id)),
        "metadata run_id"
    );
    Ok(())
}

/// #17: every (node, channel) entry of `versions_seen` comes back with its version.
pub async fn preserves_versions_seen_values(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let expected: [(&str, &[(&str, i64)]); 2] = [
        ("node1", &[("ch_a", 1), ("ch_b", 2)]),
        ("node2", &[("ch_a", 3)]),
    ];
    let cp = expected
        .iter()
        .fold(NewCheckpoint::new(), |cp, (node, v)| cp.seen(node, v));
    let stored = cp.put(saver, &root(&uuid4()), &loop_metadata(0)).await?;
    let seen = get_existing(saver, &stored).await?.checkpoint.versions_seen;
    for (node, versions) in expected {
        let got = seen
            .get(node)
            .ok_or_else(|| Failure::new(format!("versions_seen lacks {node:?}: {seen:?}")))?;
        for (ch, n) in versions {
            ensure!(
                version_is(got.get(*ch), *n),
                "versions_seen[{node:?}][{ch:?}] should be {n}, got {got:?}"
            );
        }
    }
    Ok(())
}
