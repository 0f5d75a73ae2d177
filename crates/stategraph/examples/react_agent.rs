//! A ReAct agent: a scripted chat model asks for a tool, reads its answer, then replies.
//! The model's words are streamed (the `messages` stream mode); the thread is kept in
//! SQLite, or in Postgres with `--postgres URL`. Twin of `examples/python/react_agent.py`.
//!
//!     cargo run -p stategraph --example react_agent
//!     cargo run -p stategraph --features postgres --example react_agent -- --postgres URL

use std::sync::Arc;

use futures::StreamExt;
use stategraph::checkpoint::CheckpointSaver;
use stategraph::prebuilt::{create_react_agent, FakeChatModel, MessagesState, Tool};
use stategraph::{map, Message, RunConfig, State, StreamMode, StreamPart, ToolCall};

#[derive(serde::Deserialize)]
struct Add {
    a: i64,
    b: i64,
}

async fn saver() -> stategraph::checkpoint::Result<Arc<dyn CheckpointSaver>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, url] = args.as_slice() {
        if flag == "--postgres" {
            return postgres(url).await;
        }
    }
    let path = std::env::temp_dir().join("react_agent.sqlite");
    Ok(Arc::new(stategraph::sqlite::SqliteSaver::open(path)?))
}

#[cfg(feature = "postgres")]
async fn postgres(url: &str) -> stategraph::checkpoint::Result<Arc<dyn CheckpointSaver>> {
    let saver = stategraph::postgres::PostgresSaver::connect(url).await?;
    saver.setup().await?;
    Ok(Arc::new(saver))
}

#[cfg(not(feature = "postgres"))]
async fn postgres(_url: &str) -> stategraph::checkpoint::Result<Arc<dyn CheckpointSaver>> {
    let why = "--postgres needs stategraph's `postgres` feature: cargo run --features postgres";
    Err(stategraph::checkpoint::Error::InvalidConfig(why.into()))
}

/// Runs the agent on a new thread of `saver`, writing what it shows to `out`.
pub async fn run(
    saver: Arc<dyn CheckpointSaver>,
    out: &mut impl std::io::Write,
) -> Result<(), Box<dyn std::error::Error>> {
    let call = ToolCall::new("add", map! {"a" => 1, "b" => 2}, "call-1");
    let model = FakeChatModel::new([
        Message::ai("Let me add them.").with_tool_calls(vec![call]),
        Message::ai("1 + 2 = 3."),
    ]);
    let add = Tool::new(
        "add",
        "Add two integers.",
        |x: Add| async move { Ok(x.a + x.b) },
    )
    .arg("a", "integer")
    .arg("b", "integer");
    let agent = create_react_agent(model, vec![add])
        .prompt("You add numbers.")
        .checkpointer(saver)
        .compile()?;
    let config = RunConfig::thread(uuid::Uuid::new_v4().to_string());
    let question = MessagesState::input(Message::human("What is 1 + 2?"));
    let mut events = agent.stream_typed(question, &config, StreamMode::Messages);
    while let Some(part) = events.next().await {
        // Print the words the agent's model streams.
        if let StreamPart::Messages {
            chunk, metadata, ..
        } = part?
        {
            if metadata.langgraph_node == "agent" && !chunk.text().is_empty() {
                write!(out, "{}|", chunk.text())?;
            }
        }
    }
    writeln!(out)?;
    let thread = MessagesState::from_values(&agent.get_state(&config).await?.values)?;
    for message in &thread.messages {
        writeln!(out, "{}: {}", message.role.type_name(), message.text())?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(saver().await?, &mut std::io::stdout()).await
}
