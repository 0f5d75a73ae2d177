//! `list` (required, behaviours #38–#53): one thread and namespace, newest first.
//!
//! Filtered by metadata, bounded by `before` and `limit`, each tuple with its writes.

use std::collections::BTreeSet;

use stategraph_checkpoint::{
    CheckpointConfig, CheckpointSaver, CheckpointSource, CheckpointTuple, ListOptions, Value,
};

use crate::fixtures::{
    config_ids, describe_writes, ids, in_ns, list, loop_metadata, metadata, put_chain, put_plain,
    root, uuid4, write,
};
use crate::Failure;

/// The list fixture: a fresh thread with 4 chained root checkpoints, step `i`, source
/// `input` for steps 0 and 2 and `loop` for 1 and 3. Returns the thread and the ids in
/// put order.
async fn fixture(saver: &dyn CheckpointSaver) -> Result<(String, Vec<String>), Failure> {
    let thread = uuid4();
    let stored = put_chain(saver, &thread, "", 4, |i| {
        let source = if i % 2 == 0 {
            CheckpointSource::Input
        } else {
            CheckpointSource::Loop
        };
        metadata(source, i64::try_from(i).unwrap_or(i64::MAX))
    })
    .await?;
    Ok((thread, config_ids(&stored)))
}

/// `list({thread, ns ""}, options)`.
async fn list_root(
    saver: &dyn CheckpointSaver,
    thread: &str,
    options: ListOptions,
) -> Result<Vec<CheckpointTuple>, Failure> {
    list(saver, &root(thread), &options).await
}

/// #38: every checkpoint of the thread is listed.
pub async fn all(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, _) = fixture(saver).await?;
    let got = list_root(saver, &thread, ListOptions::default()).await?;
    ensure_eq!(got.len(), 4, "listed checkpoints");
    Ok(())
}

/// #39: only the checkpoints of the given thread are listed.
pub async fn by_thread(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, _) = fixture(saver).await?;
    let other = list_root(saver, &uuid4(), ListOptions::default()).await?;
    ensure_eq!(other.len(), 0, "checkpoints listed for an unknown thread");
    let got = list_root(saver, &thread, ListOptions::default()).await?;
    ensure_eq!(got.len(), 4, "checkpoints listed for the thread");
    Ok(())
}

/// #40: namespace `""` lists the root namespace only, a child namespace only itself.
pub async fn by_namespace(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    for ns in ["", "child:1"] {
        put_plain(saver, &in_ns(&thread, ns), &loop_metadata(0)).await?;
    }
    for ns in ["", "child:1"] {
        let got = list(saver, &in_ns(&thread, ns), &ListOptions::default()).await?;
        ensure_eq!(got.len(), 1, "checkpoints listed in namespace {ns:?}");
    }
    Ok(())
}

/// #41: checkpoints are listed newest (greatest id) first.
pub async fn ordering(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, mut want) = fixture(saver).await?;
    want.reverse();
    let got = list_root(saver, &thread, ListOptions::default()).await?;
    ensure_eq!(ids(&got), want, "listed ids");
    Ok(())
}

/// Fails unless `tuples` has `n` entries, each with metadata `key == value`.
fn expect_matching(
    tuples: &[CheckpointTuple],
    n: usize,
    key: &str,
    value: &Value,
) -> Result<(), Failure> {
    ensure_eq!(tuples.len(), n, "checkpoints listed with {key} = {value:?}");
    for t in tuples {
        let got = t.metadata.get(key);
        ensure_eq!(got.as_ref(), Some(value), "metadata {key}");
    }
    Ok(())
}

/// #42: a filter on `source` keeps the checkpoints with that source.
pub async fn metadata_filter_single_key(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, _) = fixture(saver).await?;
    let got = list_root(
        saver,
        &thread,
        ListOptions::default().filter("source", "input"),
    )
    .await?;
    expect_matching(&got, 2, "source", &Value::from("input"))
}

/// #43: a filter on `step` compares integers.
pub async fn metadata_filter_step(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, _) = fixture(saver).await?;
    let got = list_root(saver, &thread, ListOptions::default().filter("step", 1)).await?;
    expect_matching(&got, 1, "step", &Value::from(1))
}

/// #44: every key of a filter must match.
pub async fn metadata_filter_multiple_keys(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let cases = [
        (CheckpointSource::Input, 1),
        (CheckpointSource::Loop, 1),
        (CheckpointSource::Input, 2),
    ];
    for (source, step) in cases {
        put_plain(saver, &root(&thread), &metadata(source, step)).await?;
    }
    let options = ListOptions::default()
        .filter("source", "input")
        .filter("step", 2);
    let got = list_root(saver, &thread, options).await?;
    ensure_eq!(
        got.len(),
        1,
        "checkpoints listed with source input and step 2"
    );
    ensure_eq!(
        got[0].metadata.source,
        Some(CheckpointSource::Input),
        "metadata source"
    );
    ensure_eq!(got[0].metadata.step, Some(2), "metadata step");
    Ok(())
}

