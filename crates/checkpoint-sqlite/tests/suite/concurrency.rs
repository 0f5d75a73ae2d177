//! Concurrency: readers list while a writer puts, many `put_writes` run at once, and two
//! savers (as two processes would) share one file; no `SQLITE_BUSY` reaches the caller and
//! no reader sees half a transaction.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource,
    ListOptions, Value,
};
use stategraph_checkpoint_sqlite::SqliteSaver;

use super::support::TempSaver;

const WRITES_PER_TASK: usize = 5;

fn id(n: usize) -> String {
    format!("1ef00000-0000-6000-8000-{n:012}")
}

async fn put(saver: &dyn CheckpointSaver, thread: &str, n: usize) -> CheckpointConfig {
    let mut cp = Checkpoint::empty(id(n), "2025-01-01T00:00:00+00:00");
    cp.channel_values.insert("n".into(), Value::from(n));
    let mut config = CheckpointConfig::thread(thread);
    config.checkpoint_id = n.checked_sub(1).map(id);
    let md = CheckpointMetadata::new(CheckpointSource::Loop, n as i64);
    saver
        .put(&config, &cp, &md, &Default::default())
        .await
        .expect("put")
}

fn batch(tag: usize) -> Vec<(String, Value)> {
    (0..WRITES_PER_TASK)
        .map(|i| (format!("ch{i}"), Value::from(tag * 100 + i)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn readers_list_while_a_writer_puts() {
    const CHECKPOINTS: usize = 60;
    let saver = Arc::new(TempSaver::new("readers"));
    let done = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..4 {
        let (saver, done) = (Arc::clone(&saver), Arc::clone(&done));
        readers.push(tokio::spawn(async move {
            let mut last = 0;
            let mut rounds = 0;
            while !done.load(Ordering::Acquire) || rounds == 0 {
                rounds += 1;
                let listed = saver
                    .list(
                        Some(&CheckpointConfig::thread("t")),
                        &ListOptions::default(),
                    )
                    .await
                    .expect("list while writing");
                assert!(listed.len() >= last, "a checkpoint disappeared");
                last = listed.len();
                for t in &listed {
                    // put_writes is one transaction: all of a batch or none of it.
                    let n = t.pending_writes.len();
                    assert!(n == 0 || n == WRITES_PER_TASK, "saw {n} writes of a batch");
                }
                saver
                    .get_tuple(&CheckpointConfig::thread("t"))
                    .await
                    .expect("get_tuple while writing");
            }
            rounds
        }));
    }
    for n in 0..CHECKPOINTS {
        let stored = put(&**saver, "t", n).await;
        saver
            .put_writes(&stored, &batch(n), "task", "")
            .await
            .expect("put_writes while reading");
    }
    done.store(true, Ordering::Release);
    for r in readers {
        assert!(r.await.expect("reader task") > 0);
    }
    let listed = saver
        .list(None, &ListOptions::default())
        .await
        .expect("final list");
    assert_eq!(listed.len(), CHECKPOINTS);
    assert!(listed
        .iter()
        .all(|t| t.pending_writes.len() == WRITES_PER_TASK));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_put_writes_in_parallel_from_two_savers_on_one_file() {
    const TASKS: usize = 48;
    let first = Arc::new(TempSaver::new("parallel"));
    // A second saver on the same file stands in for another process.
    let second = Arc::new(SqliteSaver::open(first.file.path()).expect("second saver"));
    let stored = put(&**first, "t", 0).await;
    let mut handles = Vec::new();
    for task in 0..TASKS {
        let stored = stored.clone();
        let (first, second) = (Arc::clone(&first), Arc::clone(&second));
        handles.push(tokio::spawn(async move {
            let saver: &dyn CheckpointSaver = if task % 2 == 0 { &**first } else { &*second };
            saver
                .put_writes(&stored, &batch(task), &format!("task-{task:03}"), "")
                .await
                .expect("parallel put_writes");
            // Readers on either saver run in between.
            saver
                .list(None, &ListOptions::default())
                .await
                .expect("parallel list");
        }));
    }
    for h in handles {
        h.await.expect("task");
    }
    for saver in [&**first as &dyn CheckpointSaver, &*second] {
        let tuple = saver
            .get_tuple(&stored)
            .await
            .expect("get")
            .expect("stored");
        let mut per_task: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for w in &tuple.pending_writes {
            per_task
                .entry(w.task_id.as_str())
                .or_default()
                .push(&w.value);
        }
        assert_eq!(per_task.len(), TASKS);
        for (task, values) in per_task {
            let n: usize = task
                .trim_start_matches("task-")
                .parse()
                .expect("task number");
            let want: Vec<Value> = batch(n).into_iter().map(|(_, v)| v).collect();
            assert_eq!(values, want.iter().collect::<Vec<_>>(), "{task}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_in_memory_saver_serves_parallel_callers() {
    let saver = Arc::new(SqliteSaver::in_memory().expect("open"));
    let mut handles = Vec::new();
    for t in 0..16 {
        let saver = Arc::clone(&saver);
        handles.push(tokio::spawn(async move {
            let thread = format!("t{t}");
            for n in 0..5 {
                let stored = put(&*saver, &thread, n).await;
                saver
                    .put_writes(&stored, &batch(n), "task", "")
                    .await
                    .expect("put_writes");
                saver
                    .list(None, &ListOptions::default().limit(3))
                    .await
                    .expect("list");
            }
        }));
    }
    for h in handles {
        h.await.expect("task");
    }
    let all = saver
        .list(None, &ListOptions::default())
        .await
        .expect("list");
    assert_eq!(all.len(), 16 * 5);
}
