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
//! picks a free port), and stops on Ctrl-C or SIGTERM after the running runs end.

use stategraph_server::{demo, Server, ServerError};

struct Args {
    database_url: String,
    port: u16,
    workers: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        database_url: std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| "postgresql://postgres@127.0.0.1:5432/postgres".into()),
        port: 2024,
        workers: 4,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--database-url" => args.database_url = value,
            "--port" => args.port = value.parse().map_err(|e| format!("--port: {e}"))?,
            "--workers" => args.workers = value.parse().map_err(|e| format!("--workers: {e}"))?,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(args)
}

async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[tokio::main]
async fn main() -> Result<(), ServerError> {
    // Logs on stderr: each run's lines carry its run_id and thread_id (tracing spans).
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let args = parse_args().map_err(ServerError::Startup)?;
    let server = Server::builder()
        .database_url(&args.database_url)
        .workers(args.workers)
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
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        terminated().await;
        let _ = stop.send(true);
    });
    server.serve(listener, shutdown).await
}
