//! `ProviderToolSearchMiddleware` on the real clients against Python's. Python's
//! `create_agent` with the middleware and langchain-anthropic's `ChatAnthropic` (or
//! langchain-openai's `ChatOpenAI`) sends its model request to a local capture server
//! (tests/create_agent_pts/capture.py); ours sends its request to the same server, and the
//! requests' `tools`, `anthropic-beta` header, path and the rest of the body are compared.
//! Needs `STATEGRAPH_INTEROP=1` and a `STATEGRAPH_PYTHON` with the pinned langchain,
//! langchain-anthropic and langchain-openai.

#![cfg(feature = "models")]
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value as Json;
use stategraph::models::{ChatAnthropic, ChatOpenAI};
use stategraph::prebuilt::agent::{create_agent, ProviderToolSearchMiddleware};
use stategraph::prebuilt::{ChatModel, MessagesState, Tool, ToolError};
use stategraph::RunConfig;

fn python() -> Option<std::ffi::OsString> {
    if std::env::var("STATEGRAPH_INTEROP").map_or(true, |v| v.is_empty() || v == "0") {
        println!("note: skipping: STATEGRAPH_INTEROP is not set");
        return None;
    }
    Some(std::env::var_os("STATEGRAPH_PYTHON").expect("STATEGRAPH_INTEROP needs STATEGRAPH_PYTHON"))
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/create_agent_pts/capture.py")
}

fn command(python: &std::ffi::OsStr) -> Command {
    let mut c = Command::new(python);
    c.arg(script())
        .env("LANGSMITH_TRACING", "false")
        .env("LANGCHAIN_TRACING_V2", "false");
    c
}

