//! An agent on a real model: any OpenAI-compatible server (OpenAI, Ollama, vLLM,
//! llama.cpp, LM Studio, ...), two tools, the thread kept in SQLite, the answer streamed.
//!
//!     OPENAI_API_KEY=... cargo run -p stategraph --example openai_agent -- "What is 6 times 7, plus 1?"
//!     cargo run -p stategraph --example openai_agent -- --base-url http://127.0.0.1:11434/v1 --model qwen2.5 "..."
//!
//! Without flags, the model is `gpt-4o-mini` at `OPENAI_BASE_URL` (or OpenAI's host).
//! Running it again with the same `--thread` continues the conversation.

use std::sync::Arc;

use futures::StreamExt;
use stategraph::models::ChatOpenAI;
use stategraph::prebuilt::{create_react_agent, ChatModel, MessagesState, Tool};
use stategraph::sqlite::SqliteSaver;
use stategraph::{Message, RunConfig, State, StreamMode, StreamPart};

#[derive(serde::Deserialize)]
struct Pair {
    a: f64,
    b: f64,
}

/// The agent's tools: `add` and `multiply`.
pub fn tools() -> Vec<Tool> {
    let add = Tool::new(
        "add",
        "Add two numbers.",
        |p: Pair| async move { Ok(p.a + p.b) },
    );
    let multiply = Tool::new("multiply", "Multiply two numbers.", |p: Pair| async move {
        Ok(p.a * p.b)
    });
    [add, multiply]
        .map(|t| t.arg("a", "number").arg("b", "number"))
        .into()
}

/// Asks `question` on `thread` (kept in the SQLite file `db`), streaming the model's words
/// to `out`; returns the conversation.
pub async fn run(
    model: impl ChatModel,
    db: &std::path::Path,
    thread: &str,
    question: &str,
    out: &mut impl std::io::Write,
) -> Result<Vec<Message>, Box<dyn std::error::Error>> {
    let agent = create_react_agent(model, tools())
        .prompt("You are a careful calculator: use the tools for arithmetic.")
        .checkpointer(Arc::new(SqliteSaver::open(db)?))
        .compile()?;
    let config = RunConfig::thread(thread);
    let input = MessagesState::input(Message::human(question));
    let mut parts = agent.stream_typed(input, &config, StreamMode::Messages);
    while let Some(part) = parts.next().await {
        if let StreamPart::Messages {
            chunk, metadata, ..
        } = part?
        {
            if metadata.langgraph_node == "agent" {
                write!(out, "{}", chunk.text())?;
                for call in &chunk.tool_calls {
                    write!(out, "[calls {}]", call.name)?; // its arguments follow in pieces
                }
            } else {
                writeln!(out, "\n  {} -> {}", metadata.langgraph_node, chunk.text())?;
            }
        }
    }
    writeln!(out)?;
    let state = agent.get_state(&config).await?;
    let messages = MessagesState::from_values(&state.values)?.messages;
    for call in messages.iter().flat_map(|m| &m.tool_calls) {
        writeln!(out, "called {}({})", call.name, call.args.to_json())?;
    }
    Ok(messages)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut model, mut thread, mut words) = (
        ChatOpenAI::new("gpt-4o-mini"),
        "calc".to_owned(),
        Vec::new(),
    );
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--base-url" => model = model.base_url(args.next().ok_or("--base-url URL")?),
            "--model" => {
                model =
                    ChatOpenAI::new(args.next().ok_or("--model NAME")?).base_url(model_base(&model))
            }
            "--thread" => thread = args.next().ok_or("--thread ID")?,
            _ => words.push(a),
        }
    }
    let question = if words.is_empty() {
        "What is 6 times 7, plus 1?".to_owned()
    } else {
        words.join(" ")
    };
    let db = std::env::temp_dir().join("openai_agent.sqlite");
    let conversation = run(model, &db, &thread, &question, &mut std::io::stdout()).await?;
    println!(
        "{} messages in thread {thread:?} ({})",
        conversation.len(),
        db.display()
    );
    Ok(())
}

/// The base URL a client was given (kept when `--model` comes after `--base-url`).
fn model_base(model: &ChatOpenAI) -> String {
    model.base_url_str().to_owned()
}
