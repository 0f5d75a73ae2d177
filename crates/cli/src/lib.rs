//! The `stategraph` command: read, check, move and tidy checkpoint databases written by
//! stategraph or by Python LangGraph, SQLite files and Postgres databases alike, without
//! the graph that wrote them; and `serve`, an Agent Server on a Postgres database (the
//! `serve` feature, off by default: without it the command builds neither the server nor
//! the graph engine, and `serve` only says how to get it).
//!
//! Layout (as sqlx-cli's): [`opt`] holds the clap types, one module per command under
//! [`commands`], [`db`] opens databases (read-only unless the command writes),
//! [`checkpoint_ref`] resolves checkpoints named by id prefix or `step:N`,
//! [`snapshot`] derives what LangGraph's `StateSnapshot` shows from a checkpoint alone,
//! [`state`] reads a checkpoint with its DeltaChannel values rebuilt,
//! [`render`] turns values into JSON or readable text, [`style`] handles colours, tables
//! and progress bars. Data goes to stdout, messages and progress to stderr.
//!
//! Exit codes: 0 on success, 1 when the command failed (the reason is printed on stderr)
//! or when `verify` found errors (rows that do not decode, a damaged file; with
//! `--strict`, objects outside LangGraph's safe types), 2 for a command-line mistake
//! (clap).

use std::io::Write;
use std::process::ExitCode;

pub mod checkpoint_ref;
pub mod commands;
pub mod db;
pub mod error;
pub mod opt;
pub mod render;
pub mod replay;
pub mod sizes;
pub mod snapshot;
pub mod state;
pub mod style;
pub mod task_names;

pub use error::{CliError, Result};

use opt::{Cli, Command};
use style::Style;

/// What every command gets: the output mode and stdout.
pub struct Ctx {
    /// `--json` was given.
    pub json: bool,
    /// Colours for human output.
    pub style: Style,
    out: std::io::BufWriter<std::io::Stdout>,
}

impl Ctx {
    /// Writes text to stdout.
    pub fn print(&mut self, text: &str) -> Result<()> {
        self.out.write_all(text.as_bytes())?;
        Ok(())
    }

    /// Writes a JSON value and a newline to stdout.
    pub fn print_json(&mut self, value: &serde_json::Value) -> Result<()> {
        serde_json::to_writer_pretty(&mut self.out, value).map_err(std::io::Error::from)?;
        self.out.write_all(b"\n")?;
        Ok(())
    }

    /// The raw stdout writer (for streamed JSON).
    pub fn out(&mut self) -> &mut impl Write {
        &mut self.out
    }
}

/// Runs a parsed command line and returns the process exit code; errors are printed on
/// stderr.
pub fn main(cli: Cli) -> ExitCode {
    // The server's workers and requests run on all cores; the other commands on one.
    #[cfg(feature = "serve")]
    let mut builder = if matches!(cli.command, Command::Serve(_)) {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    #[cfg(not(feature = "serve"))]
    let mut builder = tokio::runtime::Builder::new_current_thread();
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut ctx = Ctx {
        json: cli.json,
        style: Style::detect(cli.no_color),
        out: std::io::BufWriter::new(std::io::stdout()),
    };
    let result = runtime.block_on(run(cli.command, &mut ctx));
    let flushed = ctx.out.flush();
    match (result, flushed) {
        (Ok(code), Ok(())) => code,
        (Err(e), _) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        (Ok(_), Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        (Ok(_), Err(e)) => {
            eprintln!("error: output: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs one command.
pub async fn run(command: Command, ctx: &mut Ctx) -> Result<ExitCode> {
    use commands::*;
    match command {
        Command::Threads(a) => threads::run(ctx, &a.db).await,
        Command::History(a) => history::run(ctx, &a).await,
        Command::Show(a) => show::run(ctx, &a).await,
        Command::Diff(a) => diff::run(ctx, &a).await,
        Command::Dump(a) => dump::run(ctx, &a.db, &a.thread).await,
        Command::Stats(a) => stats::run(ctx, &a).await,
        Command::Verify(a) => verify::run(ctx, &a).await,
        Command::Copy(a) => copy::run(ctx, &a).await,
        Command::Prune(a) => maintain::prune(ctx, &a).await,
        Command::DeleteThread(a) => maintain::delete(ctx, &a).await,
        Command::CopyThread(a) => maintain::copy_thread(ctx, &a).await,
        Command::Store(c) => store::run(ctx, &c).await,
        #[cfg(feature = "serve")]
        Command::Serve(a) => serve::run(ctx, &a).await,
        #[cfg(not(feature = "serve"))]
        Command::Serve(_) => Err(CliError::Unavailable(
            "`serve` is not in this build of stategraph: install it with \
             `cargo install --path crates/cli --features serve`"
                .to_owned(),
        )),
    }
}
