//! langchain 1.x's agent: [`create_agent`] with [`Middleware`] (Python's
//! `langchain.agents.create_agent` and `langchain.agents.middleware`).
//!
//! The graph is Python's for the same configuration: a `model` node, a `tools` node
//! when there are tools, one node per middleware state hook (`"<Name>.before_model"`,
//! ...), and its channels `messages`, `jump_to`, `structured_response` with those the
//! middleware add, so a thread is shared with a Python agent in both directions.
//!
//! ```
//! use std::sync::Arc;
//! use stategraph::checkpoint::MemorySaver;
//! use stategraph::prebuilt::agent::{create_agent, HumanInTheLoopMiddleware};
//! use stategraph::prebuilt::{FakeChatModel, MessagesState, Tool};
//! use stategraph::{map, Command, Message, RunConfig, ToolCall};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let model = FakeChatModel::new([
//!     Message::ai("").with_tool_calls(vec![ToolCall::new("add", map! {"a" => 1, "b" => 2}, "c1")]),
//!     Message::ai("3"),
//! ]);
//! let add = Tool::new("add", "Add two integers.", |a: serde_json::Value| async move {
//!     Ok(a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0))
//! });
//! let agent = create_agent(model, vec![add])
//!     .middleware(HumanInTheLoopMiddleware::new().interrupt_on("add"))
//!     .checkpointer(Arc::new(MemorySaver::new()))
//!     .compile()
//!     .unwrap();
//! let config = RunConfig::thread("t");
//! let out = agent.invoke(MessagesState::input("1 + 2?"), &config).await.unwrap();
//! assert_eq!(out.interrupts.len(), 1);
//! let approve = map! {"decisions" => stategraph::list![map! {"type" => "approve"}]};
//! let out = agent.invoke(Command::<()>::default().with_resume(approve), &config).await.unwrap();
//! assert_eq!(out.state.get("messages").unwrap().as_list().unwrap().len(), 4);
//! # });
//! ```

mod auto_mode;
mod builder;
mod context_editing;
mod decisions;
mod edges;
mod error;
mod file_search;
mod functions;
mod hitl_per_call;
mod hitl_types;
mod human_in_the_loop;
mod middleware;
mod model_call_limit;
mod model_refusal;
mod model_retry;
mod model_router;
mod nodes;
mod pii;
mod provider_tool_search;
mod redaction;
mod shell;
mod state;
mod structured_output;
mod summarization;
mod summary_text;
mod todo;
mod todo_prompts;
mod tool_call_limit;
mod tool_emulator;
mod tool_error;
mod tool_retry;
mod tool_selection;
mod wiring;

pub use auto_mode::{AutoModeMiddleware, AUTO_MODE_INSTRUCTIONS};
pub use builder::{create_agent, AgentBuilder};
pub use context_editing::{ClearToolUsesEdit, ContextEditingMiddleware, TokenCounter};
pub use decisions::{DecisionState, Noul, NoulAnswer, NoulCriteria};
pub use error::MiddlewareConfigError;
pub use file_search::{FileSearchError, FilesystemFileSearchMiddleware};
pub use functions::{
    after_agent, after_model, before_agent, before_model, dynamic_prompt, wrap_model_call,
    wrap_tool_call, FnMiddleware,
};
pub use hitl_per_call::InterruptMode;
pub use hitl_types::{hitl_response, ActionRequest, Decision, HitlRequest, ReviewConfig};
pub use human_in_the_loop::{DecisionType, HumanInTheLoopMiddleware, InterruptOnConfig, When};
pub use middleware::{
    Hook, Middleware, ModelHandler, ModelRequest, ModelResponse, ToolCallRequest, ToolHandler,
};
pub use model_call_limit::{LimitExit, ModelCallLimitMiddleware};
pub use model_refusal::ModelRefusalMiddleware;
pub use model_retry::{ModelFallbackMiddleware, ModelRetryMiddleware, RetryFailure, RetryOn};
pub use model_router::{Choice, ChoiceAnswer, DecisionModel, ModelChoice, ModelRouterMiddleware};
pub use pii::PiiMiddleware;
pub use provider_tool_search::ProviderToolSearchMiddleware;
pub use redaction::{
    apply_strategy, detect_credit_card, detect_email, detect_ip, detect_mac_address, detect_url,
    Detector, PiiDetectionError, PiiMatch, RedactionStrategy, BUILTIN_PII_TYPES,
};
pub use shell::{
    HostExecutionPolicy, RedactionRule, RedactionStrategy as ShellRedactionStrategy,
    ShellConfigError, ShellToolMiddleware, ShellToolOptions,
};
pub use state::{AgentState, AgentUpdate, JumpTo};
pub use structured_output::{ResponseFormat, StructuredOutputError, ToolStrategy};
pub use summarization::{ContextSize, SummarizationMiddleware};
pub use summary_text::{count_tokens_approximately, DEFAULT_SUMMARY_PROMPT};
pub use todo::{write_todos_tool, TodoListMiddleware};
pub use todo_prompts::{WRITE_TODOS_SYSTEM_PROMPT, WRITE_TODOS_TOOL_DESCRIPTION};
pub use tool_call_limit::{ToolCallLimitMiddleware, ToolLimitExit};
pub use tool_emulator::LlmToolEmulator;
pub use tool_error::ToolErrorMiddleware;
pub use tool_retry::{ToolRetryFailure, ToolRetryMiddleware};
pub use tool_selection::{
    LlmToolSelectorMiddleware, OnParsingFailure, ParsingFallback, TOOL_SELECTION_SYSTEM_PROMPT,
};
