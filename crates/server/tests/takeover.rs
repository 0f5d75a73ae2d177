//! A run outlives the worker that started it. A worker dies mid-run (its runtime is
//! dropped, as `kill -9` would leave it: no cleanup, no more heartbeats) and another takes
//! the run over when its lease runs out; or a worker stops (SIGTERM) and hands its run
//! back. Either way the run continues from its last stored checkpoint without running the
//! finished task again, and the client, streaming through an API-only server under the
//! default durability (`async`), gets each node's update and each state once and the final
//! state. (`tests/kill_worker.rs` does the same with real processes and `kill -9`.)

mod support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use stategraph::checkpoint::CheckpointSaver;
use stategraph::{CompileOptions, CompiledGraph, State, StateGraph, END, START};
use stategraph_server::Server;

/// Per gate path (one per test): how many times node `one` ran (it finishes before the
/// worker goes) and node `two` started (it is running when the worker goes).
static COUNTS: Mutex<Vec<(String, usize, usize)>> = Mutex::new(Vec::new());

fn count(path: &str, one: usize, two: usize) {
    let mut counts = COUNTS.lock().expect("counts");
    match counts.iter_mut().find(|(p, _, _)| p == path) {
        Some(c) => {
            c.1 += one;
            c.2 += two;
        }
        None => counts.push((path.to_owned(), one, two)),
    }
}

fn counts(path: &Path) -> (usize, usize) {
    let path = path.to_string_lossy();
    let counts = COUNTS.lock().expect("counts");
    let by_path: HashMap<_, _> = counts
        .iter()
        .map(|(p, a, b)| (p.as_str(), (*a, *b)))
        .collect();
    by_path.get(path.as_ref()).copied().unwrap_or((0, 0))
}

#[derive(State, Debug)]
struct Steps {
    path: String,
    a: i64,
    b: i64,
}

/// START → one → two → END; `two` waits for the file at `path`.
fn steps(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<Steps>> {
    let mut graph = StateGraph::<Steps>::new();
    graph.add_node("one", |s: Steps| async move {
        count(&s.path, 1, 0);
        StepsUpdate::default().a(1)
    });
    graph.add_node("two", |s: Steps| async move {
        count(&s.path, 0, 1);
        for _ in 0..3000 {
            if Path::new(&s.path).exists() {
                return StepsUpdate::default().b(2);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        StepsUpdate::default().b(-1)
    });
    graph
        .add_edge(START, "one")
        .add_edge("one", "two")
        .add_edge("two", END);
    graph.compile_with(CompileOptions::new().checkpointer(saver))
}

const LEASE: Duration = Duration::from_millis(600);

/// A server with one worker on a runtime of its own, on a thread of its own; sending on
/// the returned channel drops the runtime with everything on it.
fn doomed_worker(url: String) -> std::sync::mpsc::Sender<()> {
    let (kill, killed) = std::sync::mpsc::channel::<()>();
    let (ready_tx, ready) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        rt.block_on(async {
            let server = Server::builder()
                .database_url(url)
                .workers(1)
                .lease(LEASE)
                .graph("steps", steps)
                .build()
                .await
                .expect("build the doomed worker");
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a port");
            let (_stop, shutdown) = tokio::sync::watch::channel(false);
            tokio::spawn(async move {
                let _keep = _stop;
                let _ = server.serve(listener, shutdown).await;
            });
        });
        ready_tx.send(()).expect("ready");
        let _ = killed.recv();
        rt.shutdown_background();
    });
    ready.recv().expect("the doomed worker starts");
    kill
}

/// What the client sees and what ran, whichever way the first worker goes.
#[derive(Clone, Copy)]
enum Going {
    /// Its runtime is dropped: the run is taken over when the lease runs out.
    Killed,
    /// It is asked to stop: it hands the run back.
    Stopped,
}

async fn outlive_the_worker(going: Going) {
    let Some(python) = support::python() else {
        return;
    };
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    // The API process: no workers.
    let api = Server::builder()
        .database_url(&db.url)
        .workers(0)
        .graph("steps", steps)
        .build()
        .await
        .expect("build the API server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("its address");
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let serving = tokio::spawn(api.serve(listener, shutdown.clone()));
    // The first worker process.
    let (stop_first, first_shutdown) = tokio::sync::watch::channel(false);
    let (kill, first) = match going {
        Going::Killed => (Some(doomed_worker(db.url.clone())), None),
        Going::Stopped => {
            let worker = Server::builder()
                .database_url(&db.url)
                .workers(1)
                .lease(LEASE)
                .graph("steps", steps)
                .build()
                .await
                .expect("build the first worker");
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a free port");
            (
                None,
                Some(tokio::spawn(worker.serve(listener, first_shutdown))),
            )
        }
    };

    let gate = std::env::temp_dir().join(format!("sg-takeover-{}", uuid::Uuid::new_v4().simple()));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/takeover.py");
    let client = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(format!("http://{addr}"))
        .arg(&gate)
        .kill_on_drop(true)
        .output();
    let client = tokio::spawn(client);

    // Wait until the first worker is inside `two`, then make it go.
    for _ in 0..1500 {
        if counts(&gate).1 == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(counts(&gate), (1, 1), "the run never reached `two`");
    // `one`'s update is published (so its writes are stored: the server publishes an
    // update only then); whether the checkpoint after `one` is stored too is left to the
    // race with the kill.
    let (pg, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    let mut published = 0;
    for _ in 0..500 {
        published = pg
            .query_one(
                "SELECT count(*) FROM run_events WHERE event = 'updates' AND data LIKE '%\"one\"%'",
                &[],
            )
            .await
            .expect("count the published updates")
            .get::<_, i64>(0);
        if published > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(published, 1, "`one`'s update is published");
    if let Some(kill) = kill {
        kill.send(()).expect("kill the worker");
    }
    if let Some(first) = first {
        stop_first.send(true).expect("stop the first worker");
        first
            .await
            .expect("the first worker's task")
            .expect("the first worker stops cleanly");
        // Handed back, not left to run out its lease.
        let row = pg
            .query_one("SELECT status, worker IS NULL FROM runs", &[])
            .await
            .expect("the one run");
        assert_eq!(row.get::<_, String>(0), "pending");
        assert!(row.get::<_, bool>(1), "no worker holds it");
    }

    // A new worker process; the gate opens; it takes the run over.
    let rescuer = Server::builder()
        .database_url(&db.url)
        .workers(1)
        .lease(LEASE)
        .graph("steps", steps)
        .build()
        .await
        .expect("build the rescuer");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let rescuing = tokio::spawn(rescuer.serve(listener, shutdown));
    std::fs::write(&gate, "open").expect("open the gate");

    let out = client
        .await
        .expect("the client task")
        .expect("run the client script");
    let _ = std::fs::remove_file(&gate);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "the client script failed:\n{stdout}\n{stderr}"
    );
    // `one` finished before the first worker went and did not run again; `two` was cut
    // and ran again.
    assert_eq!(counts(&gate), (1, 2), "(runs of one, starts of two)");
    let row = pg
        .query_one("SELECT attempt, status FROM runs", &[])
        .await
        .expect("the one run");
    assert_eq!(row.get::<_, i32>(0), 2, "claimed twice");
    assert_eq!(row.get::<_, String>(1), "success");
    drop(pg);

    stop.send(true).expect("stop");
    for s in [serving, rescuing] {
        s.await.expect("server task").expect("server stops cleanly");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_workers_run_is_taken_over_from_its_last_checkpoint() {
    outlive_the_worker(Going::Killed).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_worker_hands_its_run_back() {
    outlive_the_worker(Going::Stopped).await;
}
