//! `create_agent`'s middleware hooks written by users: jumps, handler wrapping, a
//! failing hook that leaves a resumable thread, and the typed errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use stategraph::checkpoint::MemorySaver;
use stategraph::prebuilt::agent::{
    create_agent, AgentState, AgentUpdate, Hook, JumpTo, Middleware, ModelHandler, ModelRequest,
    ModelResponse, ResponseFormat, ToolCallRequest, ToolHandler,
};
use stategraph::prebuilt::{FakeChatModel, MessagesState, Tool};
use stategraph::{map, Error, Message, NoInput, NodeContext, NodeError, RunConfig, ToolCall};

fn add_tool() -> Tool {
    Tool::new(
        "add",
        "Add two integers.",
        |a: serde_json::Value| async move {
            Ok::<_, stategraph::prebuilt::ToolError>(
                a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0),
            )
        },
    )
    .arg("a", "integer")
    .arg("b", "integer")
}

fn add_call() -> Message {
    Message::ai("").with_tool_calls(vec![ToolCall::new("add", map! {"a" => 1, "b" => 2}, "c1")])
}

fn texts(values: &indexmap::IndexMap<String, stategraph::Value>) -> Vec<String> {
    let state = AgentState::from_values(values.clone()).unwrap();
    state.messages().iter().map(Message::text).collect()
}

/// Fails its `before_model` the first time, then lets the agent go on.
struct Flaky(AtomicBool);

#[async_trait::async_trait]
impl Middleware for Flaky {
    fn name(&self) -> String {
        "Flaky".into()
    }
    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::BeforeModel]
    }
    async fn before_model(
        &self,
        _: &AgentState,
        _: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        if !self.0.swap(true, Ordering::SeqCst) {
            return Err(NodeError::named("ConnectionError", "the audit log is down"));
        }
        Ok(AgentUpdate::none())
    }
}

#[tokio::test]
async fn a_failing_middleware_stops_at_a_checkpoint_the_run_resumes_from() {
    let model = FakeChatModel::new([add_call(), Message::ai("3")]);
    let agent = create_agent(model.clone(), vec![add_tool()])
        .middleware(Flaky(AtomicBool::new(false)))
        .checkpointer(Arc::new(MemorySaver::new()))
        .compile()
        .unwrap();
    let config = RunConfig::thread("t");
    let err = agent
        .invoke(MessagesState::input("1 + 2?"), &config)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Node { node, message } if node == "Flaky.before_model" && message.contains("ConnectionError")),
        "{err:?}"
    );
    let state = agent.get_state(&config).await.unwrap();
    assert_eq!(state.next, ["Flaky.before_model"]);
    assert!(model.calls().is_empty(), "the model was not called");
    let out = agent.invoke(NoInput, &config).await.unwrap();
    assert_eq!(texts(&out.values), ["1 + 2?", "", "3", "3"]);
}

/// Ends the agent before the model once the conversation has three messages, and counts
/// the model and tool calls it wraps.
#[derive(Default)]
struct Guard {
    model_calls: AtomicUsize,
    tool_calls: AtomicUsize,
}

#[async_trait::async_trait]
impl Middleware for Guard {
    fn name(&self) -> String {
        "Guard".into()
    }
    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::BeforeModel, Hook::WrapModelCall, Hook::WrapToolCall]
    }
    fn can_jump_to(&self, _: Hook) -> Vec<JumpTo> {
        vec![JumpTo::End]
    }
    async fn before_model(
        &self,
        state: &AgentState,
        _: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        if state.messages().len() >= 3 {
            return Ok(AgentUpdate::none()
                .jump_to(JumpTo::End)
                .messages(vec![Message::ai("stopped")]));
        }
        Ok(AgentUpdate::none())
    }
    async fn wrap_model_call(
        &self,
        mut request: ModelRequest,
        handler: ModelHandler,
    ) -> Result<ModelResponse, NodeError> {
        self.model_calls.fetch_add(1, Ordering::SeqCst);
        request.system_message = Some(Message::system("be brief"));
        handler.call(request).await
    }
    async fn wrap_tool_call(
        &self,
        mut request: ToolCallRequest,
        handler: ToolHandler,
    ) -> Result<Message, NodeError> {
        self.tool_calls.fetch_add(1, Ordering::SeqCst);
        request.call.args = map! {"a" => 40, "b" => 2};
        handler.call(request).await
    }
}

#[tokio::test]
async fn hooks_jump_and_wrap_the_model_and_tool_calls() {
    let guard = Arc::new(Guard::default());
    let model = FakeChatModel::new([add_call(), Message::ai("never")]);
    let agent = create_agent(model.clone(), vec![add_tool()])
        .middleware_arc(guard.clone())
        .compile()
        .unwrap();
    let drawing = agent.get_graph().draw_mermaid();
    assert!(
        drawing.contains("Guard\\2ebefore_model -.-> __end__;"),
        "{drawing}"
    );
    let out = agent
        .invoke(MessagesState::input("1 + 2?"), &RunConfig::default())
        .await
        .unwrap();
    assert_eq!(texts(&out.values), ["1 + 2?", "", "42", "stopped"]);
    assert_eq!(guard.model_calls.load(Ordering::SeqCst), 1);
    assert_eq!(guard.tool_calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        model.calls()[0][0].text(),
        "be brief",
        "the wrapper's system message"
    );
}

