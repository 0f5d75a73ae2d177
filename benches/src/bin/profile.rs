//! Runs one scenario a given number of times and prints the mean wall time per invoke:
//! the workload to profile (`valgrind --tool=callgrind`, `perf record`) or to try a
//! variant quickly.
//!
//! Usage: `profile [s1|s1same|s2|s3] [INVOKES] [none|memory|sqlite] [async|sync|exit]`
//! (default: `s2 20 memory async`).

use std::process::ExitCode;
use std::time::Instant;

use stategraph::{Durability, RunConfig};
use stategraph_benches::savers::{Backend, SaverKind};
use stategraph_benches::scenarios::{
    chain, chain_input, compile, fanout, fanout_input, seed, seed_input, Input, CHAIN_LEN,
};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let scenario = arg(0).unwrap_or("s2").to_owned();
    let invokes: usize = arg(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let backend = match arg(2) {
        Some("none") => Backend::None,
        Some("sqlite") => Backend::Saver(SaverKind::Sqlite),
        _ => Backend::Saver(SaverKind::Memory),
    };
    let durability = match arg(3) {
        Some("sync") => Durability::Sync,
        Some("exit") => Durability::Exit,
        _ => Durability::Async,
    };
    let (graph, input, same_thread): (_, fn() -> Input, bool) = match scenario.as_str() {
        "s1" => (seed(), seed_input, false),
        "s1same" => (seed(), seed_input, true),
        "s3" => (fanout(), fanout_input, false),
        _ => (chain(CHAIN_LEN), chain_input, false),
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async move {
        let compiled = compile(&graph, backend.open().await?)?;
        let start = Instant::now();
        for i in 0..invokes {
            let thread = if same_thread {
                "same".to_owned()
            } else {
                format!("t{i}")
            };
            let _ = compiled
                .invoke(input(), &RunConfig::thread(thread).durability(durability))
                .await?;
        }
        Ok::<_, stategraph::Error>(start.elapsed())
    });
    match result {
        Ok(elapsed) => {
            let per = elapsed.as_secs_f64() * 1e6 / invokes.max(1) as f64;
            println!("{scenario} x{invokes} ({backend}, {durability:?}): {per:.1} µs/invoke");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{scenario} failed: {e}");
            ExitCode::FAILURE
        }
    }
}
