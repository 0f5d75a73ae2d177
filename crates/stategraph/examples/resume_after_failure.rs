//! Resume after failure: a step with two parallel tasks, one of which fails the first
//! time. The finished task's writes are already saved, so invoking the thread again with
//! no input re-runs only the failed task.
//!
//! Run it with `cargo run -p stategraph --example resume_after_failure`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use stategraph::checkpoint::MemorySaver;
use stategraph::{CompileOptions, NoInput, NodeError, RunConfig, State, StateGraph, END, START};

#[derive(State, Debug)]
struct Report {
    #[state(reducer = add)]
    parts: Vec<String>,
}

static FETCH_CALLS: AtomicUsize = AtomicUsize::new(0);
static FLAKY_CALLS: AtomicUsize = AtomicUsize::new(0);

#[tokio::main]
async fn main() -> Result<(), stategraph::Error> {
    let mut graph = StateGraph::<Report>::new();
    graph.add_node("fetch", |_s: Report| async {
        FETCH_CALLS.fetch_add(1, Ordering::SeqCst);
        ReportUpdate::default().parts(vec!["fetched".to_owned()])
    });
    graph.add_node("flaky", |_s: Report| async {
        if FLAKY_CALLS.fetch_add(1, Ordering::SeqCst) == 0 {
            return Err(NodeError::msg("the service was down"));
        }
        Ok(ReportUpdate::default().parts(vec!["flaky ok".to_owned()]))
    });
    graph
        .add_edge(START, "fetch")
        .add_edge(START, "flaky")
        .add_edge("fetch", END)
        .add_edge("flaky", END);
    let app =
        graph.compile_with(CompileOptions::new().checkpointer(Arc::new(MemorySaver::new())))?;
    let thread = RunConfig::thread("report-1");

    let first = app.invoke(ReportUpdate::default(), &thread).await;
    println!(
        "first run: {}",
        first.err().map_or("ok".into(), |e| e.to_string())
    );

    let report = app.invoke(NoInput, &thread).await?;
    println!("resumed:   {:?}", report.parts);
    println!(
        "fetch ran {} time(s), flaky ran {} time(s)",
        FETCH_CALLS.load(Ordering::SeqCst),
        FLAKY_CALLS.load(Ordering::SeqCst)
    );
    Ok(())
}
