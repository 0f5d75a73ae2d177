//! One S4 (or S4′) turn on Postgres taken apart: runs the chat of `io_bench` for
//! `--turns` turns on a fresh database through a saver wrapper that times every call,
//! then prints, for the last `--last` turns, the median time of a turn and of each saver
//! call it made (`get_tuple`, `put`, `put_writes`, `get_delta_channel_history`), and the
//! median of a `get_state` of the latest checkpoint.
//!
//! ```text
//! pg_turn [--turns 1000] [--last 50] [--variant -|delta] [--keep 1] [--cache BYTES]
//!         [--toast lz4|server] [--log 1] [--reads 1]
//! ```
//!
//! `--log 1` logs every statement of the run with its duration in the server's log
//! (`ALTER DATABASE … SET log_min_duration_statement = 0`; needs a superuser).
//!
//! `--reads 1` runs no turns: on the database a `--keep 1` run left, it times 20
//! `get_tuple` and 20 `get_delta_channel_history` calls of the latest checkpoint.
//!
//! `--cache 0 --toast server` reads and writes as the saver did before its blob cache and
//! lz4 compression.
//!
//! The database (`pg_turn_s4` or `pg_turn_s4delta`, beside the one of
//! `STATEGRAPH_BENCH_PG`) is dropped at the end unless `--keep 1`, which leaves it for
//! `EXPLAIN (ANALYZE, BUFFERS)` of the saver's statements.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use indexmap::IndexMap;
use stategraph::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointTuple, DeltaChannelHistory, Result, SaveOp, Value,
};
use stategraph::RunConfig;
use stategraph_benches::io_runs::median;
use stategraph_benches::io_store::{admin, fresh_database, IoResult};
use stategraph_benches::scenarios::compile;
use stategraph_benches::scenarios_io::{
    chat, chat_delta, chat_input, delta_user_messages, message_pool, user_messages,
};
use stategraph_checkpoint_postgres::{PostgresOptions, PostgresSaver, ToastCompression};

/// A saver that times the calls it forwards.
struct Timed {
    inner: PostgresSaver,
    calls: Mutex<Vec<(&'static str, Duration)>>,
    /// The ops handed to `put_batch` since the last [`Timed::take`].
    batched_ops: AtomicUsize,
}

impl Timed {
    fn note(&self, what: &'static str, start: Instant) {
        let took = start.elapsed();
        self.calls.lock().expect("calls").push((what, took));
    }

