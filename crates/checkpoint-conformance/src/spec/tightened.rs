//! Behaviours the Python suite leaves loose, pinned.
//!
//! Each belongs to the capability it exercises (see the list in [`crate::spec`]), so those
//! of an undeclared optional capability are skipped with the rest of its group. Write
//! rows are observed through the API: after a delete, the very same checkpoint (same id)
//! is put again, and it must come back without the old writes.

use std::collections::BTreeSet;

use indexmap::IndexMap;
use stategraph_checkpoint::{
    map, CheckpointConfig, CheckpointMetadata, CheckpointSaver, Error, ListOptions, PruneStrategy,
    Value,
};

use crate::fixtures::{
    describe_writes, get_existing, ids, in_ns, list, loop_metadata, loop_step, put_plain, root,
    uuid4, write, NewCheckpoint,
};
use crate::spec::delete_for_runs::{put_run, runs_in};
use crate::Failure;

/// Puts `cp` in a fresh thread's root namespace; returns the thread and stored config.
async fn put_fresh(
    saver: &dyn CheckpointSaver,
    cp: &NewCheckpoint,
    md: &CheckpointMetadata,
) -> Result<(String, CheckpointConfig), Failure> {
    let thread = uuid4();
    let stored = cp.put(saver, &root(&thread), md).await?;
    Ok((thread, stored))
}

/// Fails unless the checkpoint `config` addresses exists and has no pending writes.
async fn expect_no_writes(
    saver: &dyn CheckpointSaver,
    config: &CheckpointConfig,
    what: &str,
) -> Result<(), Failure> {
    let tuple = get_existing(saver, config).await?;
    ensure!(
        tuple.pending_writes.is_empty(),
        "{what}: the re-put checkpoint came back with old writes {:?}",
        describe_writes(&tuple)
    );
    Ok(())
}

/// Channel values 1, 1.0 and true come back as an integer, a float and a boolean.
pub async fn int_float_bool_values_stay_distinct(
    saver: &dyn CheckpointSaver,
) -> Result<(), Failure> {
    let values = [
        ("i", Value::Int(1)),
        ("f", Value::Float(1.0)),
        ("b", Value::Bool(true)),
    ];
    let cp = values
        .iter()
        .fold(NewCheckpoint::new(), |cp, (k, v)| cp.value(k, v.clone(), 1));
    let (_, stored) = put_fresh(saver, &cp, &loop_metadata(0)).await?;
    let got = get_existing(saver, &stored)
        .await?
        .checkpoint
        .channel_values;
    for (k, v) in &values {
        ensure_eq!(got.get(*k), Some(v), "channel {k:?} (type included)");
    }
    Ok(())
}

/// Bytes and nil channel values come back; a nil value is present, not dropped.
pub async fn bytes_and_nil_values_roundtrip(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let cp = NewCheckpoint::new()
        .value("bytes", vec![0u8, 159, 255], 1)
        .value("nil", Value::Nil, 1);
    let (_, stored) = put_fresh(saver, &cp, &loop_metadata(0)).await?;
    let got = get_existing(saver, &stored)
        .await?
        .checkpoint
        .channel_values;
    let want: IndexMap<String, Value> = [
        ("bytes".to_owned(), Value::bytes(vec![0, 159, 255])),
        ("nil".to_owned(), Value::Nil),
    ]
    .into();
    ensure_eq!(got, want, "channel_values");
    Ok(())
}

/// Metadata `parents` comes back: `{}` at the root, `{"": root id}` in a child namespace.
pub async fn metadata_parents_roundtrip(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let root_cp = NewCheckpoint::new();
    let root_stored = root_cp
        .put(saver, &root(&thread), &loop_metadata(0))
        .await?;
    let mut child_md = loop_metadata(0);
    let parents: IndexMap<String, String> = [(String::new(), root_cp.id().to_owned())].into();
    child_md.parents = Some(parents.clone());
    let child_stored = put_plain(saver, &in_ns(&thread, "child:1"), &child_md).await?;
    let got = get_existing(saver, &root_stored).await?.metadata.parents;
    ensure_eq!(
        got,
        Some(IndexMap::new()),
        "metadata parents of the root checkpoint"
    );
    let got = get_existing(saver, &child_stored).await?.metadata.parents;
    ensure_eq!(
        got,
        Some(parents),
        "metadata parents of the child checkpoint"
    );
    Ok(())
}

