//! `stategraph serve`: an API-only process answering for the graphs that a worker process
//! registered in the database, and `--demo` as that worker process.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value as J};

use stategraph_checkpoint_postgres::deadpool_postgres::tokio_postgres::{self, NoTls};

use crate::support::{cli, postgres, python};

/// A `stategraph serve` process, killed when dropped.
struct Served {
    child: Child,
    /// `127.0.0.1:PORT`.
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `stategraph serve ARGS --port 0` and waits for its `listening on` line.
fn serve(url: &str, args: &[&str]) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stategraph"))
        .arg("serve")
        .args(["--database-url", url, "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start stategraph serve");
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut line = String::new();
    let read = BufReader::new(stdout).read_line(&mut line);
    let addr = match (read, line.trim().strip_prefix("listening on http://")) {
        (Ok(_), Some(addr)) => addr.to_owned(),
        (read, _) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("stategraph serve {args:?} did not start: {read:?} {line:?}");
        }
    };
    Served { child, addr }
}

/// Runs one SQL statement on the test database.
fn sql(url: &str, statement: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, NoTls)
            .await
            .expect("connect to the test database");
        tokio::spawn(connection);
        client.batch_execute(statement).await.expect("run the SQL");
    });
}

/// One HTTP/1.1 request (`Connection: close`); the status and the body as text.
fn request(addr: &str, method: &str, path: &str, body: Option<&J>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect to the server");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("set a read timeout");
    let body = body.map(J::to_string).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send the request");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read the answer");
    let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status code");
    (status, body.to_owned())
}

/// A request whose answer is one JSON document.
fn call(addr: &str, method: &str, path: &str, body: Option<&J>) -> (u16, J) {
    let (status, text) = request(addr, method, path, body);
    let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}"));
    (status, json)
}