/// #45: a filter nothing matches lists nothing, without error.
pub async fn metadata_filter_no_match(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, _) = fixture(saver).await?;
    let options = ListOptions::default()
        .filter("source", "update")
        .filter("step", 99);
    let got = list_root(saver, &thread, options).await?;
    ensure_eq!(
        got.len(),
        0,
        "checkpoints listed with a filter nothing matches"
    );
    Ok(())
}

/// #46: any top-level metadata key can be filtered on.
pub async fn metadata_custom_keys(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    for (score, run) in [(42, "run-abc"), (99, "run-xyz")] {
        let md = loop_metadata(0).with("score", score).with("run_id", run);
        put_plain(saver, &root(&thread), &md).await?;
    }
    let got = list_root(saver, &thread, ListOptions::default().filter("score", 42)).await?;
    expect_matching(&got, 1, "score", &Value::from(42))?;
    ensure_eq!(
        got[0].metadata.get("run_id"),
        Some(Value::from("run-abc")),
        "metadata run_id"
    );
    Ok(())
}

/// #47: `before` lists only checkpoints with a strictly smaller id.
pub async fn before(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, ids_put) = fixture(saver).await?;
    let bound = CheckpointConfig::for_checkpoint(&thread, "", ids_put[2].as_str());
    let got = list_root(saver, &thread, ListOptions::default().before(bound)).await?;
    let got: BTreeSet<String> = ids(&got).into_iter().collect();
    let want: BTreeSet<String> = ids_put[..2].iter().cloned().collect();
    ensure_eq!(got, want, "ids listed before the third checkpoint");
    Ok(())
}

/// #48: `limit` caps the number listed.
pub async fn limit(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, _) = fixture(saver).await?;
    for n in [1, 2] {
        let got = list_root(saver, &thread, ListOptions::default().limit(n)).await?;
        ensure_eq!(got.len(), n, "checkpoints listed with limit {n}");
    }
    Ok(())
}

/// #49: order and `before` apply before `limit`.
pub async fn limit_plus_before(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, ids_put) = fixture(saver).await?;
    let bound = CheckpointConfig::for_checkpoint(&thread, "", ids_put[3].as_str());
    let options = ListOptions::default().before(bound).limit(1);
    let got = list_root(saver, &thread, options).await?;
    ensure_eq!(
        ids(&got),
        vec![ids_put[2].clone()],
        "ids listed before the fourth, limit 1"
    );
    Ok(())
}

/// #50: thread and filter combine.
pub async fn combined_thread_and_filter(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let (thread, _) = fixture(saver).await?;
    let got = list_root(
        saver,
        &thread,
        ListOptions::default().filter("source", "loop"),
    )
    .await?;
    expect_matching(&got, 2, "source", &Value::from("loop"))
}

/// #51: an unknown thread with a filter lists nothing, without error.
pub async fn empty_result(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let options = ListOptions::default().filter("source", "nonexistent");
    let got = list_root(saver, &uuid4(), options).await?;
    ensure_eq!(got.len(), 0, "checkpoints listed for an unknown thread");
    Ok(())
}

/// #52: listed tuples carry their pending writes, as `get_tuple` does.
pub async fn includes_pending_writes(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let stored = put_plain(saver, &root(&thread), &loop_metadata(0)).await?;
    saver
        .put_writes(&stored, &[write("ch", "val")], &uuid4(), "")
        .await?;
    let got = list_root(saver, &thread, ListOptions::default()).await?;
    ensure_eq!(got.len(), 1, "listed checkpoints");
    let writes = &got[0].pending_writes;
    ensure!(
        writes.len() == 1 && writes[0].channel == "ch" && writes[0].value == Value::from("val"),
        "expected the one write (ch, \"val\"), got {:?}",
        describe_writes(&got[0])
    );
    Ok(())
}

/// #53: with three namespaces in a thread, namespace `""` lists one checkpoint.
pub async fn multiple_namespaces(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    for ns in ["", "child:1", "child:2"] {
        put_plain(saver, &in_ns(&thread, ns), &loop_metadata(0)).await?;
    }
    let got = list_root(saver, &thread, ListOptions::default()).await?;
    ensure_eq!(got.len(), 1, "checkpoints listed in the root namespace");
    Ok(())
}
