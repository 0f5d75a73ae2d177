//! The command line: every command, argument and flag (clap derive types only).

use clap::{Args, Parser, Subcommand};

/// Read, check, move and tidy checkpoint databases written by stategraph or by Python
/// LangGraph (SQLite files and Postgres databases). Reading never changes a database.
/// `serve` runs an Agent Server (LangGraph's HTTP API) on a Postgres database.
#[derive(Debug, Parser)]
#[command(name = "stategraph", version, about, long_about = None)]
pub struct Cli {
    /// Print machine-readable JSON instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Never colour the output (colours are also off when `NO_COLOR` is set or stdout is
    /// not a terminal).
    #[arg(long, global = true)]
    pub no_color: bool,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Every thread: namespaces, checkpoints, latest step, last update, bytes, interrupts.
    Threads(DbArg),
    /// The checkpoint tree of a thread, forks as branches.
    History(HistoryArgs),
    /// The state at a checkpoint (the latest by default).
    Show(ShowArgs),
    /// What changed between two checkpoints, channel by channel.
    Diff(DiffArgs),
    /// The thread's rows as `MemorySaver::dump()` prints them (storage, writes, blobs).
    Dump(ThreadArgs),
    /// Bytes per channel and per checkpoint, and how storage grows along a thread.
    Stats(StatsArgs),
    /// Decodes every row; reports rows that do not decode or hold unsafe objects.
    Verify(DbArg),
    /// Copies threads from one database to another (SQLite and Postgres, either way).
    Copy(CopyArgs),
    /// Thins threads: keeps only the latest checkpoint, or deletes them.
    Prune(PruneArgs),
    /// Deletes every checkpoint, write and blob of threads.
    DeleteThread(DeleteArgs),
    /// Copies a thread to a new thread id in the same database.
    CopyThread(CopyThreadArgs),
    /// Reads the long-term store (LangGraph's `SqliteStore`/`PostgresStore` tables).
    #[command(subcommand)]
    Store(StoreCommand),
    /// Runs an Agent Server (LangGraph's HTTP API) on a Postgres database.
    ///
    /// Graphs are Rust code, so this command has none of its own: it is an API process
    /// for the graphs that worker processes registered in the database. A worker process
    /// is a program of yours built with the `stategraph-server` crate
    /// (`Server::builder().database_url(..).workers(N).graph("name", ..)`); on start it
    /// records its graphs (id and drawing) in the database. `stategraph serve` answers
    /// the assistants endpoints from those records, creates threads, queues runs for the
    /// workers and streams their events to clients (the `langgraph-sdk` client,
    /// `RemoteGraph`), whichever worker runs them; run as many as you like on one
    /// database. Reading or updating a thread's state (`/threads/{id}/state`, `history`)
    /// needs the graph's code: ask a process that has it; `GET /threads/{id}` has the
    /// latest values.
    ///
    /// `--demo` serves the built-in demo graphs instead, with workers in this process:
    /// `seed` (the quickstart graph) and `agent` (a ReAct agent whose scripted model adds
    /// two numbers with a tool). It registers them too, so other `stategraph serve`
    /// processes on the same database answer for them.
    ///
    /// Prints `listening on http://HOST:PORT` once it takes requests; stops on Ctrl-C or
    /// SIGTERM (its workers hand their running runs back to the queue).
    #[cfg(feature = "serve")]
    Serve(ServeArgs),
    /// Not in this build: the Agent Server needs the `serve` feature
    /// (`cargo install --path crates/cli --features serve`).
    #[cfg(not(feature = "serve"))]
    Serve(ServeMissingArgs),
}

/// Whatever was given to `serve` in a build without it (the command only says how to get it).
#[cfg(not(feature = "serve"))]
#[derive(Debug, Args)]
pub struct ServeMissingArgs {
    /// Ignored: `serve` is not in this build.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<String>,
}

/// `serve` arguments.
#[cfg(feature = "serve")]
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The Postgres database for checkpoints, threads, runs and registered graphs
    /// (default: `$DATABASE_URL`, else postgresql://postgres@127.0.0.1:5432/postgres).
    #[arg(long)]
    pub database_url: Option<String>,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// The port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 2024)]
    pub port: u16,
    /// Serve the built-in demo graphs `seed` and `agent`, with workers in this process.
    #[arg(long)]
    pub demo: bool,
    /// With `--demo`: how many runs this process works on at once.
    #[arg(long, default_value_t = 4, requires = "demo")]
    pub workers: usize,
    /// With `--demo`: how long (milliseconds) a worker holds a run without renewing its
    /// lease; a run whose worker died is taken over by another once it runs out.
    #[arg(long, default_value_t = 10_000, requires = "demo")]
    pub lease_ms: u64,
}

