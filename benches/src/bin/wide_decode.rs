//! Decoding wide maps: time per key of the legacy JSON reader, the JSON text reader the
//! Postgres saver uses for JSONB columns, and the msgpack decoder, at 10 000 to 400 000
//! keys (linear readers keep the time per key flat); then, with a Postgres URL, a
//! 100 000-key row read on a current-thread runtime while a 10 ms ticker runs (decoding
//! on the blocking pool lets the ticker keep ticking).
//!
//! Usage: `wide_decode [POSTGRES_URL]` (release build:
//! `cargo run --release -p stategraph-benches --bin wide_decode -- postgresql://...`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use stategraph_checkpoint::serde::json_text::{self, JsonOptions};
use stategraph_checkpoint::serde::msgpack;
use stategraph_checkpoint::serde::{JsonPlusSerializer, Serializer};
use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource, Map, Value,
};

fn wide_json(n: usize) -> String {
    let mut s = String::with_capacity(n * 16);
    s.push('{');
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("\"key-{i}\":{i}"));
    }
    s.push('}');
    s
}

fn wide_map(n: usize) -> Value {
    let mut map = Map::with_capacity(n);
    for i in 0..n {
        map.push_unique(format!("key-{i}"), i as i64);
    }
    Value::Map(map)
}

/// Best of `reps` runs of `f`, in seconds.
fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    println!("| keys | legacy JSON | JSON text (JSONB) | msgpack |");
    println!("|---:|---:|---:|---:|");
    for n in [10_000, 100_000, 200_000, 400_000] {
        let text = wide_json(n);
        let packed = msgpack::encode(&wide_map(n)).expect("encode");
        let legacy = best(5, || {
            JsonPlusSerializer
                .loads_typed("json", text.as_bytes())
                .expect("legacy");
        });
        let options = JsonOptions {
            big_ints_as_floats: true,
            max_depth: 512,
        };
        let jsonb = best(5, || {
            json_text::parse(text.as_bytes(), &options).expect("jsonb");
        });
        let mp = best(5, || {
            msgpack::decode(&packed).expect("msgpack");
        });
        let cell = |s: f64| format!("{:.1} ms ({:.0} ns/key)", s * 1e3, s * 1e9 / n as f64);
        println!(
            "| {n} | {} | {} | {} |",
            cell(legacy),
            cell(jsonb),
            cell(mp)
        );
    }
    if let Some(url) = std::env::args().nth(1) {
        postgres_ticker(&url);
    }
}

/// Reads a 100 000-key row ten times on a current-thread runtime beside a 10 ms ticker.
fn postgres_ticker(url: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let saver = stategraph_checkpoint_postgres::PostgresSaver::connect(url)
            .await
            .expect("connect");
        saver.setup().await.expect("setup");
        let thread = format!("wide-decode-{}", std::process::id());
        let wide = wide_map(100_000);
        let mut c = Checkpoint::empty(
            stategraph_checkpoint::id::IdGenerator::system().uuid6(0),
            "2025-01-01T00:00:00+00:00",
        );
        c.channel_values.insert("wide".into(), wide.clone());
        c.channel_versions
            .insert("wide".into(), saver.get_next_version(None));
        let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0).with("wide", wide);
        let new = c.channel_versions.clone();
        saver
            .put(&CheckpointConfig::thread(&thread), &c, &metadata, &new)
            .await
            .expect("put");
        let ticks = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&ticks);
        let ticker = tokio::spawn(async move {
            let mut interval = tokio::time::interval(Duration::from_millis(10));
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                interval.tick().await;
                counter.fetch_add(1, Ordering::Relaxed);
            }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let start_ticks = ticks.load(Ordering::Relaxed);
        let t = Instant::now();
        for _ in 0..10 {
            saver
                .get_tuple(&CheckpointConfig::thread(&thread))
                .await
                .expect("get_tuple")
                .expect("a checkpoint");
        }
        let elapsed = t.elapsed();
        let ticked = ticks.load(Ordering::Relaxed) - start_ticks;
        ticker.abort();
        saver.delete_thread(&thread).await.expect("delete");
        println!(
            "\nPostgres: 10 reads of a 100 000-key row (metadata JSONB + blob) in {:.0} ms \
             ({:.1} ms per read); a 10 ms ticker on the same current-thread runtime ticked \
             {ticked} times of {} possible",
            elapsed.as_secs_f64() * 1e3,
            elapsed.as_secs_f64() * 1e2,
            (elapsed.as_millis() / 10)
        );
    });
}
