//! The Agent Server's runs over OTLP (feature `otel`): one `runs.wait` of the demo agent,
//! exported by `stategraph_server::otel` to a real OTLP receiver (Arize Phoenix, started by
//! scripts/otlp-receiver.sh) and read back through its REST API: the run is the root of its
//! trace (`run agent`: thread, run, graph and assistant ids), the agent's `invoke_agent` span
//! under it, its tasks and the tool call under that.
//!
//! Needs Postgres (as every server test) and `STATEGRAPH_TEST_OTLP_URL`; skipped without the
//! receiver unless `STATEGRAPH_REQUIRE_OTLP=1`.

// Only the database and request helpers are used here.
#[allow(dead_code)]
mod support;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{json, Value as Json};
use stategraph_server::{demo, Server};

use support::request;

/// The receiver's address, or `None` to skip.
fn receiver() -> Option<SocketAddr> {
    match std::env::var("STATEGRAPH_TEST_OTLP_URL") {
        Ok(url) if !url.is_empty() => {
            let host = url.trim_start_matches("http://").trim_end_matches('/');
            Some(
                host.parse()
                    .expect("STATEGRAPH_TEST_OTLP_URL is http://127.0.0.1:PORT"),
            )
        }
        _ => {
            let required =
                std::env::var("STATEGRAPH_REQUIRE_OTLP").is_ok_and(|v| !v.is_empty() && v != "0");
            assert!(
                !required,
                "STATEGRAPH_REQUIRE_OTLP is set but STATEGRAPH_TEST_OTLP_URL is not"
            );
            println!("note: STATEGRAPH_TEST_OTLP_URL not set; test not run");
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_run_arrives_at_a_real_otlp_receiver_as_one_trace() {
    let Some(otlp) = receiver() else { return };
    let Some(tdb) = support::TestDatabase::create().await else {
        return;
    };
    let guard = stategraph_server::otel::Otel::new()
        .endpoint(format!("http://{otlp}"))
        .service_name("stategraph-server-otel-test")
        .install()
        .expect("install the exporter");
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let server = Server::builder()
        .database_url(&tdb.url)
        .workers(1)
        .graph("agent", demo::agent)
        .build()
        .await
        .expect("build the server");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(server.serve(listener, stop));

    let (status, thread) = request(addr, "POST", "/threads", Some(&json!({}))).await;
    assert_eq!(status, 200, "{thread}");
    let thread = thread["thread_id"]
        .as_str()
        .expect("a thread id")
        .to_owned();
    let body = json!({
        "assistant_id": "agent",
        "input": {"messages": [{"role": "user", "content": "what is 1 + 2?"}]},
    });
    let (status, out) = request(
        addr,
        "POST",
        &format!("/threads/{thread}/runs/wait"),
        Some(&body),
    )
    .await;
    assert_eq!(status, 200, "{out}");
    guard.flush().expect("flush");

    let spans = trace_of(otlp, &thread).await;
    let named = |name: &str| -> Vec<&Json> { spans.iter().filter(|s| s["name"] == name).collect() };
    let id = |s: &Json| s["context"]["span_id"].clone();
    let run = named("run agent");
    assert_eq!(run.len(), 1, "{spans:#?}");
    let run = run[0];
    assert!(run["parent_id"].is_null(), "the run is the trace's root");
    let a = &run["attributes"];
    assert_eq!(a["gen_ai.conversation.id"], thread.as_str());
    assert_eq!(a["stategraph.graph.id"], "agent");
    assert_eq!(a["stategraph.assistant.id"], "agent");
    assert_eq!(a["stategraph.run.id"].as_str().map(str::len), Some(36));
    let agent = named("invoke_agent agent");
    assert_eq!(agent.len(), 1, "{spans:#?}");
    assert_eq!(agent[0]["parent_id"], id(run));
    assert_eq!(
        agent[0]["attributes"]["stategraph.run.id"],
        a["stategraph.run.id"]
    );
    let tools = named("task tools");
    assert_eq!(tools.len(), 1, "{spans:#?}");
    assert_eq!(tools[0]["parent_id"], id(agent[0]));
    let call = named("execute_tool add");
    assert_eq!(call.len(), 1, "{spans:#?}");
    assert_eq!(call[0]["parent_id"], id(tools[0]));
    drop(guard);
}

/// The spans of the trace whose root is the server's run span of `thread`.
async fn trace_of(otlp: SocketAddr, thread: &str) -> Vec<Json> {
    for _ in 0..60 {
        let (status, body) =
            request(otlp, "GET", "/v1/projects/default/spans?limit=1000", None).await;
        assert_eq!(status, 200, "{body}");
        let all = body["data"].as_array().cloned().unwrap_or_default();
        let root = all.iter().find(|s| {
            s["name"] == "run agent" && s["attributes"]["gen_ai.conversation.id"] == thread
        });
        if let Some(root) = root {
            let trace = root["context"]["trace_id"].clone();
            let spans: Vec<Json> = all
                .into_iter()
                .filter(|s| s["context"]["trace_id"] == trace)
                .collect();
            if spans.iter().any(|s| s["name"] == "execute_tool add") {
                return spans;
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("the receiver did not get the run of thread {thread}");
}
