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

#[tokio::test]
async fn the_model_router_stores_pythons_answer_and_calls_the_chosen_model() {
    like_python("route").await;
}

#[tokio::test]
async fn the_model_router_refuses_no_choices_and_a_route_given_twice() {
    use stategraph::prebuilt::agent::{ModelChoice, ModelRouterMiddleware};
    use stategraph::prebuilt::FakeChatModel;
    let log = harness::Log::default();
    let none: Vec<(String, ModelChoice)> = vec![];
    let err =
        ModelRouterMiddleware::new(none, "x", scenarios::Classifier(log.clone())).unwrap_err();
    assert_eq!(err.middleware, "ModelRouterMiddleware");
    assert!(err.message.contains("at least 1 item"), "{err}");
    let twice = [
        (
            "a",
            ModelChoice::new(FakeChatModel::new([stategraph::Message::ai("")]), "x"),
        ),
        (
            "a",
            ModelChoice::new(FakeChatModel::new([stategraph::Message::ai("")]), "y"),
        ),
    ];
    let err = ModelRouterMiddleware::new(twice, "x", scenarios::Classifier(log)).unwrap_err();
    assert!(err.message.contains("\"a\" is given twice"), "{err}");
}

#[tokio::test]
async fn the_model_router_needs_a_human_message() {
    use stategraph::prebuilt::agent::{create_agent, ModelChoice, ModelRouterMiddleware};
    use stategraph::prebuilt::{FakeChatModel, MessagesState};
    let log = harness::Log::default();
    let choices = [(
        "a",
        ModelChoice::new(FakeChatModel::new([stategraph::Message::ai("")]), "x"),
    )];
    let router =
        ModelRouterMiddleware::new(choices, "x", scenarios::Classifier(log.clone())).unwrap();
    let agent = create_agent(FakeChatModel::new([stategraph::Message::ai("hi")]), vec![])
        .middleware(router)
        .compile()
        .unwrap();
    let input = MessagesState::input(stategraph::Message::ai("no human here"));
    let err = agent
        .invoke(input, &stategraph::RunConfig::default())
        .await
        .unwrap_err();
    match err {
        stategraph::Error::Node { node, message } => {
            assert_eq!(node, "ModelRouterMiddleware.before_agent");
            assert!(
                message.starts_with("ValueError(") && message.contains("requires a HumanMessage"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(log.lock().is_empty(), "the classifier was not asked");
}

#[tokio::test]
async fn write_todos_outside_an_agent_answers_without_writing_todos() {
    use stategraph::prebuilt::agent::{write_todos_tool, WRITE_TODOS_TOOL_DESCRIPTION};
    use stategraph::prebuilt::ToolNode;
    use stategraph::{list, map, Message, ToolCall};
    let tool = write_todos_tool(WRITE_TODOS_TOOL_DESCRIPTION);
    let todos = list![map! {"status" => "pending", "content" => "a"}];
    let out = tool.invoke(map! {"todos" => todos.clone()}).await.unwrap();
    let text = "Updated todo list to [{'content': 'a', 'status': 'pending'}]";
    assert_eq!(out, stategraph::Value::from(text));
    let call = ToolCall::new("write_todos", map! {"todos" => todos}, "t1");
    let ai = Message::ai("").with_tool_calls(vec![call]);
    let answers = ToolNode::new(vec![tool]).invoke(&[ai]).await.unwrap();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].text(), text);
    assert!(answers[0].extra.is_empty(), "{:?}", answers[0].extra);
}
