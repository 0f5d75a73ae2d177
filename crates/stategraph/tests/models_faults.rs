//! Model calls that fail, each through an agent on SQLite: a 401, 403, 404, 429 (its
//! `Retry-After` waited by the node's `RetryPolicy`), 500, Anthropic's 529, a reset
//! connection, a stream cut mid-message, an error event inside a stream, a server that
//! never answers. Each fails the run with a typed error naming the HTTP status and the
//! provider's error type and message, stores no message (not half a one), and leaves the
//! thread resumable: when the real local server is there (see tests/models_common), the
//! next attempt is relayed to it and the resumed run stores the whole answer.
//!
//! The faults come from the fault injector of tests/models_common (a raw TCP server
//! written here: real servers do not produce these faults on demand); every success
//! after one is the real server's.

#![cfg(all(feature = "models", feature = "sqlite"))]
#![allow(clippy::unwrap_used)]

#[path = "models_common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Fault, Faults, Server};
use stategraph::graph::NodeOptions;
use stategraph::models::{ChatAnthropic, ChatOpenAI};
use stategraph::prebuilt::{create_react_agent, ChatModel, MessagesState};
use stategraph::pregel::retry::RetryPolicy;
use stategraph::sqlite::SqliteSaver;
use stategraph::{
    Message, NoInput, NodeContext, NodeError, Role, RunConfig, State, StateGraph, END, START,
};

fn openai_error(status: u16, kind: &str, message: &str) -> Fault {
    let body = serde_json::json!({"error": {"message": message, "type": kind, "param": null, "code": null}});
    Fault::Status(status, "", body.to_string())
}

