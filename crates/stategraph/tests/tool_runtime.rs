//! Tools given a runtime (`Tool::with_runtime`, Python's `ToolRuntime`, `InjectedState`,
//! `InjectedStore`, `InjectedToolCallId`): a tool reads a state field, the store and its
//! call id, another the whole state; what they answer in a `create_react_agent` run and
//! the schema each sends the model equal those of their Python twins
//! (`tests/tool_runtime/runtime_tools.py`, run with the pinned Python when there is one;
//! required with `STATEGRAPH_INTEROP=1`).

#![allow(clippy::unwrap_used)]

mod support;

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value as J};
use stategraph::models::ToolSpec;
use stategraph::prebuilt::{create_react_agent, FakeChatModel, HasMessages, Tool, ToolRuntime};
use stategraph::store::{BaseStore, InMemoryStore, Namespace};
use stategraph::{map, Message, NodeError, Role, RunConfig, ToolCall, Value};

/// The agent's state with the user's name beside the conversation (Python's
/// `class State(AgentState): user: str`).
#[derive(stategraph::State, Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Chat {
    #[state(reducer = add_messages)]
    messages: Vec<Message>,
    user: String,
}

impl HasMessages for Chat {
    fn messages(&self) -> &[Message] {
        &self.messages
    }

    fn messages_update(messages: Vec<Message>) -> ChatUpdate {
        ChatUpdate {
            messages: Some(messages),
            ..ChatUpdate::default()
        }
    }
}

#[derive(serde::Deserialize)]
struct Greet {
    greeting: String,
}

fn fail(what: &str) -> NodeError {
    NodeError::named("ValueError", what)
}

/// Python's `greet(greeting, user: InjectedState("user"), store: InjectedStore,
/// tool_call_id: InjectedToolCallId)`.
fn greet_tool() -> Tool {
    Tool::with_runtime(
        "greet",
        "Greet the user in their favourite colour.",
        |a: Greet, rt: ToolRuntime| async move {
            let user = rt
                .state_field("user")
                .and_then(Value::as_str)
                .ok_or_else(|| fail("no user"))?
                .to_owned();
            let store = rt.store().ok_or_else(|| fail("no store"))?;
            let item = store
                .get(Namespace::from(["prefs"]), &user)
                .await
                .map_err(|e| fail(&e.to_string()))?
                .ok_or_else(|| fail("no prefs"))?;
            let color = item.value["color"].as_str().unwrap_or_default().to_owned();
            let call = rt.tool_call_id().unwrap_or_default();
            Ok(format!("{}, {user} (in {color}); call {call}", a.greeting))
        },
    )
    .arg("greeting", "string")
}

/// Python's `whoami(runtime: ToolRuntime)`: the state read as the graph's state type.
fn whoami_tool() -> Tool {
    Tool::with_runtime(
        "whoami",
        "Who is asking, from the tool's runtime.",
        |_: Value, rt: ToolRuntime| async move {
            let state: Chat = rt.state_as()?;
            let call = rt.tool_call_id().unwrap_or_default();
            Ok(format!(
                "{} asked in {} messages; call {call}",
                state.user,
                state.messages.len()
            ))
        },
    )
}

async fn run_agent() -> Vec<String> {
    let store: Arc<dyn BaseStore> = Arc::new(InMemoryStore::new());
    let mut prefs = stategraph::store::Document::new();
    prefs.insert("color".into(), json!("green"));
    store
        .put(Namespace::from(["prefs"]), "ada", prefs)
        .await
        .unwrap();
    let model = FakeChatModel::new([
        Message::ai("").with_id("ai-1").with_tool_calls(vec![
            ToolCall::new("greet", map! {"greeting" => "Hello"}, "call-1"),
            ToolCall::new("whoami", map! {}, "call-2"),
        ]),
        Message::ai("Done.").with_id("ai-2"),
    ]);
    let agent = create_react_agent(model, vec![greet_tool(), whoami_tool()])
        .store(store)
        .compile_with_state::<Chat>()
        .unwrap();
    let input = ChatUpdate {
        messages: Some(vec![Message::human("hi").with_id("h-1")]),
        user: Some("ada".into()),
    };
    let out = agent.invoke(input, &RunConfig::default()).await.unwrap();
    out.messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(Message::text)
        .collect()
}

#[tokio::test]
async fn a_tool_reads_a_state_field_the_store_and_its_call_id() {
    assert_eq!(
        run_agent().await,
        [
            "Hello, ada (in green); call call-1",
            "ada asked in 2 messages; call call-2"
        ]
    );
}

#[test]
fn the_runtime_is_not_in_the_schema_the_model_reads() {
    let spec = ToolSpec::from(&greet_tool());
    assert_eq!(
        spec.parameters,
        json!({"type": "object", "properties": {"greeting": {"type": "string"}}, "required": ["greeting"]})
    );
    let spec = ToolSpec::from(&whoami_tool());
    assert_eq!(spec.parameters, json!({"type": "object", "properties": {}}));
}

#[cfg(feature = "schemars")]
#[test]
fn a_typed_runtime_tool_derives_its_schema_from_its_arguments_only() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Args {
        greeting: String,
    }
    let tool = Tool::typed_with_runtime(
        "greet",
        "Greet the user in their favourite colour.",
        |a: Args, rt: ToolRuntime| async move {
            Ok::<_, NodeError>(format!("{} ({:?})", a.greeting, rt.tool_call_id()))
        },
    );
    assert_eq!(
        ToolSpec::from(&tool).parameters,
        ToolSpec::from(&greet_tool()).parameters
    );
}

/// The twins' functions and tool messages, from the pinned Python.
fn python_twins() -> Option<J> {
    let python = support::python::python()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tool_runtime/runtime_tools.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[tokio::test]
async fn the_tools_answer_and_read_as_their_python_twins() {
    let Some(twins) = python_twins() else {
        return;
    };
    assert_eq!(twins["tool_messages"], json!(run_agent().await));
    for (theirs, ours) in twins["functions"]
        .as_array()
        .unwrap()
        .iter()
        .zip([greet_tool(), whoami_tool()])
    {
        let spec = ToolSpec::from(&ours);
        assert_eq!(theirs["name"], json!(spec.name));
        assert_eq!(theirs["description"], json!(spec.description));
        assert_eq!(theirs["parameters"], spec.parameters, "{}", spec.name);
    }
}