#[test]
fn serve_help_explains_the_api_process_and_demo() {
    let r = cli(&["serve", "--help"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for needle in [
        "--database-url",
        "--port",
        "--demo",
        "--workers",
        "registered",
    ] {
        assert!(
            r.stdout.contains(needle),
            "help lacks {needle:?}: {}",
            r.stdout
        );
    }
    // Workers without `--demo` would have no graphs to run.
    let r = cli(&["serve", "--workers", "2"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--demo"), "{}", r.stderr);
}

#[test]
fn an_unreachable_database_is_a_clean_failure() {
    let r = cli(&[
        "serve",
        "--database-url",
        "postgresql://postgres@127.0.0.1:1/none",
        "--port",
        "0",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(r.stderr.contains("error: "), "{}", r.stderr);
}

#[test]
fn the_api_process_runs_the_graphs_a_worker_registered() {
    let Some(db) = postgres("serve") else { return };
    // An API-only process on an empty database answers for no graph.
    let api = serve(&db.url, &[]);
    let (status, found) = call(&api.addr, "POST", "/assistants/search", Some(&json!({})));
    assert_eq!((status, found), (200, json!([])));
    // The worker process registers `seed` and `agent` as it starts.
    let worker = serve(&db.url, &["--demo", "--workers", "2"]);

    let (status, found) = call(&api.addr, "POST", "/assistants/search", Some(&json!({})));
    assert_eq!(status, 200, "{found}");
    let ids: Vec<&str> = found
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|a| a["graph_id"].as_str())
        .collect();
    assert_eq!(ids, ["agent", "seed"]);
    let seed_id = found[1]["assistant_id"].as_str().expect("an id").to_owned();
    // The same assistant ids as the worker's own API.
    let (_, own) = call(&worker.addr, "GET", "/assistants/seed", None);
    assert_eq!(own["assistant_id"], json!(seed_id));
    let (status, one) = call(&api.addr, "GET", &format!("/assistants/{seed_id}"), None);
    assert_eq!((status, &one["graph_id"]), (200, &json!("seed")));
    // The drawing comes from the database, as the worker drew it.
    let (status, drawing) = call(&api.addr, "GET", "/assistants/seed/graph", None);
    assert_eq!(status, 200);
    let (_, own) = call(&worker.addr, "GET", "/assistants/seed/graph", None);
    assert_eq!(drawing, own);
    assert!(drawing.to_string().contains("get_address"), "{drawing}");

    // A run of a graph that no running process has (registered by a process since gone)
    // waits in the queue: the worker skips it instead of failing it.
    sql(
        &db.url,
        "INSERT INTO registered_graphs (graph_id, drawing) VALUES ('ghost', '{}')",
    );
    // The worker process (`--demo`) answers for that graph too, beside its own, and
    // queues its runs for the process that has it (issue 21, item 15).
    let (status, one) = call(&worker.addr, "GET", "/assistants/ghost", None);
    assert_eq!((status, &one["graph_id"]), (200, &json!("ghost")), "{one}");
    let (_, all) = call(&worker.addr, "POST", "/assistants/search", Some(&json!({})));
    let ids: Vec<&str> = all
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|a| a["graph_id"].as_str())
        .collect();
    assert_eq!(ids, ["seed", "agent", "ghost"], "{all}");
    let ghost_thread = "6f1b2c3d-0000-4000-8000-000000000001";
    let (status, ghost) = call(
        &worker.addr,
        "POST",
        &format!("/threads/{ghost_thread}/runs"),
        Some(&json!({"assistant_id": "ghost", "input": {}, "if_not_exists": "create"})),
    );
    assert_eq!(status, 200, "{ghost}");
    let ghost_run = ghost["run_id"].as_str().expect("a run id").to_owned();

    // A run queued by the API process (no workers) is run by the worker process.
    let (status, thread) = call(&api.addr, "POST", "/threads", Some(&json!({})));
    assert_eq!(status, 200, "{thread}");
    let tid = thread["thread_id"]
        .as_str()
        .expect("a thread id")
        .to_owned();
    let (status, out) = call(
        &api.addr,
        "POST",
        &format!("/threads/{tid}/runs/wait"),
        Some(&json!({"assistant_id": "seed", "input": {}})),
    );
    assert_eq!(status, 200, "{out}");
    assert_eq!(
        out,
        json!({"name": "pavaneeshwar", "address": "Hyderabad residency"})
    );
    let (_, runs) = call(&api.addr, "GET", &format!("/threads/{tid}/runs"), None);
    assert_eq!(runs[0]["status"], json!("success"), "{runs}");
    // The older ghost run was not taken (and failed) by the worker.
    let (_, ghost) = call(
        &api.addr,
        "GET",
        &format!("/threads/{ghost_thread}/runs/{ghost_run}"),
        None,
    );
    assert_eq!(ghost["status"], json!("pending"), "{ghost}");
    // The thread's row has the values; its state, read by the API process with the
    // graph rebuilt from the description the worker registered, is the worker's own
    // answer (issue 21, item 16).
    let (_, row) = call(&api.addr, "GET", &format!("/threads/{tid}"), None);
    assert_eq!(
        row["values"]["address"],
        json!("Hyderabad residency"),
        "{row}"
    );
    let (status, state) = call(&api.addr, "GET", &format!("/threads/{tid}/state"), None);
    assert_eq!(status, 200, "{state}");
    let (_, own) = call(&worker.addr, "GET", &format!("/threads/{tid}/state"), None);
    assert_eq!(state, own);
    assert_eq!(state["values"]["name"], json!("pavaneeshwar"), "{state}");
    // A graph registered without a description (by an older version) cannot be read
    // here: the API process says so instead of answering an empty state.
    let path = format!("/threads/{ghost_thread}/state");
    let (status, err) = call(&api.addr, "GET", &path, None);
    assert_eq!(status, 501, "{err}");
    assert!(
        err["detail"]
            .as_str()
            .is_some_and(|d| d.contains("description")),
        "{err}"
    );

    // The agent, stateless, and streamed through the API process.
    let question = json!({"messages": [{"role": "user", "content": "What is 2 + 40?"}]});
    let (status, out) = call(
        &api.addr,
        "POST",
        "/runs/wait",
        Some(&json!({"assistant_id": "agent", "input": question})),
    );
    assert_eq!(status, 200, "{out}");
    assert_eq!(
        out["messages"][3]["content"],
        json!("The sum is 42."),
        "{out}"
    );
    let (status, sse) = request(
        &api.addr,
        "POST",
        &format!("/threads/{tid}/runs/stream"),
        Some(&json!({"assistant_id": "seed", "input": {}, "stream_mode": ["values"]})),
    );
    assert_eq!(status, 200, "{sse}");
    assert!(sse.contains("event: values"), "{sse}");
    assert!(sse.contains("Hyderabad residency"), "{sse}");

    // Unknown assistants are 404 and queue nothing.
    let (status, _) = call(
        &api.addr,
        "POST",
        &format!("/threads/{tid}/runs/wait"),
        Some(&json!({"assistant_id": "nope", "input": {}})),
    );
    assert_eq!(status, 404);
    let (_, runs) = call(&api.addr, "GET", &format!("/threads/{tid}/runs"), None);
    assert_eq!(runs.as_array().map(Vec::len), Some(2), "{runs}");

    // The official Python client, through the API process.
    if let Some(python) = python() {
        let script = r#"
import json, sys
from langgraph_sdk import get_sync_client
client = get_sync_client(url=sys.argv[1])
ids = sorted(a["graph_id"] for a in client.assistants.search())
thread = client.threads.create()
out = client.runs.wait(thread["thread_id"], "seed", input={})
parts = [p.event for p in client.runs.stream(thread["thread_id"], "seed", input={}, stream_mode="updates")]
state = client.threads.get_state(thread["thread_id"])
history = client.threads.get_history(thread["thread_id"])
print(json.dumps({"ids": ids, "out": out, "events": parts, "state": state, "history": len(history)}))
"#;
        let run = Command::new(python)
            .args(["-c", script, &format!("http://{}", api.addr)])
            .output()
            .expect("run Python");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{stderr}");
        let seen: J = serde_json::from_slice(&run.stdout).expect("the script prints JSON");
        assert_eq!(seen["ids"], json!(["agent", "ghost", "seed"]), "{seen}");
        assert_eq!(
            seen["out"]["address"],
            json!("Hyderabad residency"),
            "{seen}"
        );
        assert_eq!(seen["events"], json!(["metadata", "updates"]), "{seen}");
        // `threads.get_state`, the first call a LangGraph user makes, on the API process.
        assert_eq!(
            seen["state"]["values"]["address"],
            json!("Hyderabad residency"),
            "{seen}"
        );
        assert_eq!(seen["state"]["next"], json!([]), "{seen}");
        // Two runs of three steps (input, START, get_address) each.
        assert_eq!(seen["history"], json!(6), "{seen}");
    }
    drop(worker);
    drop(api);
}

/// The head of the answer to a CORS preflight of `POST /threads` from `origin`, lowercased.
fn preflight(addr: &str, origin: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    write!(
        stream,
        "OPTIONS /threads HTTP/1.1\r\nHost: test\r\nOrigin: {origin}\r\n\
         Access-Control-Request-Method: POST\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("receive");
    answer.to_ascii_lowercase()
}

#[test]
fn cors_origins_are_allowed_as_given_and_any_under_demo() {
    let Some(db) = postgres("serve_cors") else {
        return;
    };
    let api = serve(
        &db.url,
        &[
            "--cors-origin",
            "http://localhost:3000/",
            "--cors-origin",
            "https://ui.test",
        ],
    );
    let head = preflight(&api.addr, "http://localhost:3000");
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(
        head.contains("access-control-allow-origin: http://localhost:3000"),
        "{head}"
    );
    assert!(preflight(&api.addr, "https://ui.test")
        .contains("access-control-allow-origin: https://ui.test"));
    let other = preflight(&api.addr, "http://elsewhere.test");
    assert!(other.starts_with("http/1.1 200"), "{other}");
    assert!(!other.contains("access-control-allow-origin"), "{other}");
    // With no list, no other origin (preflights still answered).
    let plain = serve(&db.url, &[]);
    let head = preflight(&plain.addr, "http://localhost:3000");
    assert!(
        head.starts_with("http/1.1 200") && !head.contains("access-control-allow-origin"),
        "{head}"
    );
    // `--demo` allows any, as `langgraph dev`.
    let demo = serve(&db.url, &["--demo", "--workers", "1"]);
    assert!(
        preflight(&demo.addr, "http://anywhere.test").contains("access-control-allow-origin: *")
    );
}
