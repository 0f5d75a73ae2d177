//! Engine benchmarks: scenarios S1-S3 of `shared/bench/SCENARIOS.md`, with no saver and
//! with each saver of [`SaverKind`](stategraph_benches::savers::SaverKind).
//!
//! Criterion times one `invoke` (ids `S1_seed/<backend>/<variant>`, ...); S2's time per
//! super-step is the time per invoke divided by its 100 steps, as `bench_langgraph.py`
//! divides it (`compare` does the division). Each sample opens a fresh saver and compiles
//! the graph again, so what one sample stores does not slow the next, and runs one
//! untimed warm-up invoke first, as the Python driver does.
// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode};
use stategraph::checkpoint::CheckpointSaver;
use stategraph::{CompiledGraph, Durability, RunConfig, State, StateGraph};
use stategraph_benches::savers::Backend;
use stategraph_benches::scenarios::{
    chain, chain_input, compile, fanout, fanout_input, seed, seed_input, typed_chain, Counter,
    Input, CHAIN_LEN, FANOUT,
};
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// How the thread ids of a sample's invokes are chosen.
#[derive(Clone, Copy)]
enum Threads {
    /// A new thread per invoke (`t0`, `t1`, ...).
    New,
    /// One thread for every invoke of the sample.
    Same,
}

/// Times `iters` invokes of `graph` compiled against a fresh saver of `backend`.
async fn run_sample<S: State>(
    graph: &StateGraph<S>,
    backend: Backend,
    input: fn() -> Input,
    threads: Threads,
    durability: Durability,
    iters: u64,
) -> Duration {
    let saver: Option<Arc<dyn CheckpointSaver>> = backend.open().await.expect("open saver");
    let compiled: CompiledGraph<S> = compile(graph, saver).expect("graph compiles");
    let config = |i: u64| {
        let thread = match threads {
            Threads::New => format!("t{i}"),
            Threads::Same => "same".to_owned(),
        };
        RunConfig::thread(thread).durability(durability)
    };
    let _ = compiled
        .invoke(
            input(),
            &RunConfig::thread("warm-up").durability(durability),
        )
        .await
        .expect("warm-up invoke");
    let start = Instant::now();
    for i in 0..iters {
        let out = compiled.invoke(input(), &config(i)).await.expect("invoke");
        let _ = black_box(out);
    }
    start.elapsed()
}

/// 20 samples of equal size ("flat": an invoke of S2 on SQLite takes about 0.1 s, too
/// long for criterion's growing samples), 2 s each bench after 0.5 s of warm-up.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
}

fn s1_seed(c: &mut Criterion) {
    let rt = runtime();
    let graph = seed();
    let mut group = c.benchmark_group("S1_seed");
    configure(&mut group);
    for backend in Backend::all() {
        for (name, threads) in [("new", Threads::New), ("same", Threads::Same)] {
            group.bench_function(format!("{backend}/{name}"), |b| {
                b.to_async(&rt).iter_custom(|iters| {
                    run_sample(
                        &graph,
                        backend,
                        seed_input,
                        threads,
                        Durability::Async,
                        iters,
                    )
                })
            });
        }
    }
    group.finish();
}

fn s2_chain(c: &mut Criterion) {
    let rt = runtime();
    let graph = chain(CHAIN_LEN);
    let typed: StateGraph<Counter> = typed_chain(CHAIN_LEN);
    let mut group = c.benchmark_group("S2_chain100");
    configure(&mut group);
    for backend in Backend::all() {
        let modes: &[(&str, Durability)] = match backend {
            // Durability only matters with a saver.
            Backend::None => &[("async", Durability::Async)],
            Backend::Saver(_) => &[
                ("async", Durability::Async),
                ("sync", Durability::Sync),
                ("exit", Durability::Exit),
            ],
        };
        for &(name, durability) in modes {
            group.bench_function(format!("{backend}/{name}"), |b| {
                b.to_async(&rt).iter_custom(|iters| {
                    run_sample(
                        &graph,
                        backend,
                        chain_input,
                        Threads::New,
                        durability,
                        iters,
                    )
                })
            });
        }
        group.bench_function(format!("{backend}/typed_async"), |b| {
            b.to_async(&rt).iter_custom(|iters| {
                run_sample(
                    &typed,
                    backend,
                    chain_input,
                    Threads::New,
                    Durability::Async,
                    iters,
                )
            })
        });
    }
    group.finish();
}

fn s3_fanout(c: &mut Criterion) {
    let rt = runtime();
    let graph = fanout();
    let mut group = c.benchmark_group("S3_fanout");
    configure(&mut group);
    for backend in Backend::all() {
        group.bench_function(format!("{backend}/send{FANOUT}"), |b| {
            b.to_async(&rt).iter_custom(|iters| {
                run_sample(
                    &graph,
                    backend,
                    fanout_input,
                    Threads::New,
                    Durability::Async,
                    iters,
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, s1_seed, s2_chain, s3_fanout);
criterion_main!(benches);
