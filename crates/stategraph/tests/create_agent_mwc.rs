//! `create_agent` with `TodoListMiddleware`, `LLMToolSelectorMiddleware`,
//! `LLMToolEmulator` and `ModelRouterMiddleware`: the stored thread, the graph's channels
//! and drawing, and what each model was sent (messages, bound tools and their schemas)
//! against the pinned Python's for the same configuration
//! (tests/interop/create_agent_mwc.py), and the typed errors of bad options.

#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

#[path = "create_agent_mwc/harness.rs"]
mod harness;
#[path = "create_agent_mwc/scenarios.rs"]
mod scenarios;

async fn like_python(name: &str) {
    harness::like_python(name, scenarios::agent).await;
}

#[tokio::test]
async fn todo_list_stores_pythons_thread_and_sends_pythons_prompt_and_tool() {
    like_python("todo").await;
}

#[tokio::test]
async fn todo_list_refuses_parallel_calls_as_python() {
    like_python("todo_parallel").await;
}

#[tokio::test]
async fn todo_list_answers_bad_todos_with_pydantics_errors() {
    like_python("todo_bad").await;
}

#[tokio::test]
async fn the_tool_selector_sends_pythons_selection_call_and_binds_the_tools_picked() {
    like_python("select").await;
    like_python("select_agent_model").await;
}

#[tokio::test]
async fn the_tool_selector_falls_back_as_python_after_malformed_answers() {
    like_python("select_fallback").await;
    like_python("select_fallback_list").await;
}

#[tokio::test]
async fn the_tool_selector_fails_the_model_call_with_pythons_errors() {
    like_python("select_malformed").await;
    like_python("select_invalid").await;
    like_python("select_missing").await;
}

#[tokio::test]
async fn the_tool_emulator_answers_with_its_model_as_python() {
    like_python("emulate").await;
    like_python("emulate_all").await;
}