/// Runs one human message through an agent on `model` and SQLite; the run must fail
/// with an error whose text contains each of `expected`, store nothing but the human
/// message, and (with a real server behind the injector) finish when resumed.
async fn fails_then_resumes(name: &str, model: impl ChatModel, expected: &[&str], resumable: bool) {
    let dir = common::temp_dir(name);
    let saver = Arc::new(SqliteSaver::open(dir.join("t.sqlite")).unwrap());
    let agent = create_react_agent(model, vec![])
        .checkpointer(saver)
        .compile()
        .unwrap();
    let config = RunConfig::thread(name);
    let err = agent
        .invoke(MessagesState::input(Message::human("say hi")), &config)
        .await
        .expect_err("the fault fails the run");
    let text = err.to_string();
    for part in expected {
        assert!(text.contains(part), "{name}: {text:?} lacks {part:?}");
    }
    let state = agent.get_state(&config).await.unwrap();
    let stored = MessagesState::from_values(&state.values).unwrap().messages;
    assert_eq!(
        stored.len(),
        1,
        "{name}: only the human message is stored: {stored:?}"
    );
    assert_eq!(stored[0].role, Role::Human);
    assert_eq!(state.next, ["agent"], "{name}: the agent is still to run");
    if resumable {
        let done = agent
            .invoke(NoInput, &config)
            .await
            .unwrap()
            .done()
            .unwrap();
        assert_eq!(done.messages.len(), 2, "{name}: resumed to the answer");
        let answer = &done.messages[1];
        assert_eq!(answer.role, Role::Ai);
        assert!(
            answer.response_metadata.get("finish_reason").is_some()
                || answer.response_metadata.get("stop_reason").is_some()
        );
        assert!(answer.id.as_deref().unwrap().starts_with("lc_run--"));
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A client of the injector that does not send a request again after a connection
/// failure (so that each fault reaches the run).
fn openai_model(faults: &Faults, server: &Option<Server>) -> ChatOpenAI {
    let model = server.as_ref().map_or("gpt-test", |s| s.model.as_str());
    ChatOpenAI::new(model)
        .base_url(faults.openai_url())
        .api_key("test-key")
        .max_tokens(8)
        .max_retries(0)
}

#[tokio::test]
async fn a_reset_connection_is_sent_again_by_default() {
    let Some(server) = common::openai() else {
        return;
    };
    let faults = Faults::start(
        vec![Fault::Reset, Fault::Reset],
        Some(common::host_port(&server.base_url)),
    )
    .await;
    // Two resets, then the real server: the default two attempts more reach it.
    let model = ChatOpenAI::new(&server.model)
        .base_url(faults.openai_url())
        .max_tokens(8);
    let answer = model.call(&[Message::human("hi")], false).await.unwrap();
    assert_eq!(answer.role, Role::Ai);
    assert_eq!(faults.arrivals.lock().len(), 3);
    let faults = Faults::start(
        vec![Fault::Reset; 3],
        Some(common::host_port(&server.base_url)),
    )
    .await;
    let model = ChatOpenAI::new(&server.model)
        .base_url(faults.openai_url())
        .max_tokens(8);
    let err = model
        .call(&[Message::human("hi")], false)
        .await
        .unwrap_err();
    assert_eq!(
        err.kind,
        stategraph::models::ModelErrorKind::Connection,
        "{err}"
    );
    assert_eq!(faults.arrivals.lock().len(), 3, "three attempts in all");
}

#[tokio::test]
async fn http_errors_are_typed_and_leave_the_thread_resumable() {
    let server = common::openai();
    let upstream = server.as_ref().map(|s| common::host_port(&s.base_url));
    let cases = [
        ("e401", openai_error(401, "invalid_request_error", "Incorrect API key provided"), ["AuthenticationError", "HTTP 401", "invalid_request_error", "Incorrect API key"]),
        ("e403", openai_error(403, "permission_denied", "not allowed"), ["PermissionDeniedError", "HTTP 403", "permission_denied", "not allowed"]),
        ("e404", openai_error(404, "invalid_request_error", "The model `nope` does not exist"), ["NotFoundError", "HTTP 404", "invalid_request_error", "does not exist"]),
        ("e429", Fault::Status(429, "retry-after: 7\r\n", r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#.into()), ["RateLimitError", "HTTP 429", "Rate limit reached", "retry after 7.000s"]),
        ("e500", Fault::Status(500, "", "upstream exploded".into()), ["InternalServerError", "HTTP 500", "upstream exploded", "openai"]),
    ];
    for (name, fault, expected) in cases {
        let faults = Faults::start(vec![fault], upstream.clone()).await;
        fails_then_resumes(
            name,
            openai_model(&faults, &server),
            &expected,
            server.is_some(),
        )
        .await;
    }
}

#[tokio::test]
async fn a_reset_connection_is_a_connection_error() {
    let server = common::openai();
    let faults = Faults::start(
        vec![Fault::Reset],
        server.as_ref().map(|s| common::host_port(&s.base_url)),
    )
    .await;
    fails_then_resumes(
        "reset",
        openai_model(&faults, &server),
        &["APIConnectionError", "openai"],
        server.is_some(),
    )
    .await;
}

#[tokio::test]
async fn a_stream_cut_mid_message_stores_no_half_message() {
    let server = common::openai();
    let events = concat!(
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hal\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"f a mess\"},\"finish_reason\":null}]}\n\n",
    );
    let faults = Faults::start(
        vec![Fault::Cut(events.into())],
        server.as_ref().map(|s| common::host_port(&s.base_url)),
    )
    .await;
    let model = openai_model(&faults, &server).streaming(true);
    fails_then_resumes(
        "cut",
        model,
        &["APIConnectionError", "stream ended before the answer"],
        server.is_some(),
    )
    .await;
}

#[tokio::test]
async fn an_error_event_inside_a_stream_fails_the_call() {
    let events =
        "data: {\"error\":{\"message\":\"the model crashed\",\"type\":\"server_error\"}}\n\n";
    let faults = Faults::start(vec![Fault::Cut(events.into())], None).await;
    let model = openai_model(&faults, &None).streaming(true);
    fails_then_resumes(
        "in-stream",
        model,
        &["InternalServerError", "server_error", "the model crashed"],
        false,
    )
    .await;
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = common::openai();
    let faults = Faults::start(
        vec![Fault::Silent],
        server.as_ref().map(|s| common::host_port(&s.base_url)),
    )
    .await;
    // The timeout is per read: the real server's answer after resuming comes in time.
    let model = openai_model(&faults, &server).timeout(Duration::from_secs(1));
    fails_then_resumes(
        "silent",
        model,
        &["APITimeoutError", "no answer within 1s"],
        server.is_some(),
    )
    .await;
}

#[tokio::test]
async fn anthropic_errors_are_typed_too() {
    let server = common::anthropic();
    let upstream = server.as_ref().map(|s| common::host_port(&s.base_url));
    let model_name = server
        .as_ref()
        .map_or("claude-test".to_owned(), |s| s.model.clone());
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let auth =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let cut = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hal\"}}\n\n",
    );
    let error_event = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let cases: [(&str, Fault, bool, &[&str]); 4] = [
        (
            "a401",
            Fault::Status(401, "", auth.into()),
            false,
            &[
                "AuthenticationError",
                "anthropic: HTTP 401",
                "authentication_error",
                "invalid x-api-key",
            ],
        ),
        (
            "a529",
            Fault::Status(529, "", overloaded.into()),
            false,
            &["InternalServerError", "HTTP 529", "overloaded_error"],
        ),
        (
            "acut",
            Fault::Cut(cut.into()),
            true,
            &["APIConnectionError", "no message_stop"],
        ),
        (
            "aerr",
            Fault::Cut(error_event.into()),
            true,
            &["InternalServerError", "overloaded_error", "Overloaded"],
        ),
    ];
    for (name, fault, stream, expected) in cases {
        let faults = Faults::start(vec![fault], upstream.clone()).await;
        let model = ChatAnthropic::new(&model_name)
            .base_url(faults.anthropic_url())
            .api_key("test-key")
            .max_tokens(8)
            .max_retries(0)
            .streaming(stream);
        fails_then_resumes(name, model, expected, server.is_some()).await;
    }
}

#[tokio::test]
async fn the_retry_policy_waits_at_least_the_servers_retry_after() {
    let server = common::openai();
    let upstream = server.as_ref().map(|s| common::host_port(&s.base_url));
    let limited = Fault::Status(
        429,
        "retry-after: 1\r\n",
        r#"{"error":{"message":"slow down","type":"rate_limit"}}"#.into(),
    );
    let faults = Faults::start(vec![limited], upstream).await;
    let model = Arc::new(openai_model(&faults, &server));
    let mut g = StateGraph::<MessagesState>::new();
    let node = move |s: MessagesState, ctx: NodeContext| {
        let model = model.clone();
        async move {
            let answer = model.invoke(&s.messages, &ctx).await?;
            Ok::<_, NodeError>(MessagesState::input(vec![answer]))
        }
    };
    // Without the server's wait, the second attempt would come after 1 ms.
    let policy = RetryPolicy::attempts(2)
        .initial_interval(Duration::from_millis(1))
        .jitter(false);
    g.add_node_with("call", node, NodeOptions::new().retry(policy))
        .add_edge(START, "call")
        .add_edge("call", END);
    let app = g.compile().unwrap();
    let out = app
        .invoke(
            MessagesState::input(Message::human("hi")),
            &RunConfig::default(),
        )
        .await;
    let arrivals = faults.arrivals.lock().clone();
    assert_eq!(arrivals.len(), 2, "one retry: {out:?}");
    assert!(
        arrivals[1] - arrivals[0] >= Duration::from_secs(1),
        "waited {:?}",
        arrivals[1] - arrivals[0]
    );
    if server.is_some() {
        let done = out.unwrap().done().unwrap();
        assert_eq!(
            done.messages.last().unwrap().role,
            Role::Ai,
            "the retry reached the real server"
        );
    }
}
