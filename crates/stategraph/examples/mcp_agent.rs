//! An agent with the tools of an MCP server over stdio, on SQLite: the server's tools are
//! listed, the agent calls one and answers. Twin of langchain-mcp-adapters'
//! `MultiServerMCPClient` + `create_react_agent` quickstart.
//!
//!     cargo run -p stategraph --features mcp --example mcp_agent -- --fake
//!     cargo run -p stategraph --features mcp --example mcp_agent -- --fake node dist/index.js stdio
//!
//! After the flags comes the server's command line (default: the reference server,
//! `npx -y @modelcontextprotocol/server-everything`). `--fake` answers with a scripted
//! model that calls the reference server's `get-sum`; without it the model comes from
//! [`model`].

use std::error::Error;
use std::sync::Arc;

use stategraph::mcp::{Connection, MultiServerMcpClient};
use stategraph::prebuilt::{create_react_agent, ChatModel, FakeChatModel, MessagesState, Tool};
use stategraph::{map, Message, RunConfig, ToolCall};

/// The agent's model: `MODEL` (default `openai:gpt-4o-mini`; keys and base URL from
/// `OPENAI_API_KEY` / `OPENAI_BASE_URL`, or the other providers' variables).
fn model() -> Result<Arc<dyn ChatModel>, Box<dyn Error>> {
    let spec = std::env::var("MODEL").unwrap_or_else(|_| "openai:gpt-4o-mini".into());
    Ok(stategraph::models::init_chat_model(&spec)?)
}

/// A scripted model for `--fake`: it asks the reference server to add 1 and 2, then
/// answers with what the tool said.
fn fake_model() -> Arc<dyn ChatModel> {
    let call = ToolCall::new("get-sum", map! {"a" => 1, "b" => 2}, "call-1");
    Arc::new(FakeChatModel::responder(
        move |messages: &[Message]| match messages.last() {
            Some(m) if m.role == stategraph::Role::Tool => {
                Message::ai(format!("The tool says: {}", m.text()))
            }
            _ => Message::ai("Let me add them.").with_tool_calls(vec![call.clone()]),
        },
    ))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let fake = args.first().is_some_and(|a| a == "--fake");
    if fake {
        args.remove(0);
    }
    if args.first().is_some_and(|a| a == "--") {
        args.remove(0);
    }
    if args.is_empty() {
        args = ["npx", "-y", "@modelcontextprotocol/server-everything"]
            .map(String::from)
            .into();
    }
    let model = if fake { fake_model() } else { model()? };

    let client = MultiServerMcpClient::new([("server", Connection::stdio(&args[0], &args[1..]))]);
    let tools = client.get_tools().await?;
    let names: Vec<&str> = tools.iter().map(Tool::name).collect();
    println!("tools: {}", names.join(", "));

    let path = std::env::temp_dir().join("mcp_agent.sqlite");
    let saver = Arc::new(stategraph::sqlite::SqliteSaver::open(path)?);
    let agent = create_react_agent(model, tools)
        .checkpointer(saver)
        .compile()?;
    let config = RunConfig::thread(uuid::Uuid::new_v4().to_string());
    let question = MessagesState::input(Message::human("What is 1 + 2?"));
    let out = agent.invoke(question, &config).await?;
    for message in &out.messages {
        println!("{}: {}", message.role.type_name(), message.text());
    }
    client.close().await;
    Ok(())
}
