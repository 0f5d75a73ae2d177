//! The SQLite saver's share of S2 (`chain100`, durability `async`): the saves of one
//! invoke, replayed against `SqliteSaver` one transaction per op or in group commits, with
//! `synchronous` FULL or NORMAL.
//!
//! The saves are recorded from a real S2 invoke (the engine's `put` and `put_writes`
//! calls, in order, with their arguments), then replayed on a fresh database file per
//! repetition under a new thread id. The figure is the saver's time per super-step (the
//! replay time of one invoke / 100): what the background writer of durability `async`
//! spends, which bounds S2 on SQLite from below once the engine overlaps it with the run.
//!
//! A second part runs S2 itself (the engine, durability `async`) on SQLite: the engine's
//! background writer hands what is queued to `SqliteSaver::put_batch` (group commit);
//! beside it, [`PerOp`] saves a batch op by op, so that every save is its own transaction.
//!
//! Usage: `group_commit [REPS] [INVOKES]` (defaults 20 and 5). Prints one line per mode:
//! median (min–max) µs per super-step over the repetitions.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use stategraph::{Durability, RunConfig};
use stategraph_benches::scenarios::{chain, chain_input, compile, CHAIN_LEN};
use stategraph_checkpoint::saver::put_each;
use stategraph_checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    MemorySaver, Result, SaveOp, Value,
};
use stategraph_checkpoint_sqlite::{SqliteSaver, Synchronous};

/// A saver that records every save (and stores it in memory, so the run reads back).
struct Recorder {
    inner: MemorySaver,
    ops: Mutex<Vec<SaveOp>>,
}

/// Records each `put` and `put_writes`; a batch is recorded op by op. Everything else is
/// the memory saver's, but for `is_in_process`: the recording is of the saves durability
/// `async` hands to a saver that does I/O (the background writer's batches), which SQLite
/// replays.
#[async_trait]
impl stategraph_checkpoint::DelegatingSaver for Recorder {
    fn inner(&self) -> &dyn CheckpointSaver {
        &self.inner
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        self.ops.lock().expect("ops").push(SaveOp::Put {
            config: config.clone(),
            checkpoint: Arc::new(checkpoint.clone()),
            metadata: metadata.clone(),
            new_versions: new_versions.clone(),
        });
        self.inner
            .put(config, checkpoint, metadata, new_versions)
            .await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        self.ops.lock().expect("ops").push(SaveOp::PutWrites {
            config: config.clone(),
            writes: writes.to_vec(),
            task_id: task_id.to_owned(),
            task_path: task_path.to_owned(),
        });
        self.inner
            .put_writes(config, writes, task_id, task_path)
            .await
    }

    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        put_each(self, ops).await
    }

    fn is_in_process(&self) -> bool {
        false
    }
}

/// The SQLite saver without its `put_batch`: every op of a batch is its own `put` or
/// `put_writes` call, each in its own transaction (the engine before group commit).
struct PerOp(SqliteSaver);

#[async_trait]
impl stategraph_checkpoint::DelegatingSaver for PerOp {
    fn inner(&self) -> &dyn CheckpointSaver {
        &self.0
    }

    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        put_each(self, ops).await
    }
}

/// S2 on SQLite through the engine (durability `async`): µs per super-step of each invoke
/// (`invoke` returns once its saves are committed).
async fn engine_s2(sync: Synchronous, group: bool, invokes: usize) -> Vec<f64> {
    let path = std::env::temp_dir().join(format!(
        "stategraph-group-commit-engine-{}.sqlite",
        std::process::id()
    ));
    remove(&path);
    let sqlite = SqliteSaver::open(&path)
        .and_then(|s| s.with_synchronous(sync))
        .expect("open");
    let saver: Arc<dyn CheckpointSaver> = if group {
        Arc::new(sqlite)
    } else {
        Arc::new(PerOp(sqlite))
    };
    let compiled = compile(&chain(CHAIN_LEN), Some(saver)).expect("compile S2");
    let mut per_step = Vec::new();
    for i in 0..=invokes {
        let config = RunConfig::thread(format!("e{i}")).durability(Durability::Async);
        let start = Instant::now();
        let _ = compiled
            .invoke(chain_input(), &config)
            .await
            .expect("invoke");
        if i > 0 {
            per_step.push(start.elapsed().as_secs_f64() * 1e6 / CHAIN_LEN as f64);
        }
    }
    drop(compiled);
    remove(&path);
    per_step
}

