//! A payment waits for a human's approval across processes, then is rewound and forked.
//!
//! Each step is its own process, sharing one SQLite file:
//!
//! ```text
//! cargo run -p stategraph --example approval -- start a.db   # runs until the interrupt, exits
//! cargo run -p stategraph --example approval -- approve a.db # answers "yes": paid
//! cargo run -p stategraph --example approval -- rewind a.db  # before the approval: fork, "no"
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
    graph.add_edge(START, "approve");
    graph.add_edge("approve", "pay");
    graph.add_edge("pay", END);
    let saver = Arc::new(SqliteSaver::open(db)?);
    let app = graph.compile_with(CompileOptions::new().checkpointer(saver))?;
    let thread = RunConfig::thread("payment-42");
    match step {
        "start" => {
            // Process 1: runs until the interrupt, then exits.
            let input = PaymentUpdate::default().amount(250);
            let out = app.invoke(input, &thread).await?;
            println!("paused: {}", out.interrupts[0].value.repr());
        }
        "approve" => {
            // Process 2: answers and finishes the run.
            let out = app.invoke(Command::resume("yes"), &thread).await?;
            println!("status: {}", out.status);
        }
        _ => {
            // Process 3: back to before the approval, fork, answer differently.
            let history = app.get_state_history(&thread, &Default::default()).await?;
            let before = history.iter().find(|s| s.next == ["approve"]);
            let past = &before.ok_or("no checkpoint before approve")?.config;
            let out = app.invoke(NoInput, past).await?;
            println!("paused again: {}", out.interrupts[0].value.repr());
            let out = app.invoke(Command::resume("no"), &thread).await?;
            println!("status: {}", out.status);
            let history = app.get_state_history(&thread, &Default::default()).await?;
            let sources = history.iter().filter_map(|s| s.metadata.clone()?.source);
            let sources: Vec<_> = sources.map(|s| s.as_str().to_owned()).collect();
            println!("history: {}", sources.join(" "));
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    run(args.get(1).ok_or("no step")?, args.get(2).ok_or("no db")?).await
}