/// Python's run: the request it sent, or `{"error": [type, message]}`.
fn python_request(python: &std::ffi::OsStr, provider: &str, searchable: &[&str]) -> Json {
    let out = command(python)
        .args(["python", provider, &searchable.join(",")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

/// The tools of capture.py's agent.
fn tools() -> Vec<Tool> {
    let weather = Tool::new(
        "get_weather",
        "Gets the weather for a city.",
        |a: Json| async move {
            Ok::<_, ToolError>(format!("sunny in {}", a["city"].as_str().unwrap_or("")))
        },
    )
    .arg("city", "string");
    let order = Tool::new(
        "lookup_order",
        "Looks an order up by its id.",
        |a: Json| async move {
            Ok::<_, ToolError>(format!("order {}", a["order_id"].as_str().unwrap_or("")))
        },
    )
    .arg("order_id", "string");
    vec![weather, order]
}

/// Our run against a capture server: the request it sent (`None` if it sent none) and
/// the run's error, if it failed.
async fn our_request(
    python: &std::ffi::OsStr,
    provider: &str,
    searchable: &[&str],
) -> (Json, Option<String>) {
    let mut server = command(python)
        .args(["serve", provider])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(server.stdout.take().unwrap());
    let mut url = String::new();
    out.read_line(&mut url).unwrap();
    let url = url.trim();
    let model: std::sync::Arc<dyn ChatModel> = if provider == "anthropic" {
        let m = ChatAnthropic::new("claude-sonnet-4-5")
            .base_url(url)
            .api_key("none");
        std::sync::Arc::new(m.max_tokens(1024))
    } else {
        std::sync::Arc::new(
            ChatOpenAI::new("gpt-4o-mini")
                .base_url(format!("{url}/v1"))
                .api_key("none"),
        )
    };
    let agent = create_agent(model, tools())
        .system_prompt("You help.")
        .middleware(ProviderToolSearchMiddleware::new(
            searchable.iter().copied(),
        ))
        .compile()
        .unwrap();
    let run = agent
        .invoke(
            MessagesState::input("Where is order 7?"),
            &RunConfig::default(),
        )
        .await;
    server.stdin.take().unwrap().write_all(b"done\n").unwrap();
    let mut captured = String::new();
    out.read_line(&mut captured).unwrap();
    assert!(server.wait().unwrap().success());
    (
        serde_json::from_str(&captured).unwrap(),
        run.err().map(|e| e.to_string()),
    )
}

#[tokio::test]
async fn anthropic_requests_defer_the_searchable_tools_as_python_does() {
    let Some(python) = python() else { return };
    for searchable in [&["lookup_order"][..], &["get_weather", "lookup_order"], &[]] {
        let want = python_request(&python, "anthropic", searchable);
        let (got, err) = our_request(&python, "anthropic", searchable).await;
        assert_eq!(err, None, "{searchable:?}");
        assert_eq!(got["path"], want["path"], "{searchable:?}");
        assert_eq!(
            got["anthropic_beta"], want["anthropic_beta"],
            "{searchable:?}: the beta header"
        );
        assert_eq!(
            got["body"]["tools"], want["body"]["tools"],
            "{searchable:?}: the tools"
        );
        for key in ["max_tokens", "model", "system"] {
            assert_eq!(got["body"][key], want["body"][key], "{searchable:?}: {key}");
        }
        // Python sends a lone text as a string, we as one text block: the same turn.
        let turn = &got["body"]["messages"][0];
        assert_eq!(
            turn["content"][0]["text"],
            want["body"]["messages"][0]["content"]
        );
        let keys = |b: &Json| b.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            keys(&got["body"]),
            keys(&want["body"]),
            "{searchable:?}: the body's keys"
        );
    }
}

#[tokio::test]
async fn an_unknown_searchable_name_is_python_s_value_error() {
    let Some(python) = python() else { return };
    for provider in ["anthropic", "openai"] {
        let want = python_request(&python, provider, &["nope", "lookup_order", "also_not"]);
        let (got, err) =
            our_request(&python, provider, &["nope", "lookup_order", "also_not"]).await;
        assert_eq!(got, Json::Null, "{provider}: no request is sent");
        let err = err.unwrap();
        assert_eq!(want["error"][0], "ValueError");
        let message = want["error"][1].as_str().unwrap();
        assert!(
            err.contains(&format!("ValueError('{message}')")),
            "{err} / {message}"
        );
    }
}

#[tokio::test]
async fn openai_search_needs_the_responses_api_so_ours_refuses_with_a_value_error() {
    let Some(python) = python() else { return };
    let want = python_request(&python, "openai", &["lookup_order"]);
    // Python switches to the Responses API for `tool_search`:
    assert_eq!(want["path"], "/v1/responses");
    let last = &want["body"]["tools"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last, &serde_json::json!({"type": "tool_search"}));
    let (got, err) = our_request(&python, "openai", &["lookup_order"]).await;
    assert_eq!(got, Json::Null, "no Chat Completions request is sent");
    let err = err.unwrap();
    assert!(
        err.contains("ValueError") && err.contains("Responses API"),
        "{err}"
    );
    // With nothing deferred the request passes unchanged, as in Python.
    let (got, err) = our_request(&python, "openai", &[]).await;
    assert_eq!(err, None);
    let want = python_request(&python, "openai", &[]);
    assert_eq!(got["path"], want["path"]);
    let names = |b: &Json| -> Vec<Json> {
        b["body"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].clone())
            .collect()
    };
    assert_eq!(names(&got), names(&want));
}

/// A model of no known provider: a deferred tool fails the call with a `ValueError`
/// (Python's, when `_get_model_provider` finds none); nothing deferred passes through.
#[tokio::test]
async fn a_model_of_no_provider_refuses_a_deferred_tool() {
    use stategraph::prebuilt::FakeChatModel;
    use stategraph::Message;
    let run = |searchable: Vec<&'static str>| async move {
        let model = FakeChatModel::new([Message::ai("done")]);
        let agent = create_agent(model, tools())
            .middleware(ProviderToolSearchMiddleware::new(searchable))
            .compile()
            .unwrap();
        agent
            .invoke(MessagesState::input("hi"), &RunConfig::default())
            .await
    };
    let err = run(vec!["lookup_order"]).await.unwrap_err().to_string();
    assert!(
        err.contains("ValueError('ProviderToolSearchMiddleware could not determine the provider"),
        "{err}"
    );
    assert!(err.contains("supports: anthropic, openai"), "{err}");
    assert!(run(vec![]).await.is_ok());
}