/// Prints `label: median (min–max)`.
fn report(label: &str, mut per_step: Vec<f64>) {
    per_step.sort_by(f64::total_cmp);
    let median = per_step[per_step.len() / 2];
    println!(
        "{label}: {median:.1} µs/super-step ({:.1}–{:.1})",
        per_step[0],
        per_step[per_step.len() - 1]
    );
}

/// The saves of one S2 invoke in durability `async`.
async fn record() -> Vec<SaveOp> {
    let recorder = Arc::new(Recorder {
        inner: MemorySaver::new(),
        ops: Mutex::new(Vec::new()),
    });
    let compiled = compile(&chain(CHAIN_LEN), Some(recorder.clone())).expect("compile S2");
    let _ = compiled
        .invoke(
            chain_input(),
            &RunConfig::thread("rec").durability(Durability::Async),
        )
        .await
        .expect("invoke S2");
    let ops = recorder.ops.lock().expect("ops").clone();
    ops
}

/// `ops` moved to thread `thread`.
fn on_thread(ops: &[SaveOp], thread: &str) -> Vec<SaveOp> {
    let mut ops = ops.to_vec();
    for op in &mut ops {
        match op {
            SaveOp::Put { config, .. } | SaveOp::PutWrites { config, .. } => {
                config.thread_id = thread.to_owned();
            }
        }
    }
    ops
}

/// One way of saving.
#[derive(Clone, Copy)]
struct Mode {
    sync: Synchronous,
    /// Ops per transaction; `None`: one call per op (one transaction each).
    batch: Option<usize>,
}

/// The pragma's name of `sync`.
fn sync_name(sync: Synchronous) -> &'static str {
    match sync {
        Synchronous::Full => "FULL",
        Synchronous::Normal => "NORMAL",
    }
}

impl Mode {
    fn name(self) -> String {
        let sync = sync_name(self.sync);
        match self.batch {
            None => format!("{sync:6} one transaction per op"),
            Some(n) if n >= 10_000 => format!("{sync:6} group commit, whole invoke"),
            Some(n) => format!("{sync:6} group commit, {n} ops per transaction"),
        }
    }
}

async fn replay(saver: &SqliteSaver, ops: &[SaveOp], mode: Mode) -> Result<()> {
    match mode.batch {
        Some(n) => {
            for chunk in ops.chunks(n) {
                saver.put_batch(chunk).await?;
            }
        }
        None => {
            for op in ops {
                saver.put_batch(std::slice::from_ref(op)).await?;
            }
        }
    }
    Ok(())
}

fn remove(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let (reps, invokes) = (arg(1, 20), arg(2, 5));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let ops = record().await;
        let puts = ops
            .iter()
            .filter(|op| matches!(op, SaveOp::Put { .. }))
            .count();
        println!(
            "S2 saves per invoke: {} ({} puts, {} put_writes); {reps} repetitions per mode",
            ops.len(),
            puts,
            ops.len() - puts
        );
        let modes = [Synchronous::Full, Synchronous::Normal]
            .into_iter()
            .flat_map(|sync| {
                [None, Some(8), Some(64), Some(usize::MAX)]
                    .into_iter()
                    .map(move |batch| Mode { sync, batch })
            });
        for mode in modes {
            let mut per_step = Vec::with_capacity(reps);
            for rep in 0..=reps {
                let path = std::env::temp_dir().join(format!(
                    "stategraph-group-commit-{}-{rep}.sqlite",
                    std::process::id()
                ));
                remove(&path);
                let saver = SqliteSaver::open(&path)
                    .and_then(|s| s.with_synchronous(mode.sync))
                    .expect("open");
                let run = on_thread(&ops, &format!("t{rep}"));
                let start = Instant::now();
                replay(&saver, &run, mode).await.expect("replay");
                let elapsed = start.elapsed();
                drop(saver);
                remove(&path);
                if rep > 0 {
                    // The first repetition warms caches and is not counted.
                    per_step.push(elapsed.as_secs_f64() * 1e6 / CHAIN_LEN as f64);
                }
            }
            report(&format!("saver replay, {}", mode.name()), per_step);
        }
        for sync in [Synchronous::Full, Synchronous::Normal] {
            for group in [false, true] {
                let label = format!(
                    "engine S2 async, {:6} {}",
                    sync_name(sync),
                    if group {
                        "group commit (the writer's put_batch)"
                    } else {
                        "one transaction per op"
                    }
                );
                report(&label, engine_s2(sync, group, invokes).await);
            }
        }
    });
}
