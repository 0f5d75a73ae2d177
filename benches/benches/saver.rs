//! Checkpoint saver benchmarks: `put`, `put_writes`, `get_tuple` and `list` over
//! realistic checkpoints, one harness for every saver of
//! [`SaverKind::available`](stategraph_benches::savers::SaverKind::available).
//!
//! The state is small (four ~200-byte messages, a counter, a name, a trigger) or holds a
//! 1 MiB string. Everything is reached through `Arc<dyn CheckpointSaver>`, as the engine
//! reaches it. Bench ids are `<operation>/<saver>/<case>`.
// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use stategraph_benches::fixtures::{big_step, small_step, task_id, task_writes, PutArgs};
use stategraph_benches::savers::SaverKind;
use stategraph_checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions};
use tokio::runtime::Runtime;

/// Distinct checkpoints cycled through by the `put` bench (one thread per cycle).
const POOL: usize = 256;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
}

/// Puts `args` as the next checkpoint of `thread` after `parent` (if any).
async fn put(saver: &dyn CheckpointSaver, thread: &str, parent: Option<&PutArgs>, args: &PutArgs) {
    let mut config = CheckpointConfig::thread(thread);
    config.checkpoint_id = parent.map(|p| p.checkpoint.id.clone());
    saver
        .put(
            &config,
            &args.checkpoint,
            &args.metadata,
            &args.new_versions,
        )
        .await
        .expect("put");
}

/// A saver holding thread `thread` of `n` small checkpoints, each with one task's
/// writes; returns it with the id of the middle checkpoint.
async fn populated(kind: SaverKind, thread: &str, n: u64) -> (Arc<dyn CheckpointSaver>, String) {
    let saver = kind.open().await.expect("open saver");
    let steps: Vec<PutArgs> = (0..n).map(small_step).collect();
    for (i, args) in steps.iter().enumerate() {
        let parent = i.checked_sub(1).map(|p| &steps[p]);
        put(saver.as_ref(), thread, parent, args).await;
        let config = CheckpointConfig::for_checkpoint(thread, "", args.checkpoint.id.clone());
        saver
            .put_writes(
                &config,
                &task_writes(),
                &task_id(i as u64),
                "~__pregel_pull, agent",
            )
            .await
            .expect("put_writes");
    }
    let mid = steps[steps.len() / 2].checkpoint.id.clone();
    (saver, mid)
}

fn bench_put(c: &mut Criterion) {
    let rt = runtime();
    let pool: Vec<PutArgs> = (0..POOL as u64).map(small_step).collect();
    let big = big_step();
    let threads: Vec<String> = (0..100_000).map(|i| format!("t{i}")).collect();
    let mut group = c.benchmark_group("put");
    configure(&mut group);
    for kind in SaverKind::available() {
        // A new checkpoint each time: cycles through the pool, one thread per cycle, in a
        // fresh saver per sample (so the store grows only within a sample).
        group.bench_function(format!("{kind}/small"), |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let (pool, threads) = (&pool, &threads);
                async move {
                    let saver = kind.open().await.expect("open saver");
                    let start = Instant::now();
                    for j in 0..iters as usize {
                        let k = j % POOL;
                        let parent = k.checked_sub(1).map(|p| &pool[p]);
                        let thread = &threads[(j / POOL) % threads.len()];
                        put(saver.as_ref(), thread, parent, &pool[k]).await;
                    }
                    start.elapsed()
                }
            })
        });
        // The same 1 MiB checkpoint put again (it replaces itself, so memory stays flat):
        // the cost of serializing and storing the big value.
        let saver = rt.block_on(kind.open()).expect("open saver");
        group.bench_function(format!("{kind}/1MiB"), |b| {
            b.to_async(&rt)
                .iter(|| put(saver.as_ref(), "big", None, &big))
        });
    }
    group.finish();
}

fn bench_put_writes(c: &mut Criterion) {
    let rt = runtime();
    let writes = task_writes();
    let mut group = c.benchmark_group("put_writes");
    configure(&mut group);
    for kind in SaverKind::available() {
        // Three writes of a new task each time, against one checkpoint.
        group.bench_function(format!("{kind}/3_writes"), |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let writes = &writes;
                async move {
                    let saver = kind.open().await.expect("open saver");
                    let args = small_step(0);
                    put(saver.as_ref(), "w", None, &args).await;
                    let config = CheckpointConfig::for_checkpoint("w", "", args.checkpoint.id);
                    let tasks: Vec<String> = (0..iters).map(task_id).collect();
                    let start = Instant::now();
                    for task in &tasks {
                        saver
                            .put_writes(&config, writes, task, "~__pregel_pull, agent")
                            .await
                            .expect("put_writes");
                    }
                    start.elapsed()
                }
            })
        });
    }
    group.finish();
}

fn bench_get_tuple(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("get_tuple");
    configure(&mut group);
    for kind in SaverKind::available() {
        let (saver, mid) = rt.block_on(populated(kind, "read", 100));
        let latest = CheckpointConfig::thread("read");
        let by_id = CheckpointConfig::for_checkpoint("read", "", mid);
        group.bench_function(format!("{kind}/latest_of_100"), |b| {
            b.to_async(&rt)
                .iter(|| async { black_box(saver.get_tuple(&latest).await.expect("get_tuple")) })
        });
        group.bench_function(format!("{kind}/by_id_of_100"), |b| {
            b.to_async(&rt)
                .iter(|| async { black_box(saver.get_tuple(&by_id).await.expect("get_tuple")) })
        });
        let big_saver = rt.block_on(async {
            let s = kind.open().await.expect("open saver");
            put(s.as_ref(), "big", None, &big_step()).await;
            s
        });
        let big = CheckpointConfig::thread("big");
        group.bench_function(format!("{kind}/latest_1MiB"), |b| {
            b.to_async(&rt)
                .iter(|| async { black_box(big_saver.get_tuple(&big).await.expect("get_tuple")) })
        });
    }
    group.finish();
}

fn bench_list(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("list");
    configure(&mut group);
    for kind in SaverKind::available() {
        for n in [100, 1000] {
            let (saver, _) = rt.block_on(populated(kind, "read", n));
            let config = CheckpointConfig::thread("read");
            let all = ListOptions::default();
            group.bench_function(format!("{kind}/all_of_{n}"), |b| {
                b.to_async(&rt).iter(|| async {
                    black_box(saver.list(Some(&config), &all).await.expect("list"))
                })
            });
            let ten = ListOptions::default().limit(10);
            group.bench_function(format!("{kind}/limit_10_of_{n}"), |b| {
                b.to_async(&rt).iter(|| async {
                    black_box(saver.list(Some(&config), &ten).await.expect("list"))
                })
            });
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    bench_put,
    bench_put_writes,
    bench_get_tuple,
    bench_list
);
criterion_main!(benches);