/// Written bytes and nil values come back as written.
pub async fn bytes_and_nil_writes_roundtrip(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (_, stored) = put_fresh(saver, &NewCheckpoint::new(), &loop_metadata(0)).await?;
    let writes = [write("bytes", vec![1u8, 0, 254]), write("nil", Value::Nil)];
    saver.put_writes(&stored, &writes, &uuid4(), "").await?;
    let tuple = get_existing(saver, &stored).await?;
    let got: Vec<(String, Value)> = tuple
        .pending_writes
        .iter()
        .map(|w| (w.channel.clone(), w.value.clone()))
        .collect();
    ensure_eq!(got, writes.to_vec(), "pending writes (channel, value)");
    Ok(())
}

/// `task_path` is stored and sorts first: the write of task `z…` at path `"a"` comes
/// before that of task `a…` at path `"b"`, though it was written later.
pub async fn task_path_orders_writes(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (_, stored) = put_fresh(saver, &NewCheckpoint::new(), &loop_metadata(0)).await?;
    let (task_a, task_z) = (format!("a{}", uuid4()), format!("z{}", uuid4()));
    saver
        .put_writes(&stored, &[write("ch", "from_a")], &task_a, "b")
        .await?;
    saver
        .put_writes(&stored, &[write("ch", "from_z")], &task_z, "a")
        .await?;
    let tuple = get_existing(saver, &stored).await?;
    let order: Vec<&str> = tuple
        .pending_writes
        .iter()
        .map(|w| w.task_id.as_str())
        .collect();
    ensure_eq!(
        order,
        vec![task_z.as_str(), task_a.as_str()],
        "task order of pending writes"
    );
    Ok(())
}

/// Within a task, writes sort by index: the reserved channels (`__resume__` -4,
/// `__interrupt__` -3, `__scheduled__` -2, `__error__` -1) before positions 0, 1, ….
pub async fn reserved_writes_come_first(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (_, stored) = put_fresh(saver, &NewCheckpoint::new(), &loop_metadata(0)).await?;
    let writes = [
        write("ch0", "v0"),
        write("__error__", "boom"),
        write("ch2", "v2"),
        write("__interrupt__", map! { "reason" => "ask" }),
        write("__scheduled__", true),
        write("__resume__", "yes"),
    ];
    saver.put_writes(&stored, &writes, &uuid4(), "").await?;
    let tuple = get_existing(saver, &stored).await?;
    let order: Vec<&str> = tuple
        .pending_writes
        .iter()
        .map(|w| w.channel.as_str())
        .collect();
    let want = [
        "__resume__",
        "__interrupt__",
        "__scheduled__",
        "__error__",
        "ch0",
        "ch2",
    ];
    ensure_eq!(order, want.to_vec(), "channel order of pending writes");
    Ok(())
}

/// Writes `first` then `second` for one task on a fresh checkpoint; returns whether a
/// fenced saver refused the second call with `Conflict` (see [`crate::spec::fence`]), and
/// the `(channel, value)` pairs read back.
async fn write_twice(
    saver: &dyn CheckpointSaver,
    first: &[(String, Value)],
    second: &[(String, Value)],
) -> Result<(bool, Vec<(String, Value)>), Failure> {
    let (_, stored) = put_fresh(saver, &NewCheckpoint::new(), &loop_metadata(0)).await?;
    let task = uuid4();
    saver.put_writes(&stored, first, &task, "").await?;
    let refused = match saver.put_writes(&stored, second, &task, "").await {
        Ok(()) => false,
        Err(Error::Conflict(_)) if saver.capabilities().fence => true,
        Err(e) => return Err(e.into()),
    };
    let tuple = get_existing(saver, &stored).await?;
    let got = tuple
        .pending_writes
        .iter()
        .map(|w| (w.channel.clone(), w.value.clone()))
        .collect();
    Ok((refused, got))
}

/// A repeated write at a normal index is ignored: the first value stays. (A fenced saver
/// refuses the second call instead: the first value stays too.)
pub async fn repeated_normal_write_keeps_first(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (_, got) = write_twice(saver, &[write("ch", "first")], &[write("ch", "second")]).await?;
    ensure_eq!(got, vec![write("ch", "first")], "pending writes");
    Ok(())
}