/// `store` subcommands. A namespace is written with its labels joined by `.`, as the
/// store's `prefix` column holds it (`users.42`).
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// The namespaces holding items (optionally under a prefix, to a depth).
    Namespaces(StoreNamespacesArgs),
    /// One item by namespace and key.
    Get(StoreGetArgs),
    /// The items under a namespace prefix, optionally filtered on their values.
    Search(StoreSearchArgs),
}

/// `store namespaces` arguments.
#[derive(Debug, Args)]
pub struct StoreNamespacesArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// Only namespaces starting with these labels (`a.b`; `*` matches any one label).
    #[arg(long)]
    pub prefix: Option<String>,
    /// Only namespaces ending with these labels (`a.b`; `*` matches any one label).
    #[arg(long)]
    pub suffix: Option<String>,
    /// Truncate namespaces to this many labels (deduplicated).
    #[arg(long)]
    pub max_depth: Option<usize>,
    /// At most this many namespaces.
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    /// Skip this many namespaces first.
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
}

/// `store get` arguments.
#[derive(Debug, Args)]
pub struct StoreGetArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// The namespace (`users.42`).
    pub namespace: String,
    /// The key.
    pub key: String,
}

/// `store search` arguments.
#[derive(Debug, Args)]
pub struct StoreSearchArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// The namespace prefix (`users`; empty: every item).
    #[arg(default_value = "")]
    pub prefix: String,
    /// A JSON object of conditions on the values (`{"theme": "dark"}`, or operators such
    /// as `{"age": {"$gt": 30}}`), as LangGraph's `search(filter=...)`.
    #[arg(long)]
    pub filter: Option<String>,
    /// At most this many items.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Skip this many items first.
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
}

/// A database: a SQLite file path or a `postgresql://` URL.
#[derive(Debug, Args)]
pub struct DbArg {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
}

/// A database and a thread.
#[derive(Debug, Args)]
pub struct ThreadArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// The thread id.
    pub thread: String,
}

/// `history` arguments.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// The thread id.
    pub thread: String,
    /// The checkpoint namespace (default: the root, `""`).
    #[arg(long, default_value = "")]
    pub ns: String,
    /// At most this many checkpoints (the newest).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Only checkpoints older than this checkpoint id.
    #[arg(long)]
    pub before: Option<String>,
}

/// `show` arguments.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// The thread id.
    pub thread: String,
    /// The checkpoint id (default: the latest).
    pub checkpoint: Option<String>,
    /// The checkpoint namespace (default: the root, `""`).
    #[arg(long, default_value = "")]
    pub ns: String,
    /// Show only this channel's value.
    #[arg(long)]
    pub channel: Option<String>,
}

/// `diff` arguments.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// The thread id.
    pub thread: String,
    /// The older checkpoint id.
    pub a: String,
    /// The newer checkpoint id.
    pub b: String,
    /// The checkpoint namespace (default: the root, `""`).
    #[arg(long, default_value = "")]
    pub ns: String,
}

/// `stats` arguments.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// Only this thread (default: every thread).
    pub thread: Option<String>,
}

/// `copy` arguments.
#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The source database.
    pub from: String,
    /// The target database (created if it is a new SQLite file).
    pub to: String,
    /// Copy only these threads (repeatable; default: every thread).
    #[arg(long = "thread")]
    pub threads: Vec<String>,
    /// Replace threads that already exist in the target (default: refuse).
    #[arg(long)]
    pub overwrite: bool,
    /// Show what would be copied, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `prune` arguments.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// The threads to prune.
    #[arg(required = true)]
    pub threads: Vec<String>,
    /// Keep only each namespace's latest checkpoint (with its writes).
    #[arg(long, conflicts_with = "delete", required_unless_present = "delete")]
    pub keep_latest: bool,
    /// Delete the threads entirely.
    #[arg(long)]
    pub delete: bool,
    /// Show what would go, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `delete-thread` arguments.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// The threads to delete.
    #[arg(required = true)]
    pub threads: Vec<String>,
    /// Show what would go, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `copy-thread` arguments.
#[derive(Debug, Args)]
pub struct CopyThreadArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// The thread to copy.
    pub source: String,
    /// The new thread id.
    pub target: String,
    /// Replace the target thread if it exists (default: refuse).
    #[arg(long)]
    pub overwrite: bool,
    /// Show what would be copied, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}
