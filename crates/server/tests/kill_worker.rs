//! `kill -9` a worker process mid-run: one API process and two worker processes (this test
//! binary started again in a server role, so each is a real OS process with the test's
//! graph) share a fresh Postgres database. A client streams a run of `relay` through the
//! API process under the default durability (`async`); the run's `fast` node finishes
//! while `slow`, in the same step, waits for a gate. The worker running it is killed with
//! SIGKILL; the other worker takes the run over when its lease runs out and completes it.
//!
//! Checked: every node execution, counted in a table that outlives the processes, shows
//! that no finished task ran twice (`fast` and `join` once, `slow` started twice and
//! finished once, by the survivor); the client's stream has each node's update once and
//! ends with the final state; the run succeeded on its second claim.
//!
//! A test binary without the libtest harness: its `main` is either the test or, with
//! [`ROLE`] set, one of the server processes. Skipped with a note without Postgres
//! (unless `STATEGRAPH_REQUIRE_POSTGRES` is set) or the venv's Python (unless
//! `STATEGRAPH_INTEROP=1`).

mod support;

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use stategraph::checkpoint::CheckpointSaver;
use stategraph::{CompileOptions, CompiledGraph, State, StateGraph, END, START};
use stategraph_server::Server;

/// The environment variable that makes this binary a server process: `api` or `worker`.
const ROLE: &str = "SG_KILL_WORKER_ROLE";
/// The database of the server processes (and of the node counts).
const DB: &str = "SG_KILL_WORKER_DB";
/// The workers' lease.
const LEASE: Duration = Duration::from_millis(1500);

#[derive(State, Debug)]
struct Relay {
    gate: String,
    quick: i64,
    late: i64,
    sum: i64,
}

/// Records that `node` reached `phase` (`start` or `done`) in this process.
async fn record(node: &str, phase: &str) {
    let url = std::env::var(DB).expect("the database of the server processes");
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect to count");
    tokio::spawn(conn);
    client
        .execute(
            "INSERT INTO node_runs (node, phase, pid) VALUES ($1, $2, $3)",
            &[&node, &phase, &(std::process::id() as i32)],
        )
        .await
        .expect("count a node execution");
}

