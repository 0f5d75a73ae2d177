//! `put_writes` (required, behaviours #18–#27): writes come back once per (task, index).
//!
//! A task's writes are the pending writes of the checkpoint they were written against.

use std::collections::BTreeSet;

use stategraph_checkpoint::{map, CheckpointConfig, CheckpointSaver, Value};

use crate::fixtures::{
    describe_writes, get_existing, id_of, in_ns, loop_metadata, put_plain, root, uuid4, write,
    writes_on,
};
use crate::Failure;

/// A fresh thread with one plain root checkpoint; its stored config.
async fn one_checkpoint(saver: &dyn CheckpointSaver) -> Result<CheckpointConfig, Failure> {
    put_plain(saver, &root(&uuid4()), &loop_metadata(0)).await
}

/// #18: one write of one task comes back as one pending write with its value.
pub async fn basic(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = one_checkpoint(saver).await?;
    let task = uuid4();
    saver
        .put_writes(&stored, &[write("channel1", "value1")], &task, "")
        .await?;
    let tuple = get_existing(saver, &stored).await?;
    let found: Vec<_> = tuple
        .pending_writes
        .iter()
        .filter(|w| w.task_id == task && w.channel == "channel1")
        .collect();
    ensure_eq!(found.len(), 1, "writes of the task on channel1");
    ensure_eq!(found[0].value, Value::from("value1"), "written value");
    Ok(())
}

/// #19: three writes of one task in one call come back, each once.
pub async fn multiple_writes_same_task(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = one_checkpoint(saver).await?;
    let task = uuid4();
    let writes = [write("ch1", "v1"), write("ch2", "v2"), write("ch3", "v3")];
    saver.put_writes(&stored, &writes, &task, "").await?;
    let tuple = get_existing(saver, &stored).await?;
    ensure_eq!(
        tuple.pending_writes.len(),
        3,
        "pending writes: {:?}",
        describe_writes(&tuple)
    );
    let channels: BTreeSet<&str> = tuple
        .pending_writes
        .iter()
        .map(|w| w.channel.as_str())
        .collect();
    ensure_eq!(
        channels,
        BTreeSet::from(["ch1", "ch2", "ch3"]),
        "channels written"
    );
    for (ch, value) in &writes {
        let found = writes_on(&tuple, ch);
        ensure!(
            found.len() == 1 && found[0].task_id == task && &found[0].value == value,
            "expected one write ({task}, {ch}, {value:?}), got {:?}",
            describe_writes(&tuple)
        );
    }
    Ok(())
}

/// #20: two tasks writing the same channel at the same index keep a write each.
pub async fn multiple_tasks(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = one_checkpoint(saver).await?;
    let (t1, t2) = (uuid4(), uuid4());
    saver
        .put_writes(&stored, &[write("ch", "from_t1")], &t1, "")
        .await?;
    saver
        .put_writes(&stored, &[write("ch", "from_t2")], &t2, "")
        .await?;
    let tuple = get_existing(saver, &stored).await?;
    ensure_eq!(
        tuple.pending_writes.len(),
        2,
        "pending writes: {:?}",
        describe_writes(&tuple)
    );
    for (task, value) in [(&t1, "from_t1"), (&t2, "from_t2")] {
        let found: Vec<_> = tuple
            .pending_writes
            .iter()
            .filter(|w| &w.task_id == task)
            .collect();
        ensure!(
            found.len() == 1 && found[0].value == Value::from(value),
            "expected one write {value:?} of task {task}, got {:?}",
            describe_writes(&tuple)
        );
    }
    Ok(())
}

/// #21: the task id of a write comes back.
pub async fn preserves_task_id(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = one_checkpoint(saver).await?;
    let task = uuid4();
    saver
        .put_writes(&stored, &[write("ch", "val")], &task, "")
        .await?;
    let tuple = get_existing(saver, &stored).await?;
    ensure!(
        tuple.pending_writes.iter().any(|w| w.task_id == task),
        "no pending write has task_id {task}: {:?}",
        describe_writes(&tuple)
    );
    Ok(())
}

