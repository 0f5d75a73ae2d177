//! An essay reviewed by a human across processes, with the functional API
//! (`stategraph::functional`): an entrypoint calling tasks, whose results are checkpointed
//! so that the process that resumes the thread does not run them again.
//!
//! ```text
//! cargo run -p stategraph --example functional -- start e.db    # runs the tasks, pauses
//! cargo run -p stategraph --example functional -- approve e.db  # resumes: no task reruns
//! cargo run -p stategraph --example functional -- again e.db    # a second review, `previous`
//! ```
//!
//! The Python twin, `examples/python/functional.py`, prints the same lines, and either
//! language continues a thread the other started (`tests/functional_example.rs`).

use parking_lot::Mutex;
use stategraph::functional::{task, Entrypoint, Final};
use stategraph::sqlite::SqliteSaver;
use stategraph::{map, Command, NodeContext, RunConfig};

/// The tasks that ran in this process.
static RAN: Mutex<Vec<&str>> = Mutex::new(Vec::new());

/// Runs one step (`start`, `approve` or `again`) on the SQLite file `db`.
pub async fn run(step: &str, db: &str) -> Result<(), Box<dyn std::error::Error>> {
    let compose = task("compose", |topic: String| async move {
        RAN.lock().push("compose");
        Ok(format!("an essay about {topic}"))
    });
    let count_words = task("count_words", |essay: String| async move {
        RAN.lock().push("count_words");
        Ok(essay.split_whitespace().count() as i64)
    });
    let review = Entrypoint::new("review", move |topic: String, ctx: NodeContext| {
        let (compose, count_words) = (compose.clone(), count_words.clone());
        async move {
            let essay: String = ctx.call(&compose, topic).await?;
            let words: i64 = ctx.call(&count_words, essay.clone()).await?;
            let verdict = ctx.interrupt(map! {"essay" => essay.as_str(), "words" => words})?;
            let n = ctx.previous::<i64>()?.unwrap_or(0) + 1; // the reviews before, saved
            let value = map! {"essay" => essay.as_str(), "verdict" => verdict, "reviews" => n};
            Ok(Final::new(value).save(n))
        }
    })
    .checkpointer(std::sync::Arc::new(SqliteSaver::open(db)?))
    .compile()?;
    let thread = RunConfig::thread("essay-1");
    // start: runs the tasks and pauses; approve: resumes (the tasks' results come from the
    // checkpoint); again: a second review, which sees the first one's saved count.
    if step != "approve" {
        let topic = if step == "start" { "cats" } else { "dogs" };
        let out = review.invoke(topic.to_owned(), &thread).await?;
        println!("paused: {}", out.interrupts[0].value.repr());
    }
    if step != "start" {
        let answer = if step == "again" { "bad" } else { "good" };
        let out = review.invoke(Command::resume(answer), &thread).await?;
        println!("done: {}", out.done()?.repr());
    }
    let ran = RAN.lock().join(", ");
    println!("tasks run: {}", if ran.is_empty() { "none" } else { &ran });
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    run(args.get(1).ok_or("no step")?, args.get(2).ok_or("no db")?).await
}
