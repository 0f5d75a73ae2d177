//! Time travel: list a thread's history, replay it from an earlier checkpoint (a fork),
//! and change the state as if a node had written something.
//!
//! Run it with `cargo run -p stategraph --example time_travel`.

use std::sync::Arc;

use stategraph::checkpoint::MemorySaver;
use stategraph::{CompileOptions, NoInput, RunConfig, State, StateGraph, END, START};

#[derive(State, Debug)]
struct Counter {
    n: i64,
    #[state(reducer = add)]
    log: Vec<String>,
}

#[tokio::main]
async fn main() -> Result<(), stategraph::Error> {
    let mut graph = StateGraph::<Counter>::new();
    graph.add_node("inc", |s: Counter| async move {
        CounterUpdate::default()
            .n(s.n + 1)
            .log(vec![format!("inc to {}", s.n + 1)])
    });
    graph.add_node("double", |s: Counter| async move {
        CounterUpdate::default()
            .n(s.n * 2)
            .log(vec![format!("double to {}", s.n * 2)])
    });
    graph
        .add_edge(START, "inc")
        .add_edge("inc", "double")
        .add_edge("double", END);
    let app =
        graph.compile_with(CompileOptions::new().checkpointer(Arc::new(MemorySaver::new())))?;
    let thread = RunConfig::thread("counter");

    let end = app.invoke(CounterUpdate::default().n(1), &thread).await?;
    println!("run:      n = {} {:?}", end.n, end.log);

    let history = app.get_state_history(&thread, &Default::default()).await?;
    for s in &history {
        let md = s.metadata.as_ref();
        println!(
            "  step {:>2} {:<6} next={:?} values={:?}",
            md.and_then(|m| m.step).unwrap_or_default(),
            md.and_then(|m| m.source.as_ref())
                .map(|s| s.as_str())
                .unwrap_or(""),
            s.next,
            s.values
        );
    }

    // Rewind to the checkpoint before `double` ran and replay from there: a new branch.
    let before_double = history
        .iter()
        .find(|s| s.next == ["double"])
        .and_then(|s| s.config.as_ref()?.checkpoint_id.clone())
        .expect("a checkpoint before double");
    let replayed = app
        .invoke(
            NoInput,
            &RunConfig::thread("counter").at_checkpoint(before_double.clone()),
        )
        .await?;
    println!("replayed: n = {}", replayed.n);

    // Fork differently: pretend `inc` wrote n = 10, then let `double` run.
    let forked = RunConfig::thread("counter").at_checkpoint(before_double);
    app.update_state(&forked, CounterUpdate::default().n(10), Some("inc"))
        .await?;
    let end = app.invoke(NoInput, &thread).await?;
    println!("forked:   n = {} {:?}", end.n, end.log);
    Ok(())
}
