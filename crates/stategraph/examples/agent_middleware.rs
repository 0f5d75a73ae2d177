//! A human approves an agent's tool call through `HumanInTheLoopMiddleware`, across two
//! processes sharing one SQLite file (langchain 1.x's `create_agent`):
//!
//! ```text
//! cargo run -p stategraph --example agent_middleware -- start a.db    # pauses at the review
//! cargo run -p stategraph --example agent_middleware -- approve a.db  # approves: the tool runs
//! ```
//!
//! The model is scripted. The Python twin, `examples/python/agent_middleware.py`, prints the
//! same lines, and either one resumes the other's thread (a test checks both).

use std::sync::Arc;

use stategraph::prebuilt::agent::{create_agent, hitl_response, AgentState, Decision};
use stategraph::prebuilt::agent::{HitlRequest, HumanInTheLoopMiddleware};
use stategraph::prebuilt::{FakeChatModel, MessagesState, Tool, ToolError};
use stategraph::{map, sqlite::SqliteSaver, Command, Message, RunConfig, ToolCall};

#[derive(serde::Deserialize, stategraph::schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

/// Runs one step (`start` or `approve`) on the SQLite file `db`.
pub async fn run(step: &str, db: &str) -> Result<(), Box<dyn std::error::Error>> {
    let call = ToolCall::new("add", map! {"a" => 1, "b" => 2}, "call-1");
    let answer = match step {
        "start" => Message::ai("").with_tool_calls(vec![call]),
        _ => Message::ai("1 + 2 = 3."),
    };
    let add = Tool::typed("add", "Add two integers.", |x: Add| async move {
        Ok::<_, ToolError>(x.a + x.b)
    });
    let agent = create_agent(FakeChatModel::new([answer]), vec![add])
        .system_prompt("You add numbers.")
        .middleware(HumanInTheLoopMiddleware::new().interrupt_on("add"))
        .checkpointer(Arc::new(SqliteSaver::open(db)?))
        .compile()?;
    let thread = RunConfig::thread("agent-1");
    if step == "start" {
        let out = agent
            .invoke(MessagesState::input("What is 1 + 2?"), &thread)
            .await?;
        let action = &HitlRequest::from_interrupts(&out.interrupts)?.action_requests[0];
        println!("review: '{}' {}", action.name, action.args.repr());
    } else {
        let approve = Command::resume(hitl_response([Decision::Approve]));
        for m in AgentState::of(&agent.invoke(approve, &thread).await?)?.messages() {
            println!("{}: {}", m.role.type_name(), m.text());
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    run(args.get(1).ok_or("no step")?, args.get(2).ok_or("no db")?).await
}
