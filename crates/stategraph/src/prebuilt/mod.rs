//! Prebuilt agents, the counterpart of Python's `langgraph.prebuilt`: a chat state
//! ([`MessagesState`]), the [`ChatModel`] a node calls (with a scripted
//! [`FakeChatModel`] for tests and examples), [`Tool`]s run by a [`ToolNode`], the
//! [`tools_condition`] router, and [`create_react_agent`], which wires them into
//! LangGraph's ReAct loop (`agent` ⇄ `tools`), each tool call its own `tools` task (as
//! Python's default `version="v2"`: [`tool_call_sends`] makes the fan-out); it is
//! deprecated, as in Python, for [`agent::create_agent`], langchain 1.x's agent with
//! middleware. A tool made
//! with [`Tool::with_runtime`] reads the state, the store and its call id through a
//! [`ToolRuntime`].
//!
//! Real models: `stategraph::models` (feature `models`, on by default) has OpenAI-compatible
//! and Anthropic clients; for another provider, implement [`ChatModel`]. A model that
//! streams calls
//! [`NodeContext::send_message_chunk`](crate::NodeContext::send_message_chunk) for each
//! chunk, which feeds the `messages` stream mode.
//!
//! ```
//! use stategraph::prebuilt::{create_react_agent, FakeChatModel, MessagesState, Tool};
//! use stategraph::{Message, RunConfig, ToolCall};
//!
//! # tokio_test_block(async {
//! let model = FakeChatModel::new([
//!     Message::ai("").with_tool_calls(vec![ToolCall::new("add", stategraph::map! {"a" => 1, "b" => 2}, "c1")]),
//!     Message::ai("1 + 2 = 3"),
//! ]);
//! let add = Tool::new("add", "Add two integers.", |a: serde_json::Value| async move {
//!     Ok(a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0))
//! })
//! .arg("a", "integer")
//! .arg("b", "integer");
//! let agent = create_react_agent(model, vec![add]).compile().unwrap();
//! let out = agent
//!     .invoke(MessagesState::input(Message::human("what is 1 + 2?")), &RunConfig::default())
//!     .await
//!     .unwrap();
//! assert_eq!(out.messages.last().unwrap().text(), "1 + 2 = 3");
//! # });
//! # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
//! # }
//! ```

pub mod agent;
mod chat_history;
mod chat_model;
mod fake_model;
mod messages_state;
pub(crate) mod python_text;
mod react_agent;
pub(crate) mod tool;
mod tool_input;
mod tool_node;
mod tool_runtime;
#[cfg(feature = "schemars")]
pub(crate) mod tool_schema;
mod tools_condition;

pub use chat_history::validate_chat_history;
pub use chat_model::{run_message_id, ChatModel};
pub use fake_model::FakeChatModel;
pub use messages_state::{
    DeltaMessagesState, DeltaMessagesStateUpdate, HasMessages, Messages, MessagesState,
    MessagesStateUpdate,
};
pub use react_agent::{create_react_agent, AgentVersion, ReactAgentBuilder, NEED_MORE_STEPS};
pub use tool::{Tool, ToolError};
pub use tool_input::{
    state_value, tool_call_sends, tool_call_sends_to, ToolCallWithContext, ToolNodeInput,
    TOOL_CALL_WITH_CONTEXT,
};
pub use tool_node::{ToolErrorHandling, ToolNode};
pub use tool_runtime::ToolRuntime;
pub use tools_condition::tools_condition;