/// START → {fast, slow}; slow → join → END; fast → END. `slow` waits for the file at
/// `gate` (at most a minute).
fn relay(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<Relay>> {
    let mut graph = StateGraph::<Relay>::new();
    graph.add_node("fast", |_s: Relay| async move {
        record("fast", "start").await;
        record("fast", "done").await;
        RelayUpdate::default().quick(1)
    });
    graph.add_node("slow", |s: Relay| async move {
        record("slow", "start").await;
        for _ in 0..3000 {
            if Path::new(&s.gate).exists() {
                record("slow", "done").await;
                return RelayUpdate::default().late(2);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        RelayUpdate::default().late(-1)
    });
    graph.add_node("join", |s: Relay| async move {
        record("join", "start").await;
        record("join", "done").await;
        RelayUpdate::default().sum(s.quick + s.late)
    });
    graph
        .add_edge(START, "fast")
        .add_edge(START, "slow")
        .add_edge("fast", END)
        .add_edge("slow", "join")
        .add_edge("join", END);
    graph.compile_with(CompileOptions::new().checkpointer(saver))
}

/// A server process: API-only (`api`) or one worker (`worker`); prints its address, then
/// serves until it is killed.
fn serve(role: &str) {
    let url = std::env::var(DB).expect("the database of the server processes");
    let workers = if role == "api" { 0 } else { 1 };
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async move {
        let server = Server::builder()
            .database_url(url)
            .workers(workers)
            .lease(LEASE)
            .graph("relay", relay)
            .build()
            .await
            .expect("build the server");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let addr = listener.local_addr().expect("its address");
        println!("listening on http://{addr}");
        let (_stop, shutdown) = tokio::sync::watch::channel(false);
        server.serve(listener, shutdown).await.expect("serve");
    });
}

/// A server process, killed when dropped (a failing test leaves none behind).
struct Proc(Child);

impl Proc {
    fn pid(&self) -> i32 {
        self.0.id() as i32
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A server process of this binary (its stderr in `logs`), and its address once it takes
/// requests.
async fn spawn(role: &str, url: &str, logs: &Path) -> (Proc, String) {
    let exe = std::env::current_exe().expect("this test binary");
    let log = std::fs::File::create(logs.join(format!("{role}.log"))).expect("a log file");
    let mut child = Command::new(exe)
        .env(ROLE, role)
        .env(DB, url)
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .expect("start a server process");
    let stdout = child.stdout.take().expect("its stdout");
    let child = Proc(child);
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        line
    })
    .await
    .expect("read its address");
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the {role} process did not start ({logs:?}): {line:?}"))
        .to_owned();
    (child, addr)
}

/// Polls `sql` (one integer) until it is at least `at_least`, for at most a minute.
async fn wait_for(pg: &tokio_postgres::Client, sql: &str, at_least: i64) -> i64 {
    let mut n = 0;
    for _ in 0..600 {
        n = pg
            .query_one(sql, &[])
            .await
            .map(|r| r.get::<_, i64>(0))
            .unwrap_or(0);
        if n >= at_least {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    n
}

async fn kill_9_a_worker_mid_run() {
    let Some(python) = support::python() else {
        return;
    };
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let (pg, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    pg.batch_execute("CREATE TABLE node_runs (node text, phase text, pid int)")
        .await
        .expect("the counts table");
    let logs = std::env::temp_dir().join(format!("sg-kill-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&logs).expect("a log folder");

    // One after the other: each creates the tables if they are missing.
    let (api, addr) = spawn("api", &db.url, &logs).await;
    let (w1, _) = spawn("worker", &db.url, &logs).await;
    let (w2, _) = spawn("worker", &db.url, &logs).await;
    let mut workers = vec![w1, w2];

    let gate = logs.join("gate");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/kill_worker.py");
    let client = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(&addr)
        .arg(&gate)
        .kill_on_drop(true)
        .output();
    let client = tokio::spawn(client);

    // `slow` is running; `fast` finished, its writes are stored (not yet a checkpoint of
    // the step: `slow` holds the step open) and its update is published.
    let started = "SELECT count(*) FROM node_runs WHERE node = 'slow' AND phase = 'start'";
    assert_eq!(wait_for(&pg, started, 1).await, 1, "`slow` never started");
    let stored = "SELECT count(*) FROM checkpoint_writes WHERE channel = 'quick'";
    assert_eq!(
        wait_for(&pg, stored, 1).await,
        1,
        "`fast`'s writes not stored"
    );
    let published =
        "SELECT count(*) FROM run_events WHERE event = 'updates' AND data LIKE '%fast%'";
    assert_eq!(
        wait_for(&pg, published, 1).await,
        1,
        "`fast`'s update not published"
    );
    let victim: i32 = pg
        .query_one("SELECT pid FROM node_runs WHERE node = 'slow'", &[])
        .await
        .expect("who runs `slow`")
        .get(0);
    let i = workers
        .iter()
        .position(|w| w.pid() == victim)
        .expect("`slow` runs in a worker process");
    let mut dead = workers.remove(i);
    // SIGKILL: no cleanup, no hand-back, no more heartbeats.
    dead.0.kill().expect("kill -9 the worker");
    dead.0.wait().expect("reap it");
    let survivor = workers.pop().expect("the other worker");
    std::fs::write(&gate, "open").expect("open the gate");

    let out = tokio::time::timeout(Duration::from_secs(120), client)
        .await
        .expect("the client ends within two minutes")
        .expect("the client task")
        .expect("run the client script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "the client script failed (server logs in {logs:?}):\n{stdout}\n{stderr}"
    );

    let rows = pg
        .query(
            "SELECT node, phase, count(*), min(pid), max(pid) FROM node_runs
             GROUP BY node, phase ORDER BY node, phase",
            &[],
        )
        .await
        .expect("the counts");
    let counts: Vec<(String, String, i64)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let expected = [
        ("fast", "done", 1),
        ("fast", "start", 1),
        ("join", "done", 1),
        ("join", "start", 1),
        ("slow", "done", 1),
        ("slow", "start", 2),
    ]
    .map(|(n, p, c)| (n.to_owned(), p.to_owned(), c));
    assert_eq!(counts, expected, "(node, phase, executions)");
    let finisher: i32 = pg
        .query_one(
            "SELECT pid FROM node_runs WHERE node = 'slow' AND phase = 'done'",
            &[],
        )
        .await
        .expect("who finished `slow`")
        .get(0);
    assert_eq!(finisher, survivor.pid(), "the survivor finished the run");
    let row = pg
        .query_one("SELECT attempt, status FROM runs", &[])
        .await
        .expect("the one run");
    assert_eq!(row.get::<_, i32>(0), 2, "claimed twice");
    assert_eq!(row.get::<_, String>(1), "success");

    drop((api, survivor, pg));
    let _ = std::fs::remove_dir_all(&logs);
}

fn main() {
    if let Ok(role) = std::env::var(ROLE) {
        serve(&role);
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(kill_9_a_worker_mid_run());
    println!("test kill_9_a_worker_mid_run ... ok");
}