/// #22: a map value written to a channel comes back equal.
pub async fn preserves_channel_and_value(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = one_checkpoint(saver).await?;
    let task = uuid4();
    let value = map! { "data" => 123 };
    saver
        .put_writes(&stored, &[write("my_channel", value.clone())], &task, "")
        .await?;
    let tuple = get_existing(saver, &stored).await?;
    let found = writes_on(&tuple, "my_channel");
    ensure!(
        found.len() == 1 && found[0].task_id == task,
        "expected one write of task {task} on my_channel, got {:?}",
        describe_writes(&tuple)
    );
    ensure_eq!(found[0].value, value, "written value");
    Ok(())
}

/// #23: a write with a task path is accepted and comes back (see
/// `tightened::task_path_orders_writes` for the path itself).
pub async fn task_path(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = one_checkpoint(saver).await?;
    saver
        .put_writes(&stored, &[write("ch", "v")], &uuid4(), "a:b:c")
        .await?;
    let tuple = get_existing(saver, &stored).await?;
    ensure_eq!(
        tuple.pending_writes.len(),
        1,
        "pending writes: {:?}",
        describe_writes(&tuple)
    );
    Ok(())
}

/// #24: the same call made twice stores one write.
pub async fn idempotent(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = one_checkpoint(saver).await?;
    let task = uuid4();
    for _ in 0..2 {
        saver
            .put_writes(&stored, &[write("ch", "val")], &task, "")
            .await?;
    }
    let tuple = get_existing(saver, &stored).await?;
    ensure_eq!(
        tuple.pending_writes.len(),
        1,
        "pending writes: {:?}",
        describe_writes(&tuple)
    );
    Ok(())
}

/// #25: writes to the reserved channels `__error__` and `__interrupt__` come back.
pub async fn special_channels(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let stored = one_checkpoint(saver).await?;
    let task = uuid4();
    let writes = [
        write("__error__", "something went wrong"),
        write("__interrupt__", map! { "reason" => "human_input" }),
    ];
    saver.put_writes(&stored, &writes, &task, "").await?;
    let tuple = get_existing(saver, &stored).await?;
    for (ch, value) in &writes {
        let found = writes_on(&tuple, ch);
        ensure!(
            found.len() == 1 && found[0].task_id == task && &found[0].value == value,
            "expected one write ({task}, {ch}, {value:?}), got {:?}",
            describe_writes(&tuple)
        );
    }
    Ok(())
}

/// #26: writes against checkpoints of two namespaces stay with their own checkpoint.
pub async fn across_namespaces(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let mut stored = Vec::new();
    for (ns, value) in [("", "root_val"), ("child:1", "child_val")] {
        let config = put_plain(saver, &in_ns(&thread, ns), &loop_metadata(0)).await?;
        saver
            .put_writes(&config, &[write("ch", value)], &uuid4(), "")
            .await?;
        stored.push((config, value));
    }
    for (config, value) in &stored {
        let tuple = get_existing(saver, config).await?;
        let found = writes_on(&tuple, "ch");
        ensure!(
            found.len() == 1 && found[0].value == Value::from(*value),
            "namespace {:?}: expected one write {value:?}, got {:?}",
            config.checkpoint_ns,
            describe_writes(&tuple)
        );
    }
    Ok(())
}

/// #27: writes belong to their checkpoint only: the next checkpoint has none.
pub async fn cleared_on_next_checkpoint(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = uuid4();
    let stored1 = put_plain(saver, &root(&thread), &loop_metadata(0)).await?;
    saver
        .put_writes(&stored1, &[write("ch", "old_write")], &uuid4(), "")
        .await?;
    let parent = CheckpointConfig::for_checkpoint(&thread, "", id_of(&stored1, "stored config")?);
    let stored2 = put_plain(saver, &parent, &loop_metadata(1)).await?;
    let tuple = get_existing(saver, &stored2).await?;
    ensure!(
        tuple.pending_writes.is_empty(),
        "the second checkpoint should have no pending writes, got {:?}",
        describe_writes(&tuple)
    );
    Ok(())
}
