//! The run queue without a timed poll: runs queued while every worker is busy, or from
//! another process, start as soon as a worker is free; a run queued on a process with an
//! idle worker is claimed by the insert itself (no `NOTIFY`); a cancel right after the
//! claim stops the run (here or through another process); a cancel whose `NOTIFY` never
//! came still stops it (the heartbeat sees it).
//!
//! The servers here poll once an hour: a run that waited for the poll would time a test
//! out.

// Only the database helper is used here.
#[allow(dead_code)]
mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};
use stategraph::checkpoint::CheckpointSaver;
use stategraph::{CompileOptions, CompiledGraph, State, StateGraph, END, START};
use stategraph_server::Server;

use support::request;

#[derive(State, Debug)]
struct Gate {
    path: String,
    opened: bool,
}

/// START → wait → END; `wait` waits (a minute at most) for the file at `path`.
fn gate(saver: Arc<dyn CheckpointSaver>) -> stategraph::Result<CompiledGraph<Gate>> {
    let mut graph = StateGraph::<Gate>::new();
    graph.add_node("wait", |s: Gate| async move {
        for _ in 0..3000 {
            if Path::new(&s.path).exists() {
                return GateUpdate::default().opened(true);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        GateUpdate::default().opened(false)
    });
    graph.add_edge(START, "wait").add_edge("wait", END);
    graph.compile_with(CompileOptions::new().checkpointer(saver))
}

/// A gate file path of its own (absent: the gate is closed).
fn gate_path() -> PathBuf {
    std::env::temp_dir().join(format!("sg-queue-{}", uuid::Uuid::new_v4().simple()))
}

/// A server on `url` with `workers` workers, polling once an hour, serving until `stop`.
async fn serve(
    url: &str,
    workers: usize,
    lease: Duration,
    stop: &tokio::sync::watch::Receiver<bool>,
) -> (
    SocketAddr,
    tokio::task::JoinHandle<stategraph_server::Result<()>>,
) {
    let server = Server::builder()
        .database_url(url)
        .workers(workers)
        .lease(lease)
        .poll(Duration::from_secs(3600))
        .graph("gate", gate)
        .build()
        .await
        .expect("build the server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("its address");
    (addr, tokio::spawn(server.serve(listener, stop.clone())))
}

/// Stops the servers serving until `stop` and waits until each has stopped cleanly.
async fn stop_all(
    stop: &tokio::sync::watch::Sender<bool>,
    servers: impl IntoIterator<Item = tokio::task::JoinHandle<stategraph_server::Result<()>>>,
) {
    stop.send(true).expect("stop");
    for s in servers {
        s.await.expect("server task").expect("server stops cleanly");
    }
}

async fn new_thread(addr: SocketAddr) -> String {
    let (status, thread) = request(addr, "POST", "/threads", Some(&json!({}))).await;
    assert_eq!(status, 200, "{thread}");
    thread["thread_id"].as_str().expect("an id").to_owned()
}

/// Queues a gate run on `thread` (background); its run id.
async fn create(addr: SocketAddr, thread: &str, gate: &Path) -> String {
    let body = json!({ "assistant_id": "gate", "input": { "path": gate, "opened": false } });
    let (status, run) = request(
        addr,
        "POST",
        &format!("/threads/{thread}/runs"),
        Some(&body),
    )
    .await;
    assert_eq!(status, 200, "{run}");
    run["run_id"].as_str().expect("an id").to_owned()
}

/// Waits for a run's end (30 s at most: far less than the poll); its output.
async fn join(addr: SocketAddr, thread: &str, run: &str) -> Value {
    let path = format!("/threads/{thread}/runs/{run}/join");
    let (status, out) =
        tokio::time::timeout(Duration::from_secs(30), request(addr, "GET", &path, None))
            .await
            .expect("the run ends without waiting for the poll");
    assert_eq!(status, 200, "{out}");
    out
}

async fn connect(
    url: &str,
) -> (
    tokio_postgres::Client,
    tokio_postgres::Connection<tokio_postgres::Socket, tokio_postgres::tls::NoTlsStream>,
) {
    tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_queued_while_the_worker_is_busy_start_when_it_frees() {
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let (worker, w) = serve(&db.url, 1, Duration::from_secs(10), &shutdown).await;
    // An API-only process: its runs reach the worker by NOTIFY.
    let (api, a) = serve(&db.url, 0, Duration::from_secs(10), &shutdown).await;
    let (first_gate, open_gate) = (gate_path(), gate_path());
    std::fs::write(&open_gate, "open").expect("open a gate");

    let t1 = new_thread(worker).await;
    let first = create(worker, &t1, &first_gate).await;
    // The one worker is busy; one run queued here, one through the other process.
    let t2 = new_thread(worker).await;
    let here = create(worker, &t2, &open_gate).await;
    let t3 = new_thread(api).await;
    let there = create(api, &t3, &open_gate).await;
    std::fs::write(&first_gate, "open").expect("open the first gate");
    for (t, r) in [(&t1, &first), (&t2, &here), (&t3, &there)] {
        assert_eq!(join(worker, t, r).await["opened"], json!(true));
    }
    // The worker is idle now: a run from the other process wakes it.
    let t4 = new_thread(api).await;
    let idle = create(api, &t4, &open_gate).await;
    assert_eq!(join(api, &t4, &idle).await["opened"], json!(true));

    let _ = std::fs::remove_file(&first_gate);
    let _ = std::fs::remove_file(&open_gate);
    stop_all(&stop, [w, a]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_a_process_with_an_idle_worker_is_claimed_by_its_insert() {
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let (addr, serving) = serve(&db.url, 1, Duration::from_secs(10), &shutdown).await;
    // Every NOTIFY on the runs channel, in commit order.
    let (pg, mut conn) = connect(&db.url).await;
    let (tx, mut heard) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(Ok(m)) = messages.next().await {
            if let tokio_postgres::AsyncMessage::Notification(n) = m {
                let _ = tx.send(n.payload().to_owned());
            }
        }
    });
    pg.batch_execute("LISTEN stategraph_runs")
        .await
        .expect("listen");
    let open = gate_path();
    std::fs::write(&open, "open").expect("open the gate");

    // The worker is idle once it has looked at the queue after its start (or after the
    // previous run): a run that comes before that is queued and announced. Of a few
    // runs spaced out, some find it idle.
    let mut claimed_at_insert = 0;
    for i in 0..5 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let thread = new_thread(addr).await;
        let body = json!({ "assistant_id": "gate", "input": { "path": open, "opened": false } });
        let (status, out) = request(
            addr,
            "POST",
            &format!("/threads/{thread}/runs/wait"),
            Some(&body),
        )
        .await;
        assert_eq!(status, 200, "{out}");
        assert_eq!(out["opened"], json!(true));
        let id: uuid::Uuid = thread.parse().expect("a thread id");
        let row = pg
            .query_one(
                "SELECT status, attempt, worker IS NOT NULL FROM runs WHERE thread_id = $1",
                &[&id],
            )
            .await
            .expect("the run");
        assert_eq!(row.get::<_, String>(0), "success");
        assert_eq!(row.get::<_, i32>(1), 1, "claimed once");
        assert!(row.get::<_, bool>(2));
        // Notifications arrive in commit order: whatever the run sent came before this.
        let probe = format!("probe {i}");
        pg.execute("SELECT pg_notify('stategraph_runs', $1)", &[&probe])
            .await
            .expect("notify");
        let mut announced = false;
        loop {
            let heard = tokio::time::timeout(Duration::from_secs(30), heard.recv())
                .await
                .expect("the probe arrives")
                .expect("a notification");
            if heard == probe {
                break;
            }
            announced = true;
        }
        claimed_at_insert += usize::from(!announced);
    }
    assert!(claimed_at_insert > 0, "every run was announced by NOTIFY");

    let _ = std::fs::remove_file(&open);
    stop_all(&stop, [serving]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_without_its_notify_stops_the_run_at_the_next_heartbeat() {
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let (addr, serving) = serve(&db.url, 1, Duration::from_millis(300), &shutdown).await;
    let (pg, conn) = connect(&db.url).await;
    tokio::spawn(conn);
    let closed = gate_path();

    let thread = new_thread(addr).await;
    let run = create(addr, &thread, &closed).await;
    let id: uuid::Uuid = run.parse().expect("a run id");
    for _ in 0..1500 {
        let row = pg
            .query_one("SELECT status FROM runs WHERE run_id = $1", &[&id])
            .await
            .expect("the run");
        if row.get::<_, String>(0) == "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Asked to stop as the cancel endpoint does, but no NOTIFY reaches the worker.
    pg.execute(
        "UPDATE runs SET cancel = 'interrupt' WHERE run_id = $1 AND status = 'running'",
        &[&id],
    )
    .await
    .expect("request the cancel");
    join(addr, &thread, &run).await;
    let row = pg
        .query_one("SELECT status FROM runs WHERE run_id = $1", &[&id])
        .await
        .expect("the run");
    assert_eq!(row.get::<_, String>(0), "interrupted");

    stop_all(&stop, [serving]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_right_after_the_claim_stops_the_run() {
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    // A heartbeat every 40 s: only the cancel's NOTIFY (or the hub's memory of it, when it
    // comes before the worker watches the run) can stop the run within the join's 30 s.
    let (worker, serving) = serve(&db.url, 1, Duration::from_secs(120), &shutdown).await;
    // Through an API-only process the run and its cancel reach the worker by NOTIFY: the
    // cancel may come before the worker has a channel for the run.
    let (api, api_serving) = serve(&db.url, 0, Duration::from_secs(120), &shutdown).await;
    let (pg, conn) = connect(&db.url).await;
    tokio::spawn(conn);
    let closed = gate_path();

    for addr in [worker, worker, api, api, api] {
        let thread = new_thread(addr).await;
        // Claimed by its insert (the worker is idle) or right after; cancelled at once.
        let run = create(addr, &thread, &closed).await;
        let (status, body) = request(
            addr,
            "POST",
            &format!("/threads/{thread}/runs/{run}/cancel"),
            None,
        )
        .await;
        assert_eq!(status, 202, "{body}");
        join(addr, &thread, &run).await;
        let id: uuid::Uuid = run.parse().expect("a run id");
        let row = pg
            .query_one("SELECT status FROM runs WHERE run_id = $1", &[&id])
            .await
            .expect("the run");
        assert_eq!(row.get::<_, String>(0), "interrupted");
    }

    stop_all(&stop, [serving, api_serving]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_run_marks_its_thread_busy_and_remembers_its_graph() {
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let (addr, serving) = serve(&db.url, 1, Duration::from_secs(10), &shutdown).await;
    // A thread whose metadata names a graph already (existing keys win).
    let (status, thread) = request(
        addr,
        "POST",
        "/threads",
        Some(&json!({ "metadata": { "graph_id": "mine", "owner": "o" } })),
    )
    .await;
    assert_eq!(status, 200, "{thread}");
    assert_eq!(thread["status"], json!("idle"));
    assert_eq!(thread["values"], Value::Null);
    assert_eq!(thread["interrupts"], json!({}));
    assert_eq!(thread["created_at"], thread["updated_at"]);
    let t = thread["thread_id"].as_str().expect("an id").to_owned();
    let closed = gate_path();
    // Mostly the worker is idle by now and the insert claims the run; else a claim does.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let run = create(addr, &t, &closed).await;
    let running = async {
        loop {
            let (_, r) = request(addr, "GET", &format!("/threads/{t}/runs/{run}"), None).await;
            if r["status"] == json!("running") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the run starts");

    let (_, busy) = request(addr, "GET", &format!("/threads/{t}"), None).await;
    assert_eq!(busy["status"], json!("busy"), "{busy}");
    let assistant = stategraph_server::assistant_id("gate").to_string();
    assert_eq!(
        busy["metadata"],
        json!({ "graph_id": "mine", "owner": "o", "assistant_id": assistant })
    );
    // Refused (the thread has a running run): still a conflict, and the row is unchanged.
    let body = json!({ "assistant_id": "gate", "input": { "path": closed, "opened": false } });
    let (status, _) = request(addr, "POST", &format!("/threads/{t}/runs"), Some(&body)).await;
    assert_eq!(status, 409);

    std::fs::write(&closed, "open").expect("open the gate");
    assert_eq!(join(addr, &t, &run).await["opened"], json!(true));
    let (_, idle) = request(addr, "GET", &format!("/threads/{t}"), None).await;
    assert_eq!(idle["status"], json!("idle"), "{idle}");
    assert_eq!(idle["values"]["opened"], json!(true));
    assert_eq!(busy["metadata"], idle["metadata"]);

    let _ = std::fs::remove_file(&closed);
    stop_all(&stop, [serving]).await;
}

/// Listens on the events and run-end channels; each notification's payload, in commit
/// order.
async fn listen_runs(
    url: &str,
) -> (
    tokio_postgres::Client,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (pg, mut conn) = connect(url).await;
    let (tx, heard) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(Ok(m)) = messages.next().await {
            if let tokio_postgres::AsyncMessage::Notification(n) = m {
                let _ = tx.send(format!("{} {}", n.channel(), n.payload()));
            }
        }
    });
    pg.batch_execute("LISTEN stategraph_events; LISTEN stategraph_run_end")
        .await
        .expect("listen");
    (pg, heard)
}

/// The notifications heard before a probe sent now (notifications arrive in commit order).
async fn heard_until_probe(
    pg: &tokio_postgres::Client,
    heard: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
) -> Vec<String> {
    let probe = uuid::Uuid::new_v4().to_string();
    pg.execute("SELECT pg_notify('stategraph_events', $1)", &[&probe])
        .await
        .expect("notify");
    let mut before = Vec::new();
    loop {
        let n = tokio::time::timeout(Duration::from_secs(30), heard.recv())
            .await
            .expect("the probe arrives")
            .expect("a notification");
        if n.ends_with(&probe) {
            return before;
        }
        before.push(n);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_claimed_at_insert_is_announced_only_once_another_process_joins_it() {
    let Some(db) = support::TestDatabase::create().await else {
        return;
    };
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let (worker, w) = serve(&db.url, 1, Duration::from_secs(10), &shutdown).await;
    let (api, a) = serve(&db.url, 0, Duration::from_secs(10), &shutdown).await;
    let (pg, mut heard) = listen_runs(&db.url).await;
    let open = gate_path();
    std::fs::write(&open, "open").expect("open the gate");
    let announce = |run: String| {
        let pg = &pg;
        async move {
            let id: uuid::Uuid = run.parse().expect("a run id");
            pg.query_one("SELECT announce FROM runs WHERE run_id = $1", &[&id])
                .await
                .expect("the run")
                .get::<_, bool>(0)
        }
    };

    // A run that its process's idle worker took at insert, with its reader there
    // (`runs.wait`): no NOTIFY. (A run that came before the worker was idle was queued,
    // and is announced: try a few.)
    let mut quiet = 0;
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let t = new_thread(worker).await;
        let body = json!({ "assistant_id": "gate", "input": { "path": open, "opened": false } });
        let (status, out) = request(
            worker,
            "POST",
            &format!("/threads/{t}/runs/wait"),
            Some(&body),
        )
        .await;
        assert_eq!((status, &out["opened"]), (200, &json!(true)), "{out}");
        let id: uuid::Uuid = t.parse().expect("a thread id");
        let run: uuid::Uuid = pg
            .query_one("SELECT run_id FROM runs WHERE thread_id = $1", &[&id])
            .await
            .expect("the run")
            .get(0);
        let notices = heard_until_probe(&pg, &mut heard).await;
        if !announce(run.to_string()).await {
            let run = run.to_string();
            assert!(!notices.iter().any(|n| n.contains(&run)), "{notices:?}");
            quiet += 1;
        }
    }
    assert!(quiet > 0, "no run was claimed at insert");

    // The same, joined through another process: its end is announced, and the join
    // returns the run's output.
    let mut joined = false;
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let t = new_thread(worker).await;
        let closed = gate_path();
        let run = create(worker, &t, &closed).await;
        if announce(run.clone()).await {
            std::fs::write(&closed, "open").expect("open the gate");
            join(worker, &t, &run).await;
            let _ = std::fs::remove_file(&closed);
            continue;
        }
        let there = tokio::spawn({
            let (t, run) = (t.clone(), run.clone());
            async move { join(api, &t, &run).await }
        });
        let watched = async {
            while !announce(run.clone()).await {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), watched)
            .await
            .expect("the join asks for announcements");
        std::fs::write(&closed, "open").expect("open the gate");
        let out = there.await.expect("the join");
        assert_eq!(out["opened"], json!(true));
        let notices = heard_until_probe(&pg, &mut heard).await;
        // The gate's values came after the join: announced too.
        for channel in ["stategraph_events", "stategraph_run_end"] {
            assert!(
                notices
                    .iter()
                    .any(|n| n.starts_with(channel) && n.contains(&run)),
                "{channel}: {notices:?}"
            );
        }
        let _ = std::fs::remove_file(&closed);
        joined = true;
        break;
    }
    assert!(joined, "no run was claimed at insert");

    let _ = std::fs::remove_file(&open);
    stop_all(&stop, [w, a]).await;
}
