//! The command line: every command, argument and flag (clap derive types only).

use clap::{Args, Parser, Subcommand};

use crate::checkpoint_ref::CheckpointRef;

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
    ///
    /// BYTES is a thread's size as `stats` reports it: the bytes the database stores for
    /// the thread in every namespace, its checkpoint rows (checkpoint and metadata
    /// columns), its pending writes and, on Postgres, its channel blobs (the length of
    /// each stored value; `pg_column_size` for Postgres's JSONB columns).
    Threads(DbArg),
    /// The checkpoint tree of a thread: the line to the latest checkpoint (the head) is the
    /// trunk, other branches are drawn as forks; each checkpoint's writes by task name.
    ///
    /// Each line shows a checkpoint's id, step, source (`input`, `loop`, `update`, `fork`),
    /// what runs next, its interrupts and `writes: NAME (N)`: the writes stored against it,
    /// N per task, the task named by the path stored with them -- a node (`__start__`
    /// applies a run's input), the target of a `Send`, `input` for what the client wrote
    /// with its input (the all-zero task id: a resume value, a `Command` update), or
    /// `task c5e27a3e…` (the task id's start) when no path says. `← head` marks the
    /// thread's latest checkpoint, the one `show` shows by default.
    History(HistoryArgs),
    /// The state at a checkpoint (the latest by default).
    ///
    /// A DeltaChannel (which stores its value only at snapshots) is rebuilt from the
    /// nearest stored value and the writes after it, as LangGraph's `get_state` does. The
    /// reducer is recognised from what is stored: LangChain messages fold as
    /// `add_messages`, other lists concatenate. A channel whose reducer is the graph's own
    /// (a dict, a counter) is not guessed: it is shown as its stored value and the writes
    /// since, with a warning; in `--json` it is left out of `values` and described under
    /// `delta_channels` (which says how every DeltaChannel value was obtained).
    Show(ShowArgs),
    /// What changed between two checkpoints, channel by channel.
    ///
    /// DeltaChannel values are rebuilt at both checkpoints as `show` rebuilds them; one
    /// that cannot be is listed as not compared (`not_rebuilt` in `--json`).
    Diff(DiffArgs),
    /// The thread's rows as `MemorySaver::dump()` prints them (storage, writes, blobs).
    ///
    /// Then `delta values`: per checkpoint, each DeltaChannel value that the rows do not
    /// store, rebuilt as `show` rebuilds it (`delta_values` in `--json`).
    Dump(ThreadArgs),
    /// Bytes per channel and per checkpoint, and how storage grows along a thread.
    ///
    /// A thread's size is the one `threads` reports: the bytes the database stores for it
    /// in every namespace, its checkpoint rows (checkpoint and metadata columns), its
    /// pending writes and, on Postgres, its channel blobs. The channel table and the
    /// per-checkpoint figures are those of the root namespace's checkpoints.
    ///
    /// When the per-checkpoint size grows steadily with the thread's length (its total
    /// then grows with the square) and the thread stores more than 1 MiB, a warning names
    /// the channel stored again at every checkpoint and the remedy for what it holds: a
    /// DeltaChannel (a `delta` field in Rust, `DeltaMessagesState` in place of `MessagesState`
    /// for messages, `DeltaChannel` in Python), or pruning old checkpoints.
    Stats(StatsArgs),
    /// Decodes every row: rows that do not decode and damaged files are errors (exit 1);
    /// objects outside LangGraph's safe types are warnings unless `--strict`.
    Verify(VerifyArgs),
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
    /// records its graphs (id, drawing, description) in the database. `stategraph serve`
    /// answers the assistants endpoints from those records, creates threads, queues runs
    /// for the workers and streams their events to clients (the `langgraph-sdk` client,
    /// `RemoteGraph`), whichever worker runs them; run as many as you like on one
    /// database. It reads a thread's state (`/threads/{id}/state`, `history`) with the
    /// graph rebuilt from its description, and updates it as a node without conditional
    /// edges; as a node with conditional edges (code), ask a process that has the graph.
    ///
    /// `--demo` serves the built-in demo graphs, with workers in this process, beside the
    /// registered ones: `seed` (the quickstart graph) and `agent` (a ReAct agent whose
    /// scripted model adds two numbers with a tool). It registers them too, so other
    /// `stategraph serve` processes on the same database answer for them.
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
    /// An origin whose pages may call the API from a browser (`http://localhost:3000`);
    /// repeat it, or give `*` for any (LangGraph's `http.cors.allow_origins`). Default:
    /// none, except `*` with `--demo` (as `langgraph dev`). Preflights are answered either way.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<String>,
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

/// `verify` arguments.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// Count objects outside LangGraph's safe types and the `--allow` classes as errors
    /// (exit 1), as Python's `LANGGRAPH_STRICT_MSGPACK=true` refuses to build them.
    #[arg(long)]
    pub strict: bool,
    /// Accept objects of this class (`module.Class`, e.g. `__main__.Point`; repeatable),
    /// as Python's `allowed_msgpack_modules=[("module", "Class")]` does.
    #[arg(long = "allow", value_name = "MODULE.CLASS", value_parser = parse_class)]
    pub allow: Vec<(String, String)>,
}

/// `module.Class` → `("module", "Class")` (split at the last dot, as Python stores the
/// class's `__module__` and `__name__`).
fn parse_class(s: &str) -> Result<(String, String), String> {
    match s.rsplit_once('.') {
        Some((module, class)) if !module.is_empty() && !class.is_empty() => {
            Ok((module.to_owned(), class.to_owned()))
        }
        _ => Err(format!(
            "{s:?}: write the class with its module, as `module.Class` (e.g. `__main__.Point`)"
        )),
    }
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
    /// Only checkpoints older than this one (an id, a unique id prefix, or `step:N`).
    #[arg(long)]
    pub before: Option<CheckpointRef>,
}

/// `show` arguments.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A SQLite file path or a `postgresql://` URL.
    pub db: String,
    /// The thread id.
    pub thread: String,
    /// The checkpoint (default: the latest): its id, a unique prefix of the id (as git
    /// takes commits), or `step:N` for the checkpoint of step N (`step:-1` is the input;
    /// in a forked thread, the one on the line to the latest checkpoint). A bare number is
    /// an id prefix, never a step.
    pub checkpoint: Option<CheckpointRef>,
    /// The checkpoint namespace (default: the root, `""`).
    #[arg(long, default_value = "")]
    pub ns: String,
    /// Show only this channel's value (for a DeltaChannel whose reducer is unknown: its
    /// stored value and the writes since, and exit code 1).
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
    /// The older checkpoint: an id, a unique id prefix, or `step:N` (as in `show`).
    pub a: CheckpointRef,
    /// The newer checkpoint: an id, a unique id prefix, or `step:N` (as in `show`).
    pub b: CheckpointRef,
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
