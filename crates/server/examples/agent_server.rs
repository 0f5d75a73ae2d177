//! An Agent Server with the quickstart graph registered as `seed` (START → get_address →
//! END, setting `name` and `address`) and a ReAct agent with a scripted model as `agent`
//! (it adds the first two numbers of the question with its `add` tool). Start it with
//!
//! ```text
//! cargo run --release -p stategraph-server --example agent_server -- \
//!     --database-url postgresql://postgres@127.0.0.1:5432/postgres --port 2024 --workers 4
//! ```
//!
//! and call it with the Python client: `langgraph_sdk.get_sync_client(url="http://127.0.0.1:2024")`.
//! It prints `listening on http://127.0.0.1:PORT` once it takes requests (`--port 0`
//! picks a free port), and stops on Ctrl-C or SIGTERM, handing its running runs back to
//! the queue. `--workers 0` makes an API-only process; several processes on one database
//! share its queue (`--help` lists the flags).

use std::time::Duration;

use stategraph_server::{demo, Server, ServerError};

// mimalloc, as `stategraph serve`: a seed run allocates about a thousand times in this
// process, and glibc's malloc and free were a fifth of its instructions (callgrind: 850k
// -> 671k instructions per fresh-thread `runs.wait`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const HELP: &str = "\
agent_server: an Agent Server with the graphs `seed` and `agent`

USAGE: agent_server [--database-url URL] [--port PORT] [--workers N] [--lease-ms MS]

  --database-url URL  Postgres for checkpoints, threads and runs
                      (default $DATABASE_URL, else postgresql://postgres@127.0.0.1:5432/postgres)
  --port PORT         HTTP port on 127.0.0.1; 0 picks a free one (default 2024)
  --workers N         runs worked on at once by this process; 0 makes an API-only process
                      that queues and streams runs that other processes run (default 4)
  --lease-ms MS       how long a worker holds a run without renewing its lease; a run whose
                      worker died is taken over by another worker once it runs out
                      (default 10000, renewed every third of it)
  --help              this text
";

struct Args {
    database_url: String,
    port: u16,
    workers: usize,
    lease: Duration,
}

/// The flags; `Ok(None)` for `--help`.
fn parse_args() -> Result<Option<Args>, String> {
    let mut args = Args {
        database_url: std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".into()),
        port: 2024,
        workers: 4,
        lease: Duration::from_secs(10),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(None);
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--database-url" => args.database_url = value,
            "--port" => args.port = value.parse().map_err(|e| format!("--port: {e}"))?,
            "--workers" => args.workers = value.parse().map_err(|e| format!("--workers: {e}"))?,
            "--lease-ms" => {
                let ms: u64 = value.parse().map_err(|e| format!("--lease-ms: {e}"))?;
                args.lease = Duration::from_millis(ms);
            }
            other => return Err(format!("unknown flag {other} (see --help)")),
        }
    }
    Ok(Some(args))
}

#[tokio::main]
async fn main() -> Result<(), ServerError> {
    // Logs on stderr: each run's lines carry its run_id and thread_id (tracing spans).
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let Some(args) = parse_args().map_err(ServerError::Startup)? else {
        print!("{HELP}");
        return Ok(());
    };
    let server = Server::builder()
        .database_url(&args.database_url)
        .workers(args.workers)
        .lease(args.lease)
        .graph("seed", demo::seed)
        .graph("agent", demo::agent)
        .build()
        .await?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .map_err(|e| ServerError::Startup(format!("binding port {}: {e}", args.port)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| ServerError::Startup(e.to_string()))?;
    println!("listening on http://{addr}");
    server
        .serve(listener, stategraph_server::shutdown_signal())
        .await
}