/// A repeated batch of reserved writes replaces the stored ones: the last values win.
pub async fn repeated_reserved_writes_keep_last(
    saver: &dyn CheckpointSaver,
) -> Result<(), Failure> {
    let first = [write("__error__", "e1"), write("__interrupt__", "i1")];
    let second = [write("__error__", "e2"), write("__interrupt__", "i2")];
    let (refused, got) = write_twice(saver, &first, &second).await?;
    ensure!(!refused, "a repeat of reserved writes was refused");
    let want = vec![write("__interrupt__", "i2"), write("__error__", "e2")];
    ensure_eq!(got, want, "pending writes");
    Ok(())
}

/// In a repeated batch mixing both kinds, each write follows its own rule: the normal
/// one keeps the first value, the reserved one takes the last (the rule on the trait).
/// A fenced saver refuses the second call as a whole (its normal write differs from the
/// stored one), storing nothing of it: the first batch stays.
pub async fn repeated_mixed_batch(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let first = [write("ch", "first"), write("__error__", "e1")];
    let second = [write("ch", "second"), write("__error__", "e2")];
    let (refused, got) = write_twice(saver, &first, &second).await?;
    let reserved = if refused { "e1" } else { "e2" };
    let want = vec![write("__error__", reserved), write("ch", "first")];
    ensure_eq!(got, want, "pending writes");
    Ok(())
}

/// `get_tuple` with no `checkpoint_ns` at all reads the root namespace, even when a child
/// namespace has a newer checkpoint.
pub async fn absent_ns_gets_root(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let root_cp = NewCheckpoint::new();
    root_cp
        .put(saver, &root(&thread), &loop_metadata(0))
        .await?;
    put_plain(saver, &in_ns(&thread, "child:1"), &loop_metadata(0)).await?;
    let mut config = CheckpointConfig::thread(&thread);
    config.checkpoint_ns = None;
    let tuple = get_existing(saver, &config).await?;
    ensure_eq!(
        tuple.checkpoint.id,
        root_cp.id(),
        "latest checkpoint without checkpoint_ns"
    );
    config.checkpoint_id = Some(root_cp.id().to_owned());
    let tuple = get_existing(saver, &config).await?;
    ensure_eq!(
        tuple.checkpoint.id,
        root_cp.id(),
        "checkpoint by id without checkpoint_ns"
    );
    Ok(())
}

/// `list` with no `checkpoint_ns` at all lists every namespace of the thread.
pub async fn absent_ns_lists_every_namespace(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let mut want = BTreeSet::new();
    for ns in ["", "child:1", "child:2"] {
        let cp = NewCheckpoint::new();
        cp.put(saver, &in_ns(&thread, ns), &loop_metadata(0))
            .await?;
        want.insert(cp.id().to_owned());
    }
    let mut config = CheckpointConfig::thread(&thread);
    config.checkpoint_ns = None;
    let got: BTreeSet<String> = ids(&list(saver, &config, &ListOptions::default()).await?)
        .into_iter()
        .collect();
    ensure_eq!(got, want, "ids listed without checkpoint_ns");
    Ok(())
}

/// `list` with no config at all lists every thread (narrowed here by a metadata filter).
pub async fn no_config_lists_every_thread(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let marker = uuid4();
    let mut want = BTreeSet::new();
    for _ in 0..2 {
        let thread = uuid4();
        let md = loop_metadata(0).with("conformance_marker", marker.as_str());
        put_plain(saver, &root(&thread), &md).await?;
        want.insert(thread);
    }
    let options = ListOptions::default().filter("conformance_marker", marker.as_str());
    let got: BTreeSet<String> = crate::fixtures::list_any(saver, None, &options)
        .await?
        .into_iter()
        .map(|t| t.config.thread_id)
        .collect();
    ensure_eq!(got, want, "threads listed without a config");
    Ok(())
}

/// `delete_thread` removes the write rows too: the same checkpoint put again has none.
pub async fn delete_thread_removes_write_rows(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let cp = NewCheckpoint::new();
    let (thread, stored) = put_fresh(saver, &cp, &loop_metadata(0)).await?;
    saver
        .put_writes(&stored, &[write("ch", "val")], &uuid4(), "")
        .await?;
    saver.delete_thread(&thread).await?;
    cp.put(saver, &root(&thread), &loop_metadata(0)).await?;
    expect_no_writes(saver, &stored, "after delete_thread").await
}

