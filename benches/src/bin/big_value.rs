//! Peak memory of one big string value in state: `big_value [none|memory|sqlite|postgres] [MB]`.
//!
//! Builds an `MB`-megabyte string (default 200), runs a two-node graph (S5's chain) whose
//! input writes it into a `LastValue` channel, on the given saver, and prints the value
//! size, the resident set before the run and the process's peak resident set (`VmHWM`) in
//! MiB, with the peak's ratio to the value (after subtracting the resident set before the
//! string was built).

use std::process::ExitCode;

use stategraph::{update, RunConfig, Value};
use stategraph_benches::io_runs::proc_mib;
use stategraph_benches::io_store::{IoResult, IoSaver};
use stategraph_benches::scenarios::compile;
use stategraph_benches::scenarios_io::big_chain;

async fn run(kind: &str, mb: usize) -> IoResult<()> {
    let base = proc_mib("VmRSS");
    let store = match kind {
        "none" => None,
        other => Some(IoSaver::open(other, "big_value").await?),
    };
    let graph = compile(&big_chain(2), store.as_ref().map(IoSaver::saver))?;
    let big = Value::from("x".repeat(mb << 20));
    let input = update([("big", big), ("counter", Value::from(0))]);
    let before = proc_mib("VmRSS");
    let out = graph.invoke(input, &RunConfig::thread("big")).await?;
    let len = out.get("big").and_then(Value::as_str).map_or(0, str::len);
    let peak = proc_mib("VmHWM");
    if let Some(store) = store {
        store.close().await?;
    }
    let value_mib = len as f64 / (1 << 20) as f64;
    println!(
        "{{\"saver\": \"{kind}\", \"value_mib\": {value_mib:.1}, \"rss_base_mib\": {base:.1}, \
         \"rss_before_run_mib\": {before:.1}, \"peak_mib\": {peak:.1}, \"peak_over_value\": {:.2}}}",
        (peak - base) / value_mib
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kind = args.first().map_or("memory", String::as_str).to_owned();
    let mb = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(&kind, mb)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("big_value: {e}");
            ExitCode::FAILURE
        }
    }
}