    /// The calls timed since the last `take`, and the ops their batches held.
    fn take(&self) -> (Vec<(&'static str, Duration)>, usize) {
        let calls = std::mem::take(&mut *self.calls.lock().expect("calls"));
        (calls, self.batched_ops.swap(0, Ordering::Relaxed))
    }
}

/// Times `get_tuple`, `put`, `put_writes`, `put_batch` and `get_delta_channel_history`;
/// every other operation is the Postgres saver's own. `put_batch` goes to the saver's
/// batch (durability `async` hands every save to it): one transaction per batch, timed as
/// one call.
#[async_trait]
impl stategraph::checkpoint::DelegatingSaver for Timed {
    fn inner(&self) -> &dyn CheckpointSaver {
        &self.inner
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        let start = Instant::now();
        let out = self.inner.get_tuple(config).await;
        self.note("get_tuple", start);
        out
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig> {
        let start = Instant::now();
        let out = self
            .inner
            .put(config, checkpoint, metadata, new_versions)
            .await;
        self.note("put", start);
        out
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[(String, Value)],
        task_id: &str,
        task_path: &str,
    ) -> Result<()> {
        let start = Instant::now();
        let out = self
            .inner
            .put_writes(config, writes, task_id, task_path)
            .await;
        self.note("put_writes", start);
        out
    }

    async fn put_batch(&self, ops: &[SaveOp]) -> Result<()> {
        let start = Instant::now();
        let out = self.inner.put_batch(ops).await;
        self.note("put_batch", start);
        self.batched_ops.fetch_add(ops.len(), Ordering::Relaxed);
        out
    }

    async fn get_delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<IndexMap<String, DeltaChannelHistory>> {
        let start = Instant::now();
        let out = self.inner.get_delta_channel_history(config, channels).await;
        self.note("delta_history", start);
        out
    }
}

/// `--key value` arguments.
fn arg(args: &[String], key: &str) -> Option<String> {
    args.iter()
        .position(|a| a == key)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

async fn run(args: &[String]) -> IoResult<()> {
    let turns: usize = arg(args, "--turns").map_or(Ok(1000), |v| v.parse())?;
    let last: usize = arg(args, "--last").map_or(Ok(50), |v| v.parse())?;
    let variant = arg(args, "--variant").unwrap_or_else(|| "-".to_owned());
    let keep = arg(args, "--keep").is_some_and(|v| v == "1");
    let delta = variant == "delta";
    let db = if delta {
        "pg_turn_s4delta"
    } else {
        "pg_turn_s4"
    };
    if arg(args, "--reads").is_some_and(|v| v == "1") {
        return reads(db, args).await;
    }
    let url = fresh_database(db).await?;
    if arg(args, "--log").is_some_and(|v| v == "1") {
        // Every statement's duration in the server's log (a superuser's setting).
        admin(&format!(
            "ALTER DATABASE {db} SET log_min_duration_statement = 0"
        ))
        .await?;
    }
    let toast = match arg(args, "--toast").as_deref() {
        Some("server") => ToastCompression::ServerDefault,
        _ => ToastCompression::Lz4,
    };
    let options = PostgresOptions::default().with_toast_compression(toast);
    let mut inner = PostgresSaver::connect_with(&url, &options).await?;
    if let Some(bytes) = arg(args, "--cache") {
        inner = inner.with_blob_cache(bytes.parse()?);
    }
    let saver = Arc::new(Timed {
        inner,
        calls: Mutex::default(),
        batched_ops: AtomicUsize::new(0),
    });
    let pool = message_pool();
    let (users, graph) = if delta {
        (delta_user_messages(&pool, turns), chat_delta(pool))
    } else {
        (user_messages(&pool, turns), chat(pool))
    };
    let graph = compile(&graph, Some(saver.clone() as Arc<dyn CheckpointSaver>))?;
    let config = RunConfig::thread("chat");
    let mut turn_ms = Vec::new();
    let mut per_call: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut batched_ops = 0;
    for (t, message) in users.iter().enumerate() {
        saver.take();
        let start = Instant::now();
        let _ = graph.invoke(chat_input(message), &config).await?;
        let took = start.elapsed();
        let (calls, ops) = saver.take();
        if t + last >= turns {
            batched_ops += ops;
            turn_ms.push(took.as_secs_f64() * 1e3);
            let mut sums: BTreeMap<&'static str, f64> = BTreeMap::new();
            for (what, d) in calls {
                per_call
                    .entry(what)
                    .or_default()
                    .push(d.as_secs_f64() * 1e3);
                *sums.entry(what).or_default() += d.as_secs_f64() * 1e3;
                *counts.entry(what).or_default() += 1;
            }
            for (what, sum) in sums {
                per_call
                    .entry(leak(format!("{what} (sum per turn)")))
                    .or_default()
                    .push(sum);
            }
        }
    }
    let mut get_state = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        graph.get_state(&config).await?;
        get_state.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let stats = saver.inner.blob_cache_stats();
    println!(
        "variant {variant}, {turns} turns, toast {toast:?}, cache {}; the last {last}:",
        arg(args, "--cache").unwrap_or_else(|| "default".to_owned())
    );
    println!(
        "  turn                         {:8.3} ms (median)",
        median(&turn_ms)
    );
    for (what, xs) in &per_call {
        let n = counts.get(what).map_or(String::new(), |c| {
            format!(" ({:.1} per turn)", *c as f64 / last as f64)
        });
        println!("  {what:<28} {:8.3} ms{n}", median(xs));
    }
    if let Some(batches) = counts.get("put_batch") {
        println!(
            "  ops per put_batch            {:8.1}",
            batched_ops as f64 / *batches as f64
        );
    }
    println!(
        "  get_state latest             {:8.3} ms (median of 20)",
        median(&get_state)
    );
    println!(
        "  blob cache: {} hits, {} entries, {} bytes",
        stats.hits, stats.entries, stats.bytes
    );
    drop(graph);
    drop(saver);
    if !keep {
        admin(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).await?;
    }
    Ok(())
}

/// `--reads 1`: the reads of a turn alone, on a kept database.
async fn reads(db: &str, args: &[String]) -> IoResult<()> {
    let url = stategraph_benches::io_store::url_with_database(
        &stategraph_benches::io_store::postgres_admin_url(),
        db,
    );
    let mut saver = PostgresSaver::connect(&url).await?;
    if let Some(bytes) = arg(args, "--cache") {
        saver = saver.with_blob_cache(bytes.parse()?);
    }
    let config = CheckpointConfig::thread("chat");
    let (mut get, mut hist) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let start = Instant::now();
        let tuple = saver.get_tuple(&config).await?.ok_or("no checkpoint")?;
        get.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        saver
            .get_delta_channel_history(&tuple.config, &["messages".to_owned()])
            .await?;
        hist.push(start.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "get_tuple {:.3} ms, get_delta_channel_history {:.3} ms (medians of 20), {} hits",
        median(&get),
        median(&hist),
        saver.blob_cache_stats().hits
    );
    Ok(())
}

/// A label that lives for the program (a handful per run).
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("pg_turn: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pg_turn: {e}");
            ExitCode::FAILURE
        }
    }
}
