//! What the fences cost: the time of `put` and `put_writes` on a fenced saver beside an
//! unfenced one, on the same server, alternating rounds. Prints a table; asserts nothing.
//!
//! ```sh
//! cargo run -p stategraph-checkpoint-postgres --example fence_cost -- [URL] [STEPS] [ROUNDS]
//! ```
//!
//! URL defaults to `$STATEGRAPH_TEST_POSTGRES_URL` or the local server; the example works
//! in a schema of its own, dropped at the end. Each step of a thread is a put of a
//! checkpoint with one inline and one blob value, then the writes of two tasks. With
//! `FENCE_COST_ASYNC_COMMIT=1` the sessions commit without waiting for the WAL flush.

use std::time::{Duration, Instant};

use stategraph_checkpoint::{
    list, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Value,
};
use stategraph_checkpoint_postgres::PostgresSaver;
use tokio_postgres::NoTls;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| {
        std::env::var("STATEGRAPH_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".into())
    });
    let steps: usize = args.next().map_or(Ok(300), |s| s.parse())?;
    let rounds: usize = args.next().map_or(Ok(5), |s| s.parse())?;
    let schema = format!("sg_fence_cost_{}", std::process::id());
    let (admin, connection) = tokio_postgres::connect(&url, NoTls).await?;
    tokio::spawn(connection);
    admin
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await?;
    let sep = if url.contains('?') { '&' } else { '?' };
    // FENCE_COST_ASYNC_COMMIT=1: commits do not wait for the WAL flush, which leaves the
    // statements' own cost (on a slow disk the flush dominates every write).
    let async_commit = std::env::var("FENCE_COST_ASYNC_COMMIT").is_ok_and(|v| v == "1");
    let extra = if async_commit {
        "%20-csynchronous_commit%3Doff"
    } else {
        ""
    };
    let in_schema = format!("{url}{sep}options=-csearch_path%3D{schema}{extra}");
    let result = measure(&in_schema, steps, rounds).await;
    admin
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await?;
    let (puts, writes) = result?;
    println!("| saver | put (µs, median of {rounds} rounds) | put_writes (µs) |");
    println!("|---|---|---|");
    for (i, name) in ["unfenced", "fenced"].iter().enumerate() {
        println!(
            "| {name} | {:.0} | {:.0} |",
            median(&puts[i]),
            median(&writes[i])
        );
    }
    Ok(())
}

type PerMode = [Vec<f64>; 2];

async fn measure(
    url: &str,
    steps: usize,
    rounds: usize,
) -> Result<(PerMode, PerMode), Box<dyn std::error::Error>> {
    let savers = [
        PostgresSaver::connect(url).await?.with_fencing(false),
        PostgresSaver::connect(url).await?,
    ];
    savers[0].setup().await?;
    let (mut puts, mut writes): (PerMode, PerMode) = Default::default();
    for round in 0..rounds {
        for (mode, saver) in savers.iter().enumerate() {
            let (put, write) = one_thread(saver, &format!("r{round}m{mode}"), steps).await?;
            puts[mode].push(micros(put, steps));
            writes[mode].push(micros(write, 2 * steps));
        }
    }
    Ok((puts, writes))
}

/// Runs one thread of `steps` steps; returns the time spent in puts and in writes.
async fn one_thread(
    saver: &PostgresSaver,
    thread: &str,
    steps: usize,
) -> Result<(Duration, Duration), Box<dyn std::error::Error>> {
    let (mut put_time, mut write_time) = (Duration::ZERO, Duration::ZERO);
    let mut config = CheckpointConfig::thread(thread);
    let mut version = None;
    for step in 0..steps {
        let v = saver.get_next_version(version.as_ref());
        let id = stategraph_checkpoint::id::IdGenerator::system().uuid6(step as i64);
        let mut cp = Checkpoint::empty(id, "2025-01-01T00:00:00+00:00");
        let mut new = ChannelVersions::default();
        for (channel, value) in [
            ("n", Value::from(step as i64)),
            ("data", list![step as i64, "x"]),
        ] {
            cp.channel_values.insert(channel.into(), value);
            cp.channel_versions.insert(channel.into(), v.clone());
            new.insert(channel.into(), v.clone());
        }
        let md = CheckpointMetadata::new(CheckpointSource::Loop, step as i64);
        let started = Instant::now();
        config = saver.put(&config, &cp, &md, &new).await?;
        put_time += started.elapsed();
        for task in ["task-a", "task-b"] {
            let w = [("n".to_owned(), Value::from(step as i64 + 1))];
            let started = Instant::now();
            saver.put_writes(&config, &w, task, "").await?;
            write_time += started.elapsed();
        }
        version = Some(v);
    }
    Ok((put_time, write_time))
}

fn micros(total: Duration, n: usize) -> f64 {
    total.as_secs_f64() * 1e6 / n as f64
}

fn median(xs: &[f64]) -> f64 {
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}
