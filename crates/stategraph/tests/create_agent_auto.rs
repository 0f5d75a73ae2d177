//! `create_agent` with `AutoModeMiddleware` and a scripted decision model: the stored
//! thread (allowed and blocked calls, an ungated tool), the graph's channels and
//! drawing, and what the decision model was asked, against the pinned Python's for the
//! same configuration (tests/interop/create_agent_auto.py), and the typed errors.

#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

#[path = "create_agent_auto/harness.rs"]
mod harness;

use std::sync::Arc;

use async_trait::async_trait;
use stategraph::checkpoint::CheckpointSaver;
use stategraph::prebuilt::agent::{
    create_agent, AutoModeMiddleware, Choice, ChoiceAnswer, DecisionModel, DecisionState, Noul,
    NoulAnswer, NoulCriteria,
};
use stategraph::prebuilt::{MessagesState, Tool, ToolError};
use stategraph::{list, map, CompiledGraph, DynState, Message, ToolCall};
use stategraph::{NodeContext, NodeError, RunConfig};

use harness::{message_view, Log, Recorder};

/// The script's `Classifier`: the risk by call id (`RISK`), recording what it is asked;
/// `None` answers out of range.
struct Classifier(Log, Option<f64>);

#[async_trait]
impl DecisionModel for Classifier {
    async fn choose(
        &self,
        _: &Message,
        _: &Choice,
        _: &NodeContext,
    ) -> Result<ChoiceAnswer, NodeError> {
        unreachable!("AutoModeMiddleware asks no Choice")
    }

    async fn noul(
        &self,
        state: &DecisionState,
        id: &str,
        question: &Noul,
        _: &NodeContext,
    ) -> Result<NoulAnswer, NodeError> {
        let mut seen = stategraph::Value::Map(state.fields.clone()).to_json();
        let messages: Vec<serde_json::Value> = state.messages.iter().map(message_view).collect();
        seen["messages"] = serde_json::json!(messages);
        let questions = serde_json::json!({id: question.to_value().to_json()});
        self.0
            .lock()
            .push(serde_json::json!({"state": seen, "questions": questions}));
        let risk = match seen["tool_call"]["id"].as_str().unwrap() {
            "call-1" => 0.2,
            "call-2" => 0.5,
            _ => 0.875,
        };
        Ok(NoulAnswer {
            noul: self.1.unwrap_or(risk),
        })
    }
}

fn int_tool(name: &'static str, description: &'static str, f: fn(i64, i64) -> i64) -> Tool {
    Tool::new(name, description, move |a: serde_json::Value| async move {
        Ok::<_, ToolError>(f(
            a["a"].as_i64().unwrap_or(0),
            a["b"].as_i64().unwrap_or(0),
        ))
    })
}

fn tools() -> Vec<Tool> {
    let shout = Tool::new(
        "shout",
        "Shout a text.",
        |a: serde_json::Value| async move {
            Ok::<_, ToolError>(a["text"].as_str().unwrap_or("").to_uppercase())
        },
    );
    vec![
        int_tool("add", "Add two integers.", |a, b| a + b),
        int_tool("mul", "Multiply two integers.", |a, b| a * b),
        shout,
    ]
}

/// The script's `ANSWERS`: add and mul at once, then shout, then the answer.
fn answers() -> Vec<Message> {
    let add = ToolCall::new("add", map! {"a" => 1, "b" => 2}, "call-1");
    let mul = ToolCall::new("mul", map! {"a" => 6, "b" => 7}, "call-2");
    let shout = ToolCall::new("shout", map! {"text" => "hi"}, "call-3");
    vec![
        Message::ai("")
            .with_id("ai-1")
            .with_tool_calls(vec![add, mul]),
        Message::ai("Again.")
            .with_id("ai-2")
            .with_tool_calls(vec![shout]),
        Message::ai("Done.").with_id("ai-3"),
    ]
}

fn middleware(name: &str, log: Log) -> AutoModeMiddleware {
    match name {
        "gate" => AutoModeMiddleware::new(["add", "mul"], Classifier(log, None)).unwrap(),
        "gate_all" => AutoModeMiddleware::new([" add", "mul", "shout"], Classifier(log, None))
            .unwrap()
            .instructions("Is `tool_call` risky?")
            .criteria(NoulCriteria::new(
                "It writes.",
                map! {"reads" => list!["public"]},
            )),
        other => panic!("no scenario {other}"),
    }
}

fn agent(
    name: &str,
    saver: Arc<dyn CheckpointSaver>,
) -> (CompiledGraph<DynState>, Vec<(&'static str, Log)>) {
    let log = Log::default();
    let (model, _) = Recorder::new(answers());
    let agent = create_agent(model, tools())
        .system_prompt("You compute.")
        .middleware(middleware(name, log.clone()))
        .checkpointer(saver)
        .compile()
        .unwrap();
    (agent, vec![("classifier", log)])
}

#[tokio::test]
async fn auto_mode_runs_low_risk_calls_and_blocks_risky_ones_as_python() {
    harness::like_python("gate", agent).await;
}

#[tokio::test]
async fn auto_mode_sends_its_own_instructions_and_criteria_as_python() {
    harness::like_python("gate_all", agent).await;
}

#[test]
fn auto_mode_refuses_no_tools_as_pythons_min_length() {
    let none: [&str; 0] = [];
    let err = AutoModeMiddleware::new(none, Classifier(Log::default(), None)).unwrap_err();
    assert_eq!(err.middleware, "AutoModeMiddleware");
    assert!(err.message.contains("at least 1 item"), "{err}");
}

#[tokio::test]
async fn an_answer_out_of_range_fails_the_tool_call_and_the_tool_does_not_run() {
    let log = Log::default();
    let gate = AutoModeMiddleware::new(["add"], Classifier(log.clone(), Some(1.5))).unwrap();
    let (model, _) = Recorder::new(answers());
    let agent = create_agent(model, tools())
        .middleware(gate)
        .compile()
        .unwrap();
    let input = MessagesState::input(Message::human("What is 1 + 2?"));
    let err = agent
        .invoke(input, &RunConfig::default())
        .await
        .unwrap_err();
    match err {
        stategraph::Error::Node { node, message } => {
            assert_eq!(node, "tools");
            assert!(message.starts_with("ValidationError("), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(log.lock().len(), 1);
}

#[tokio::test]
async fn a_decision_model_answering_no_noul_fails_the_call() {
    struct Router;
    #[async_trait]
    impl DecisionModel for Router {
        async fn choose(
            &self,
            _: &Message,
            _: &Choice,
            _: &NodeContext,
        ) -> Result<ChoiceAnswer, NodeError> {
            unreachable!()
        }
    }
    let gate = AutoModeMiddleware::new(["mul"], Router).unwrap();
    let (model, _) = Recorder::new(answers());
    let agent = create_agent(model, tools())
        .middleware(gate)
        .compile()
        .unwrap();
    let input = MessagesState::input(Message::human("What is 1 + 2?"));
    let err = agent
        .invoke(input, &RunConfig::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("NotImplementedError"), "{err}");
}
