//! `serve`: an Agent Server on a Postgres database. Without `--demo` it is an API process
//! for the graphs that worker processes registered in the database; with `--demo` it
//! runs the built-in demo graphs with workers of its own.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use stategraph_server::{demo, Cors, Server, ServerError};

use crate::opt::ServeArgs;
use crate::{Ctx, Result};

/// The database when neither `--database-url` nor `$DATABASE_URL` names one.
const DEFAULT_DATABASE_URL: &str = "postgresql://postgres@127.0.0.1:5432/postgres";

/// Serves until Ctrl-C or SIGTERM.
pub async fn run(ctx: &mut Ctx, args: &ServeArgs) -> Result<ExitCode> {
    #[cfg(feature = "otel")]
    let _traces = traces();
    // Logs on stderr: each run's lines carry its run_id and thread_id (tracing spans).
    // An error means a subscriber is already installed (a host program's, or the one
    // `traces` set up): keep it.
    let _ = tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    let url = args
        .database_url
        .clone()
        .or_else(|| std::env::var("DATABASE_URL").ok())
        .unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
    let cors = if args.cors_origins.is_empty() && args.demo {
        Cors::any()
    } else {
        Cors::origins(&args.cors_origins)
    };
    eprintln!("browser pages may call the API from: {}", cors.describe());
    let mut builder = Server::builder().database_url(&url).cors(cors);
    builder = if args.demo {
        builder
            .workers(args.workers)
            .lease(Duration::from_millis(args.lease_ms))
            .graph("seed", demo::seed)
            .graph("agent", demo::agent)
    } else {
        builder.workers(0)
    };
    let server = builder.build().await?;
    if !args.demo {
        let graphs = server.registered_graphs().await?;
        if graphs.is_empty() {
            eprintln!(
                "no graphs are registered in this database yet: start a worker process \
                 (a program built with stategraph-server, or `stategraph serve --demo`) \
                 on it; its assistants appear here as it starts"
            );
        } else {
            let ids: Vec<&str> = graphs.iter().map(|g| g.graph_id.as_str()).collect();
            eprintln!("assistants registered in the database: {}", ids.join(", "));
        }
    }
    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
        .await
        .map_err(|e| ServerError::Startup(format!("binding {}:{}: {e}", args.host, args.port)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| ServerError::Startup(e.to_string()))?;
    ctx.print(&format!("listening on http://{addr}\n"))?;
    ctx.out().flush()?;
    server
        .serve(listener, stategraph_server::shutdown_signal())
        .await?;
    Ok(ExitCode::SUCCESS)
}

/// With an OTLP endpoint in the environment (`OTEL_EXPORTER_OTLP_ENDPOINT` or
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), the logs on stderr and the runs' spans exported
/// over OTLP; the guard sends the last spans when the server stops.
#[cfg(feature = "otel")]
fn traces() -> Option<stategraph_server::otel::OtelGuard> {
    use tracing_subscriber::filter::LevelFilter;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if !set("OTEL_EXPORTER_OTLP_ENDPOINT") && !set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        return None;
    }
    match stategraph_server::otel::Otel::new().layer() {
        Ok((layer, guard)) => {
            let logs = tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .with_filter(LevelFilter::INFO);
            let _ = tracing_subscriber::registry()
                .with(layer)
                .with(logs)
                .try_init();
            Some(guard)
        }
        Err(e) => {
            eprintln!("traces are not exported: {e}");
            None
        }
    }
}
