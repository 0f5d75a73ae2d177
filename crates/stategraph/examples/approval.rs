//! A payment waits for a human's approval across processes, then is rewound and forked.
//!
//! Each step is its own process, sharing one SQLite file (`approval.db` by default):
//!
//! ```text
//! cargo run -p stategraph --example approval -- start   # runs until the interrupt, exits
//! cargo run -p stategraph --example approval -- approve # answers "yes", the payment is made
//! cargo run -p stategraph --example approval -- rewind  # back before the approval: fork, "no"
//! ```
//!
//! The Python twin, `examples/python/approval.py`, prints the same lines (a test checks it).

use std::sync::Arc;

use stategraph::sqlite::SqliteSaver;
use stategraph::{Command, CompileOptions, NoInput, NodeContext, NodeError, RunConfig};
use stategraph::{State, StateGraph, END, START};

#[derive(State, Debug)]
struct Payment {
    amount: i64,
    approved: bool,
    status: String,
}

/// Runs one step of the flow (`start`, `approve` or `rewind`) on the SQLite file `db`.
pub async fn run(step: &str, db: &str) -> Result<(), Box<dyn std::error::Error>> {
    let mut graph = StateGraph::<Payment>::new();
    graph.add_node("approve", |s: Payment, ctx: NodeContext| async move {
        let answer = ctx.interrupt(format!("approve a payment of {}?", s.amount))?;
        Ok::<_, NodeError>(PaymentUpdate::default().approved(answer.as_str() == Some("yes")))
    });
    graph.add_node("pay", |s: Payment| async move {
        PaymentUpdate::default().status(if s.approved { "paid" } else { "rejected" })
    });
    graph
        .add_edge(START, "approve")
        .add_edge("approve", "pay")
        .add_edge("pay", END);
    let saver = Arc::new(SqliteSaver::open(db)?);
    let app = graph.compile_with(CompileOptions::new().checkpointer(saver))?;
    let thread = RunConfig::thread("payment-42");
    match step {
        "start" => {
            app.invoke(PaymentUpdate::default().amount(250), &thread)
                .await?;
            let paused = app.get_state(&thread).await?;
            println!("paused: {}", paused.interrupts[0].value);
        }
        "approve" => {
            let out = app
                .invoke(Command::<PaymentUpdate>::resume("yes"), &thread)
                .await?;
            println!("status: {}", out.status);
        }
        _ => {
            let history = app.get_state_history(&thread, &Default::default()).await?;
            let before = history
                .iter()
                .find(|s| s.next == ["approve"])
                .ok_or("no such step")?;
            let id = before
                .config
                .as_ref()
                .and_then(|c| c.checkpoint_id.clone())
                .ok_or("no id")?;
            app.invoke(NoInput, &RunConfig::thread("payment-42").at_checkpoint(id))
                .await?;
            let paused = app.get_state(&thread).await?;
            println!("paused again: {}", paused.interrupts[0].value);
            let out = app
                .invoke(Command::<PaymentUpdate>::resume("no"), &thread)
                .await?;
            println!("status: {}", out.status);
            let history = app.get_state_history(&thread, &Default::default()).await?;
            let sources = history
                .iter()
                .filter_map(|s| Some(s.metadata.as_ref()?.source.as_ref()?.as_str()));
            println!("history: {}", sources.collect::<Vec<_>>().join(" "));
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let step = args.next().unwrap_or_else(|| "start".into());
    run(&step, &args.next().unwrap_or_else(|| "approval.db".into())).await
}
