//! The README's agent on a real model: `init_chat_model`, a typed tool, the thread in
//! SQLite. Twin of examples/python/real_agent.py (both print the same lines).
//!
//!     OPENAI_API_KEY=... cargo run -p stategraph --example real_agent
//!     OPENAI_BASE_URL=http://127.0.0.1:11434/v1 MODEL=openai:qwen2.5 cargo run -p stategraph --example real_agent

use stategraph::{models::init_chat_model, prebuilt::*, sqlite::SqliteSaver, Message, RunConfig};

/// The weather tool's arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Weather {
    /// The city to look up.
    city: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = init_chat_model(&std::env::var("MODEL").unwrap_or("openai:gpt-4o-mini".into()))?;
    let weather = Tool::typed(
        "get_weather",
        "Get the weather in a city.",
        |w: Weather| async move { Ok(format!("It is sunny in {}.", w.city)) },
    );
    let saver = SqliteSaver::open(std::env::temp_dir().join("real_agent.sqlite"))?;
    let agent = create_react_agent(model, vec![weather])
        .checkpointer(std::sync::Arc::new(saver))
        .compile()?;
    let config = RunConfig::thread(uuid::Uuid::new_v4().to_string());
    let input = MessagesState::input(Message::human("What is the weather in Paris?"));
    for m in &agent.invoke(input, &config).await?.messages {
        println!("{}: {}", m.role.type_name(), m.text());
    }
    Ok(())
}