/// `delete_for_runs` removes the listed run in every thread, and keeps the others.
pub async fn delete_for_runs_removes_the_run(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (t1, t2, keep, delete) = (uuid4(), uuid4(), uuid4(), uuid4());
    put_run(saver, &t1, "", &keep, None).await?;
    put_run(saver, &t1, "", &delete, None).await?;
    put_run(saver, &t2, "", &delete, None).await?;
    saver.delete_for_runs(std::slice::from_ref(&delete)).await?;
    let (runs1, runs2) = (
        runs_in(saver, &t1, "").await?,
        runs_in(saver, &t2, "").await?,
    );
    ensure!(runs1.contains(&keep), "the kept run is gone: {runs1:?}");
    ensure!(
        !runs1.contains(&delete),
        "the deleted run is still listed: {runs1:?}"
    );
    ensure!(
        runs2.is_empty(),
        "the deleted run is still listed in another thread: {runs2:?}"
    );
    Ok(())
}

/// `delete_for_runs` removes the write rows too: the same checkpoint put again has none.
pub async fn delete_for_runs_removes_write_rows(
    saver: &dyn CheckpointSaver,
) -> Result<(), Failure> {
    let (cp, run) = (NewCheckpoint::new(), uuid4());
    let md = loop_metadata(0).with("run_id", run.as_str());
    let (thread, stored) = put_fresh(saver, &cp, &md).await?;
    saver
        .put_writes(&stored, &[write("ch", "val")], &uuid4(), "")
        .await?;
    saver.delete_for_runs(&[run]).await?;
    cp.put(saver, &root(&thread), &md).await?;
    expect_no_writes(saver, &stored, "after delete_for_runs").await
}

/// The survivor of `delete_for_runs` whose parent was deleted has no parent any more.
pub async fn delete_for_runs_survivor_has_no_parent(
    saver: &dyn CheckpointSaver,
) -> Result<(), Failure> {
    let (thread, r1, r2) = (uuid4(), uuid4(), uuid4());
    let s1 = put_run(saver, &thread, "", &r1, None).await?;
    let s2 = put_run(saver, &thread, "", &r2, Some(&s1)).await?;
    saver.delete_for_runs(&[r1]).await?;
    let kept = get_existing(saver, &s2).await?;
    ensure!(
        kept.parent_config.is_none(),
        "the kept checkpoint still points at a deleted parent: {:?}",
        kept.parent_config
    );
    Ok(())
}

/// Puts `n` chained checkpoints, each with one write; returns them with their configs.
async fn chain_with_writes(
    saver: &dyn CheckpointSaver,
    thread: &str,
    n: usize,
) -> Result<Vec<(NewCheckpoint, CheckpointConfig, CheckpointConfig)>, Failure> {
    let mut out: Vec<(NewCheckpoint, CheckpointConfig, CheckpointConfig)> = Vec::new();
    for i in 0..n {
        let cp = NewCheckpoint::new();
        let config = match out.last() {
            Some((parent, _, _)) => CheckpointConfig::for_checkpoint(thread, "", parent.id()),
            None => root(thread),
        };
        let stored = cp.put(saver, &config, &loop_step(i)).await?;
        saver
            .put_writes(&stored, &[write("ch", i)], &uuid4(), "")
            .await?;
        out.push((cp, config, stored));
    }
    Ok(out)
}

/// `prune(keep_latest)` removes the write rows of the removed checkpoints (the same
/// checkpoint put again has none) and keeps those of the latest.
pub async fn prune_keep_latest_removes_write_rows(
    saver: &dyn CheckpointSaver,
) -> Result<(), Failure> {
    let thread = uuid4();
    let chain = chain_with_writes(saver, &thread, 3).await?;
    saver
        .prune(std::slice::from_ref(&thread), PruneStrategy::KeepLatest)
        .await?;
    let (cp, config, stored) = &chain[0];
    cp.put(saver, config, &loop_step(0)).await?;
    expect_no_writes(saver, stored, "after prune keep_latest").await?;
    let latest = get_existing(saver, &chain[2].2).await?;
    ensure_eq!(
        latest.pending_writes.len(),
        1,
        "writes of the kept checkpoint"
    );
    Ok(())
}

