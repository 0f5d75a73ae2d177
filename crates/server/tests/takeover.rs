//! A worker dies mid-run (its runtime is dropped, as `kill -9` would leave it: no
//! cleanup, no more heartbeats); another worker takes the run over when its lease runs
//! out and continues from the last checkpoint without running the finished task again;
//! the client, streaming through an API-only server, still gets the final state.

mod support;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use stategraph::checkpoint::CheckpointSaver;
use stategraph::{CompileOptions, CompiledGraph, State, StateGraph, END, START};
use stategraph_server::Server;

/// Times node `one` ran (it finishes before the worker dies).
static ONE_RUNS: AtomicUsize = AtomicUsize::new(0);
/// Times node `two` started (it is running when the worker dies).
static TWO_STARTS: AtomicUsize = AtomicUsize::new(0);

#[derive(State, Debug)]
struct Steps {
    path: String,
    a: i64,
    b: i64,
}

/// START → one → two → END; `two` waits for the file at `path`.
fn steps(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<Steps>> {
    let mut graph = StateGraph::<Steps>::new();
    graph.add_node("one", |_s: Steps| async {
        ONE_RUNS.fetch_add(1, Ordering::SeqCst);
        StepsUpdate::default().a(1)
    });
    graph.add_node("two", |s: Steps| async move {
        TWO_STARTS.fetch_add(1, Ordering::SeqCst);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_workers_run_is_taken_over_from_its_last_checkpoint() {
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
    let kill = doomed_worker(db.url.clone());

    let gate = std::env::temp_dir().join(format!("sg-takeover-{}", uuid::Uuid::new_v4().simple()));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/takeover.py");
    let client = tokio::process::Command::new(&python)
        .arg(&script)
        .arg(format!("http://{addr}"))
        .arg(&gate)
        .kill_on_drop(true)
        .output();
    let client = tokio::spawn(client);

    // Wait until the doomed worker is inside `two`, then kill it.
    for _ in 0..1500 {
        if TWO_STARTS.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        TWO_STARTS.load(Ordering::SeqCst),
        1,
        "the run never reached `two`"
    );
    assert_eq!(ONE_RUNS.load(Ordering::SeqCst), 1);
    kill.send(()).expect("kill the worker");

    // A new worker process; the gate opens; it takes the run over once the lease runs out.
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
    // `one` finished before the death and did not run again; `two` was cut and re-ran.
    assert_eq!(
        ONE_RUNS.load(Ordering::SeqCst),
        1,
        "a finished task ran again"
    );
    assert_eq!(TWO_STARTS.load(Ordering::SeqCst), 2);
    let (pg, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
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