#[tokio::test]
async fn a_structured_answer_that_does_not_fit_is_a_typed_error() {
    let schema = serde_json::json!({
        "title": "Sum", "type": "object",
        "properties": {"total": {"type": "integer"}}, "required": ["total"],
    });
    let bad = || {
        Message::ai("").with_tool_calls(vec![ToolCall::new("Sum", map! {"total" => "three"}, "s1")])
    };
    // Checked and strict: the run fails with the error's kind and where.
    let agent = create_agent(FakeChatModel::new([bad()]), vec![])
        .response_format(ResponseFormat::tool(schema.clone()).checked().strict())
        .compile()
        .unwrap();
    let err = agent
        .invoke(MessagesState::input("sum?"), &RunConfig::default())
        .await
        .unwrap_err();
    let Error::Node { node, message } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(node, "model");
    assert!(
        message.starts_with(
            "StructuredOutputValidationError('Failed to parse structured output for tool"
        ),
        "{message}"
    );
    assert!(
        message.contains("should be of type integer, got \"three\""),
        "{message}"
    );
    // Checked, errors handled: the model is told and answers again.
    let good =
        Message::ai("").with_tool_calls(vec![ToolCall::new("Sum", map! {"total" => 3}, "s2")]);
    let agent = create_agent(FakeChatModel::new([bad(), good]), vec![])
        .response_format(ResponseFormat::tool(schema.clone()).checked())
        .compile()
        .unwrap();
    let out = agent
        .invoke(MessagesState::input("sum?"), &RunConfig::default())
        .await
        .unwrap();
    let texts = texts(&out.values);
    assert!(
        texts[2].starts_with("Error: Failed to parse structured output for tool 'Sum'"),
        "{texts:?}"
    );
    assert_eq!(out.values["structured_response"], map! {"total" => 3});
    // A provider answer that is not JSON.
    let agent = create_agent(FakeChatModel::new([Message::ai("three")]), vec![])
        .response_format(ResponseFormat::provider(schema))
        .compile()
        .unwrap();
    let err = agent
        .invoke(MessagesState::input("sum?"), &RunConfig::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("StructuredOutputValidationError"),
        "{err}"
    );
}

#[tokio::test]
async fn bad_options_are_typed_errors() {
    use stategraph::prebuilt::agent::{
        HumanInTheLoopMiddleware, LimitExit, ModelCallLimitMiddleware, ToolCallLimitMiddleware,
        ToolLimitExit,
    };
    let err = create_agent(FakeChatModel::new(Vec::<Message>::new()), vec![])
        .middleware(HumanInTheLoopMiddleware::new())
        .middleware(HumanInTheLoopMiddleware::new())
        .compile()
        .err()
        .unwrap();
    assert!(
        matches!(&err, Error::InvalidGraph(m) if m == "Please remove duplicate middleware instances."),
        "{err:?}"
    );
    let err = ModelCallLimitMiddleware::new(None, None, LimitExit::End).unwrap_err();
    assert_eq!(err.to_string(), "ModelCallLimitMiddleware: At least one limit must be specified (thread_limit or run_limit)");
    let err =
        ToolCallLimitMiddleware::new(None, Some(1), Some(2), ToolLimitExit::Continue).unwrap_err();
    assert!(
        err.message
            .starts_with("run_limit (2) cannot exceed thread_limit (1)"),
        "{err}"
    );
    let empty = stategraph::prebuilt::agent::InterruptOnConfig::new([]);
    let hitl = HumanInTheLoopMiddleware::new()
        .interrupt_on_with("add", empty)
        .unwrap_err();
    assert!(
        hitl.message
            .contains("`allowed_decisions` must be a non-empty list"),
        "{hitl}"
    );
}

#[tokio::test]
async fn a_decision_the_review_does_not_allow_fails_the_resume() {
    use stategraph::prebuilt::agent::{DecisionType, HumanInTheLoopMiddleware, InterruptOnConfig};
    let hitl = HumanInTheLoopMiddleware::new()
        .interrupt_on_with("add", InterruptOnConfig::new([DecisionType::Approve]))
        .unwrap();
    let agent = create_agent(
        FakeChatModel::new([add_call(), Message::ai("3")]),
        vec![add_tool()],
    )
    .middleware(hitl)
    .checkpointer(Arc::new(MemorySaver::new()))
    .compile()
    .unwrap();
    let config = RunConfig::thread("t");
    let out = agent
        .invoke(MessagesState::input("1 + 2?"), &config)
        .await
        .unwrap();
    assert_eq!(
        out.interrupts[0]
            .value
            .get("review_configs")
            .unwrap()
            .as_list()
            .unwrap()[0],
        map! {"action_name" => "add", "allowed_decisions" => stategraph::list!["approve"]}
    );
    let reject = map! {"decisions" => stategraph::list![map! {"type" => "reject"}]};
    let err = agent
        .invoke(
            stategraph::Command::<()>::default().with_resume(reject),
            &config,
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Decision type 'reject' is not allowed for tool 'add'"),
        "{err}"
    );
}
