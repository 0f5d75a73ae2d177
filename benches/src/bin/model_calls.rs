//! The client's own CPU time per model call: N calls of `ChatOpenAI` to a local
//! OpenAI-compatible server, the CPU time of this process only (the server's excluded),
//! for BENCHMARKS.md beside Python's `ChatOpenAI` on the same server.
//!
//!     cargo run --release -p stategraph-benches --bin model_calls -- BASE_URL MODEL [N]
//!
//! Prints one line per mode (plain, streamed): calls, CPU µs per call (user + system, of
//! every thread of this process, from /proc/self/task/*/schedstat, in nanoseconds), and
//! wall ms per call. The first 10 calls warm up (connection, TLS-free local HTTP) and are
//! not counted. A streamed call takes every chunk (`stream_to`), as Python's `stream()`
//! yields them.

use std::time::Instant;

use stategraph::models::ChatOpenAI;
use stategraph::Message;

/// The CPU time of every thread of this process so far, in nanoseconds.
fn cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| {
            s.split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
        })
        .sum()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (base, model) = match args.as_slice() {
        [b, m, ..] => (b.clone(), m.clone()),
        _ => return Err("usage: model_calls BASE_URL MODEL [N]".into()),
    };
    let n: usize = args.get(2).map_or(Ok(200), |s| s.parse())?;
    let client = ChatOpenAI::new(model)
        .base_url(base)
        .api_key("none")
        .max_tokens(16)
        .temperature(0.0);
    let messages = [Message::system("Be brief."), Message::human("Say hello.")];
    // A streamed call hands each chunk to the caller, which joins their texts, as the
    // Python bench does with `"".join(chunk.content for chunk in model.stream(...))`.
    let one = |stream: bool| {
        let client = &client;
        let messages = &messages;
        async move {
            if !stream {
                return client.call(messages, false).await;
            }
            let mut text = String::new();
            let answer = client
                .stream_to(messages, |chunk| {
                    text.push_str(chunk.content.as_str().unwrap_or(""))
                })
                .await?;
            assert_eq!(text, answer.text());
            Ok(answer)
        }
    };
    for stream in [false, true] {
        for _ in 0..10 {
            one(stream).await?;
        }
        let (cpu0, wall0) = (cpu_ns(), Instant::now());
        for _ in 0..n {
            one(stream).await?;
        }
        let cpu = (cpu_ns() - cpu0) as f64 / n as f64 / 1000.0;
        let wall = wall0.elapsed().as_secs_f64() * 1000.0 / n as f64;
        let mode = if stream { "streamed" } else { "plain" };
        println!("{mode:8} calls={n} client_cpu_us_per_call={cpu:.1} wall_ms_per_call={wall:.2}");
    }
    Ok(())
}
