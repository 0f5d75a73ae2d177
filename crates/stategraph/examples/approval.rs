//! An approval step: the graph pauses inside a node with `interrupt`, a human answers
//! later (possibly from another process), and the run resumes where it stopped.
//!
//! Run it with `cargo run -p stategraph --example approval`.

use std::sync::Arc;

use stategraph::checkpoint::MemorySaver;
use stategraph::{Command, CompileOptions, NodeContext, RunConfig, State, StateGraph, END, START};

#[derive(State, Debug)]
struct Payment {
    amount: i64,
    approved: bool,
    status: String,
}

#[tokio::main]
async fn main() -> Result<(), stategraph::Error> {
    let mut graph = StateGraph::<Payment>::new();
    graph.add_node("approve", |s: Payment, ctx: NodeContext| async move {
        let answer = ctx.interrupt(format!("approve a payment of {}?", s.amount))?;
        Ok::<_, stategraph::NodeError>(
            PaymentUpdate::default().approved(answer.as_str() == Some("yes")),
        )
    });
    graph.add_node("pay", |s: Payment| async move {
        let status = if s.approved { "paid" } else { "rejected" };
        PaymentUpdate::default().status(status)
    });
    graph
        .add_edge(START, "approve")
        .add_edge("approve", "pay")
        .add_edge("pay", END);
    let app =
        graph.compile_with(CompileOptions::new().checkpointer(Arc::new(MemorySaver::new())))?;
    let thread = RunConfig::thread("payment-42");

    let paused = app
        .invoke(PaymentUpdate::default().amount(250), &thread)
        .await?;
    for i in &paused.interrupts {
        println!("waiting for a human: {:?} (interrupt {})", i.value, i.id);
    }
    println!("next: {:?}", app.get_state(&thread).await?.next);

    let done = app.invoke(Command::resume("yes"), &thread).await?.done()?;
    println!("after the answer: {done:?}");
    Ok(())
}