/// `prune(delete)` removes every write row: the same checkpoints put again have none.
pub async fn prune_delete_removes_write_rows(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let chain = chain_with_writes(saver, &thread, 2).await?;
    saver
        .prune(std::slice::from_ref(&thread), PruneStrategy::Delete)
        .await?;
    for (i, (cp, config, stored)) in chain.iter().enumerate() {
        cp.put(saver, config, &loop_step(i)).await?;
        expect_no_writes(saver, stored, "after prune delete").await?;
    }
    Ok(())
}

/// The checkpoint `prune(keep_latest)` keeps has no parent any more: its parent is gone,
/// and no tuple points at a removed checkpoint (the rule of Postgres' `prune`).
pub async fn prune_survivor_has_no_parent(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let chain = chain_with_writes(saver, &thread, 3).await?;
    saver
        .prune(std::slice::from_ref(&thread), PruneStrategy::KeepLatest)
        .await?;
    let kept = get_existing(saver, &chain[2].2).await?;
    ensure!(
        kept.parent_config.is_none(),
        "the kept checkpoint still points at a removed parent: {:?}",
        kept.parent_config
    );
    Ok(())
}

/// Keys no saver can store everywhere (a NUL character, more than
/// [`stategraph_checkpoint::MAX_KEY_BYTES`] bytes) as a thread id, namespace, checkpoint id
/// or task id are refused with `InvalidConfig` by `get_tuple`, `list`, `put` and
/// `put_writes`, before anything is stored; keys at the limit are stored and read back.
pub async fn unstorable_keys_are_refused(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    use stategraph_checkpoint::{ChannelVersions, Error, MAX_KEY_BYTES};
    let refused = |r: Result<(), Error>| matches!(r, Err(Error::InvalidConfig(_)));
    let long = "k".repeat(MAX_KEY_BYTES + 1);
    let cp = NewCheckpoint::new();
    let md = loop_metadata(0);
    let none = ChannelVersions::default();
    let writes = [write("a", 1)];
    for bad in ["nul\0inside", long.as_str()] {
        let label = &bad[..bad.len().min(12)];
        let thread = uuid4();
        let configs = [
            root(bad),
            in_ns(&thread, bad),
            CheckpointConfig::for_checkpoint(thread.as_str(), "", bad),
        ];
        for (what, config) in ["thread id", "namespace", "checkpoint id"]
            .iter()
            .zip(&configs)
        {
            let get = saver.get_tuple(config).await.map(|_| ());
            ensure!(
                refused(get),
                "get_tuple with a {what} {label:?}… was not refused"
            );
            let listed = saver.list(Some(config), &ListOptions::default()).await;
            ensure!(
                refused(listed.map(|_| ())),
                "list with a {what} {label:?}… was not refused"
            );
            let put = saver.put(config, cp.checkpoint(), &md, &none).await;
            ensure!(
                refused(put.map(|_| ())),
                "put with a {what} {label:?}… was not refused"
            );
            let with_id = config.clone().with_checkpoint_id(
                config
                    .checkpoint_id
                    .clone()
                    .unwrap_or_else(|| cp.id().to_owned()),
            );
            let wrote = saver.put_writes(&with_id, &writes, "task", "").await;
            ensure!(
                refused(wrote),
                "put_writes with a {what} {label:?}… was not refused"
            );
        }
        let at = CheckpointConfig::for_checkpoint(thread.as_str(), "", cp.id());
        let wrote = saver.put_writes(&at, &writes, bad, "").await;
        ensure!(
            refused(wrote),
            "put_writes with a task id {label:?}… was not refused"
        );
        ensure!(
            list(saver, &root(&thread), &ListOptions::default())
                .await?
                .is_empty(),
            "a refused call stored something"
        );
    }
    let at_limit = "é".repeat(MAX_KEY_BYTES / 2);
    let config = in_ns(&at_limit, &at_limit);
    let stored = cp.put(saver, &config, &md).await?;
    let got = get_existing(saver, &stored).await?;
    ensure_eq!(got.config.thread_id, at_limit, "thread id at the limit");
    ensure_eq!(got.config.ns(), at_limit.as_str(), "namespace at the limit");
    Ok(())
}
