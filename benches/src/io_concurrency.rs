//! S7 concurrency: several processes, each with N workers invoking the seed graph on
//! distinct threads of one Postgres database for a fixed time, as `bench_langgraph.py`'s
//! `run_s7` and `s7worker` do (a worker here is a tokio task; Python's is a thread).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value as J};
use stategraph::RunConfig;
use stategraph_checkpoint_postgres::PostgresSaver;

use crate::io_runs::{median, percentile};
use crate::io_store::{admin, fresh_database, IoResult};
use crate::scenarios::{compile, seed, seed_input};

/// Seconds between the start of the processes and the start of the timed run, for the
/// processes to connect and warm up (Python gives its processes 6 s to import).
const START_DELAY: f64 = 2.0;

/// Seconds since the Unix epoch.
fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// CPU seconds (user + system) of this process so far, from `/proc/self/stat` (ticks of
/// 1/100 s, Linux's `USER_HZ`); 0 where unreadable.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesized command name; utime and stime are the 14th and 15th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    match (tick(11), tick(12)) {
        (Some(u), Some(s)) => (u + s) / 100.0,
        _ => 0.0,
    }
}

/// One process of S7: `workers` tasks invoking the seed graph on threads of their own
/// from `start_at` (Unix seconds) for `duration` seconds. Returns the invokes that ended
/// before the deadline, this process's CPU seconds, and p50 / p99 latency in ms.
pub async fn worker(
    url: &str,
    process: usize,
    workers: usize,
    start_at: f64,
    duration: f64,
) -> IoResult<J> {
    let saver = Arc::new(PostgresSaver::connect(url).await?);
    let graph = Arc::new(compile(&seed(), Some(saver))?);
    for i in 0..20 {
        let config = RunConfig::thread(format!("warm-{process}-{i}"));
        let _ = graph.invoke(seed_input(), &config).await?;
    }
    let wait = start_at - now();
    if wait < 0.0 {
        eprintln!("WARNING: start barrier missed by {:.2} s", -wait);
    }
    tokio::time::sleep(Duration::from_secs_f64(wait.max(0.0))).await;
    let stop = Instant::now() + Duration::from_secs_f64(duration);
    let cpu0 = cpu_seconds();
    let mut tasks = Vec::new();
    for task in 0..workers {
        let graph = graph.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            for i in 0.. {
                let start = Instant::now();
                let config = RunConfig::thread(format!("p{process}-t{task}-{i}"));
                let _ = graph.invoke(seed_input(), &config).await?;
                if Instant::now() >= stop {
                    break;
                }
                lat.push(start.elapsed().as_secs_f64());
            }
            Ok::<_, stategraph::Error>(lat)
        }));
    }
    let mut lat = Vec::new();
    for task in tasks {
        lat.extend(task.await??);
    }
    let cpu = cpu_seconds() - cpu0;
    Ok(json!({
        "count": lat.len(), "cpu_s": cpu,
        "p50_ms": median(&lat) * 1e3, "p99_ms": percentile(&lat, 99.0) * 1e3,
    }))
}

/// S7 with `workers` per process: a fresh database, `processes` runs of
/// `exe s7worker …` started together, their figures combined as Python combines them
/// (total invokes per second, median of the processes' p50, largest p99).
pub async fn run(
    exe: &Path,
    processes: usize,
    workers: usize,
    duration: f64,
    rep: usize,
) -> IoResult<J> {
    let db = format!("sg_io_s7_{workers}_{}", std::process::id());
    let url = fresh_database(&db).await?;
    let start_at = now() + START_DELAY;
    let children = (0..processes)
        .map(|p| {
            Command::new(exe)
                .args(["s7worker", "--url", &url])
                .args([
                    "--process",
                    &p.to_string(),
                    "--workers",
                    &workers.to_string(),
                ])
                .args(["--start-at", &start_at.to_string()])
                .args(["--duration", &duration.to_string()])
                .stdout(Stdio::piped())
                .spawn()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut outs = Vec::new();
    for child in children {
        let out = child.wait_with_output()?;
        if !out.status.success() {
            return Err(format!("an S7 worker failed: {}", out.status).into());
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let last = text.lines().last().ok_or("an S7 worker printed nothing")?;
        outs.push(serde_json::from_str::<J>(last)?);
    }
    admin(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).await?;
    let field = |k: &str| -> Vec<f64> { outs.iter().filter_map(|o| o[k].as_f64()).collect() };
    let total: f64 = field("count").iter().sum();
    let cpu: f64 = field("cpu_s").iter().sum();
    Ok(json!({
        "scenario": "S7", "variant": format!("{processes}x{workers}"), "cp": "postgres",
        "rep": rep, "invokes_per_s": total / duration,
        "client_cpu_ms_per_invoke": cpu / total.max(1.0) * 1e3,
        "p50_ms": median(&field("p50_ms")),
        "p99_ms": field("p99_ms").into_iter().fold(0.0, f64::max),
    }))
}
