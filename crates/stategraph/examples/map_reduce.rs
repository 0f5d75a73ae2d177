//! Map-reduce with `Send`: one worker task per subject, each taking its own input type
//! (`Subject`, not the graph's state); the reducer joins their jokes. Python twin:
//! `examples/python/map_reduce.py` prints the same.
//!
//! Run it with `cargo run -p stategraph --example map_reduce`.

use stategraph::{map, RunConfig, Send, State, StateGraph, END, START};

/// The graph's state.
#[derive(State)]
pub struct Overall {
    topic: String,
    subjects: Vec<String>,
    #[state(reducer = add)]
    jokes: Vec<String>,
    best: String,
}

/// What one worker takes: a `Send` carries it.
#[derive(State)]
pub struct Subject {
    subject: String,
}

/// Runs the graph on topic "striped"; returns what `main` prints.
pub async fn run() -> stategraph::Result<String> {
    let mut g = StateGraph::<Overall>::new();
    g.add_node("generate_subjects", |s: Overall| async move {
        let subjects = ["cats", "dogs", "birds"].map(|k| format!("{} {k}", s.topic));
        OverallUpdate::default().subjects(subjects.to_vec())
    });
    g.add_node("write_joke", |Subject { subject: s }: Subject| async move {
        let joke = format!("Why did the {s} cross the road? To reach the other side.");
        OverallUpdate::default().jokes(vec![joke])
    });
    g.add_node("pick_best", |s: Overall| async move {
        let best = s.jokes.iter().min_by_key(|j| j.len()).cloned();
        OverallUpdate::default().best(best.unwrap_or_default())
    });
    g.add_edge(START, "generate_subjects");
    g.add_conditional_edges("generate_subjects", |s: &Overall| {
        let send = |x: &String| Send::new("write_joke", map! { "subject" => x.as_str() });
        s.subjects.iter().map(send).collect::<Vec<_>>()
    });
    g.add_edge("write_joke", "pick_best")
        .add_edge("pick_best", END);
    let input = OverallUpdate::default().topic("striped");
    let out = g.compile()?.invoke(input, &RunConfig::default()).await?;
    let jokes: String = out.jokes.iter().map(|j| format!("joke: {j}\n")).collect();
    Ok(format!("{jokes}best: {}\n", out.best))
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> stategraph::Result<()> {
    print!("{}", run().await?);
    Ok(())
}
