//! Scenarios S4–S7 (chat, bigstate, history, concurrency) on the in-memory, SQLite and
//! Postgres savers; each run prints one JSON line in `bench_langgraph.py`'s form, and
//! `report` prints the Rust / Python tables. `scripts/bench_io.sh` runs it all.
//!
//! ```text
//! io_bench run --scenario S4 --cp sqlite [--turns 1000] [--rep 0]
//! io_bench run --scenario S5 --cp postgres --variant str|obj [--invokes 3] [--rep 0]
//! io_bench s7 --workers 4 [--processes 2] [--duration 10] [--rep 0]
//! io_bench s7worker --url URL --process 0 --workers 4 --start-at UNIX_S --duration S
//! io_bench report RUST.jsonl PYTHON.jsonl [memory,sqlite,postgres]
//! ```
//!
//! Postgres: the server of `STATEGRAPH_BENCH_PG` (default
//! `postgresql://postgres@127.0.0.1:5432/postgres`); each run creates a database and drops
//! it. SQLite files go to `STATEGRAPH_BENCH_DATA` (default: the temporary directory).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::Value as J;
use stategraph_benches::io_store::{IoResult, IoSaver};
use stategraph_benches::{io_concurrency, io_report, io_runs, report};

/// `--key value` pairs.
struct Args(HashMap<String, String>);

impl Args {
    fn parse(args: &[String]) -> IoResult<Args> {
        let mut map = HashMap::new();
        let mut it = args.iter();
        while let Some(k) = it.next() {
            let key = k.strip_prefix("--").ok_or(format!("unexpected {k:?}"))?;
            let value = it.next().ok_or(format!("{k} needs a value"))?;
            map.insert(key.to_owned(), value.clone());
        }
        Ok(Args(map))
    }

    fn str(&self, key: &str, default: &str) -> String {
        self.0
            .get(key)
            .cloned()
            .unwrap_or_else(|| default.to_owned())
    }

    fn num<T: std::str::FromStr>(&self, key: &str, default: T) -> IoResult<T> {
        match self.0.get(key) {
            Some(v) => v.parse().map_err(|_| format!("--{key} {v:?}").into()),
            None => Ok(default),
        }
    }
}

/// One S4 or S5 run on fresh storage.
async fn run(args: &Args) -> IoResult<J> {
    let scenario = args.str("scenario", "S4");
    let cp = args.str("cp", "memory");
    let variant = args.str("variant", if scenario == "S5" { "str" } else { "-" });
    let store = IoSaver::open(&cp, &format!("{scenario}_{variant}_{cp}")).await?;
    let result = match scenario.as_str() {
        "S4" => io_runs::chat_and_history(&store, &cp, &variant, args.num("turns", 1000)?).await,
        "S5" => io_runs::bigstate(&store, &cp, &variant, args.num("invokes", 3)?).await,
        other => Err(format!("unknown scenario {other:?}").into()),
    };
    store.close().await?;
    let mut res = result?;
    res["rep"] = args.num::<u64>("rep", 0)?.into();
    Ok(res)
}

async fn main_async(argv: Vec<String>) -> IoResult<()> {
    let (command, rest) = argv
        .split_first()
        .ok_or("usage: io_bench run|s7|s7worker|report …")?;
    if command == "report" {
        let [rust, python, ..] = rest else {
            return Err("usage: io_bench report RUST.jsonl PYTHON.jsonl [cps]".into());
        };
        let cps = rest.get(2).map_or("memory,sqlite,postgres", String::as_str);
        let cps: Vec<&str> = cps.split(',').collect();
        let rust = report::read_python(&PathBuf::from(rust))?;
        let python = report::read_python(&PathBuf::from(python))?;
        print!("{}", io_report::tables(&rust, &python, &cps));
        return Ok(());
    }
    let args = Args::parse(rest)?;
    let out = match command.as_str() {
        "run" => run(&args).await?,
        "s7" => {
            let exe = std::env::current_exe()?;
            io_concurrency::run(
                &exe,
                args.num("processes", 2)?,
                args.num("workers", 1)?,
                args.num("duration", 10.0)?,
                args.num("rep", 0)?,
            )
            .await?
        }
        "s7worker" => {
            io_concurrency::worker(
                &args.str("url", ""),
                args.num("process", 0)?,
                args.num("workers", 1)?,
                args.num("start-at", 0.0)?,
                args.num("duration", 10.0)?,
            )
            .await?
        }
        other => return Err(format!("unknown command {other:?}").into()),
    };
    println!("{out}");
    Ok(())
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
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
    match rt.block_on(main_async(argv)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprint!("io_bench: {e}");
            let mut source = e.source();
            while let Some(s) = source {
                eprint!(": {s}");
                source = s.source();
            }
            eprintln!();
            ExitCode::FAILURE
        }
    }
}
