//! create_agent's filesystem middleware against the pinned Python's (langchain 1.5.0):
//! `FilesystemFileSearchMiddleware`'s tools on a directory laid out as
//! tests/create_agent_mwd/gen_file_search.py lays it out (fixture file_search.json):
//! their names, descriptions and schemas, their answers to the same calls, and the tool
//! messages an agent run with a scripted model stores; `ShellToolMiddleware`'s tool and
//! the tool messages of a session (tests/create_agent_mwd/gen_shell.py, shell.json).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use serde_json::{json, Value as J};
use stategraph::prebuilt::agent::{
    create_agent, AgentState, FileSearchError, FilesystemFileSearchMiddleware, HostExecutionPolicy,
    RedactionRule, ShellConfigError, ShellRedactionStrategy, ShellToolMiddleware, ShellToolOptions,
};
use stategraph::prebuilt::{FakeChatModel, MessagesState};
use stategraph::{Message, RunConfig, ToolCall};

fn fixture(name: &str) -> J {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/create_agent_mwd")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A fresh directory under the system's temp dir.
fn scratch(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!("mwd-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The script's tree under `top/root`, its outside files and its symlinks.
fn lay_out(fx: &J, top: &Path) -> PathBuf {
    let root = top.join("root");
    for entry in fx["tree"].as_array().unwrap() {
        let (path, content) = (entry[0].as_str().unwrap(), entry[1].as_str().unwrap());
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        let bytes: Vec<u8> = if path.ends_with(".bin") {
            content.chars().map(|c| c as u8).collect()
        } else {
            content.as_bytes().to_vec()
        };
        std::fs::write(&full, bytes).unwrap();
        let mtime = UNIX_EPOCH + Duration::from_secs(entry[2].as_u64().unwrap());
        let file = std::fs::File::options().write(true).open(&full).unwrap();
        file.set_modified(mtime).unwrap();
    }
    std::fs::write(top.join("OUTSIDE"), "TODO outside\n").unwrap();
    std::fs::create_dir_all(top.join("OUTSIDE_DIR")).unwrap();
    std::fs::write(top.join("OUTSIDE_DIR/x.py"), "TODO outside dir\n").unwrap();
    for link in fx["links"].as_array().unwrap() {
        let (name, target) = (link[0].as_str().unwrap(), link[1].as_str().unwrap());
        let dest = if target.starts_with("OUTSIDE") {
            top.join(target)
        } else {
            root.join(target)
        };
        std::os::unix::fs::symlink(dest, root.join(name)).unwrap();
    }
    root
}

fn search_middleware(fx: &J, tag: &str) -> FilesystemFileSearchMiddleware {
    let root = lay_out(fx, &scratch(tag));
    FilesystemFileSearchMiddleware::new(root)
        .max_file_size_mb(fx["max_file_size_mb"].as_u64().unwrap())
}

#[test]
fn file_search_tools_have_pythons_names_descriptions_and_schemas() {
    let fx = fixture("file_search.json");
    let mw = FilesystemFileSearchMiddleware::new(std::env::temp_dir());
    let tools = [mw.glob_search_tool(), mw.grep_search_tool()];
    for (tool, py) in tools.iter().zip(fx["tools"].as_array().unwrap()) {
        assert_eq!(tool.name(), py["name"]);
        assert_eq!(tool.description(), py["description"]);
        let mut params = py["parameters"].clone();
        params["title"] = json!(tool.name());
        params["description"] = py["description"].clone();
        assert_eq!(tool.schema(), params, "{}", tool.name());
    }
}

#[tokio::test]
async fn file_search_answers_as_python_on_the_same_tree() {
    let fx = fixture("file_search.json");
    let mw = search_middleware(&fx, "answers");
    let tools = [mw.glob_search_tool(), mw.grep_search_tool()];
    for call in fx["calls"].as_array().unwrap() {
        let (name, args, want) = (call[0].as_str().unwrap(), &call[1], &call[2]);
        let tool = tools.iter().find(|t| t.name() == name).unwrap();
        let got = tool
            .invoke(serde_json::from_value::<stategraph::Value>(args.clone()).unwrap())
            .await;
        match (want.get("ok"), got) {
            (Some(ok), Ok(v)) => {
                assert_eq!(v.as_str().unwrap(), ok.as_str().unwrap(), "{name} {args}")
            }
            (None, Err(e)) => assert!(
                e.repr().contains(want["error"].as_str().unwrap()),
                "{name} {args}: {e:?}"
            ),
            (w, g) => panic!("{name} {args}: Python {w:?}, Rust {g:?}"),
        }
    }
}

#[test]
fn paths_escaping_the_root_are_refused_with_pythons_messages() {
    let fx = fixture("file_search.json");
    let mw = search_middleware(&fx, "refuse");
    assert_eq!(mw.resolve("/../etc"), Err(FileSearchError::Traversal));
    assert_eq!(
        mw.resolve("~/x").unwrap_err().to_string(),
        "Path traversal not allowed"
    );
    let err = mw.resolve("outdir").unwrap_err();
    assert_eq!(err, FileSearchError::OutsideRoot("/outdir".into()));
    assert_eq!(err.to_string(), "Path outside root directory: /outdir");
    assert_eq!(mw.resolve("/src/web").unwrap(), mw.root().join("src/web"));
    assert_eq!(
        mw.resolve("missing/dir").unwrap(),
        mw.root().join("missing/dir")
    );
}

#[tokio::test]
async fn an_agent_stores_pythons_tool_messages() {
    let fx = fixture("file_search.json");
    let mw = search_middleware(&fx, "agent");
    let calls = vec![
        ToolCall::new(
            "glob_search",
            stategraph::map! {"pattern" => "**/*.py"},
            "c1",
        ),
        ToolCall::new(
            "grep_search",
            stategraph::map! {"pattern" => "TODO", "output_mode" => "count"},
            "c2",
        ),
    ];
    let model = FakeChatModel::new([
        Message::ai("").with_id("ai-1").with_tool_calls(calls),
        Message::ai("Found them.").with_id("ai-2"),
    ]);
    let agent = create_agent(model, vec![])
        .middleware(mw)
        .compile()
        .unwrap();
    assert_eq!(
        agent.get_graph().draw_mermaid(),
        fx["mermaid"].as_str().unwrap()
    );
    let input = MessagesState::input(vec![Message::human("Find the TODOs.").with_id("h1")]);
    let out = agent.invoke(input, &RunConfig::default()).await.unwrap();
    let state = AgentState::from_values(out.state.0.clone()).unwrap();
    let got = state.messages();
    let want = fx["agent"].as_array().unwrap();
    assert_eq!(got.len(), want.len());
    for (m, w) in got.iter().zip(want) {
        assert_eq!(m.text(), w["content"].as_str().unwrap());
        assert_eq!(m.role.type_name(), w["type"].as_str().unwrap());
        if w["type"] == "tool" {
            assert_eq!(m.name.as_deref(), w["name"].as_str());
            assert_eq!(m.tool_call_id.as_deref(), w["tool_call_id"].as_str());
            assert_eq!(m.status, w["status"].as_str().unwrap());
        } else {
            assert_eq!(m.id.as_deref(), w["id"].as_str());
        }
    }
}

// ---- ShellToolMiddleware (fixture shell.json, by gen_shell.py) ----

fn shell_middleware(fx: &J, workspace: PathBuf) -> ShellToolMiddleware {
    let c = &fx["config"];
    let strs = |v: &J| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_owned())
            .collect()
    };
    let rules = c["rules"].as_array().unwrap().iter().map(|r| {
        let strategy = match r[1].as_str().unwrap() {
            "block" => ShellRedactionStrategy::Block,
            _ => ShellRedactionStrategy::Redact,
        };
        RedactionRule::new(r[0].as_str().unwrap(), strategy, r[2].as_str().unwrap()).unwrap()
    });
    let env = c["env"].as_object().unwrap().iter();
    ShellToolMiddleware::with_options(ShellToolOptions {
        workspace_root: Some(workspace),
        startup_commands: strs(&c["startup_commands"]),
        shutdown_commands: strs(&c["shutdown_commands"]),
        execution_policy: HostExecutionPolicy {
            command_timeout: c["command_timeout"].as_f64().unwrap(),
            max_output_lines: c["max_output_lines"].as_u64().unwrap() as usize,
            max_output_bytes: Some(c["max_output_bytes"].as_u64().unwrap() as usize),
            ..HostExecutionPolicy::default()
        },
        redaction_rules: rules.collect(),
        env: env
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect(),
        ..ShellToolOptions::default()
    })
    .unwrap()
}

#[test]
fn the_shell_tool_has_pythons_name_description_and_schema() {
    let fx = fixture("shell.json");
    let tool = ShellToolMiddleware::new().shell_tool();
    let py = &fx["tools"][0];
    assert_eq!(tool.name(), py["name"]);
    assert_eq!(tool.description(), py["description"]);
    let mut params = py["parameters"].clone();
    params["title"] = json!(tool.name());
    params["description"] = py["description"].clone();
    assert_eq!(tool.schema(), params);
}

#[tokio::test]
async fn a_shell_session_stores_pythons_tool_messages() {
    let fx = fixture("shell.json");
    let mw = shell_middleware(&fx, scratch("shell"));
    let calls = fx["calls"].as_array().unwrap();
    let mut script: Vec<Message> = calls
        .iter()
        .enumerate()
        .map(|(i, args)| {
            let args: stategraph::Value = serde_json::from_value(args.clone()).unwrap();
            let call = ToolCall::new("shell", args, format!("c{i}"));
            Message::ai("")
                .with_id(format!("ai-{i}"))
                .with_tool_calls(vec![call])
        })
        .collect();
    script.push(Message::ai("Done.").with_id("ai-end"));
    let agent = create_agent(FakeChatModel::new(script), vec![])
        .middleware(mw)
        .compile()
        .unwrap();
    assert_eq!(
        agent.get_graph().draw_mermaid(),
        fx["mermaid"].as_str().unwrap()
    );
    let out = agent
        .invoke(
            MessagesState::input("Use the shell."),
            &RunConfig::default(),
        )
        .await
        .unwrap();
    let state = AgentState::from_values(out.state.0.clone()).unwrap();
    let tools: Vec<&Message> = state
        .messages()
        .iter()
        .filter(|m| m.role.type_name() == "tool")
        .collect();
    let want = fx["tool_messages"].as_array().unwrap();
    assert_eq!(tools.len(), want.len());
    for (m, w) in tools.iter().zip(want) {
        let at = w["tool_call_id"].as_str().unwrap();
        assert_eq!(m.text(), w["content"].as_str().unwrap(), "{at}");
        assert_eq!(m.tool_call_id.as_deref(), Some(at));
        assert_eq!(m.name.as_deref(), w["name"].as_str(), "{at}");
        assert_eq!(m.status, w["status"].as_str().unwrap(), "{at}");
        assert_eq!(
            serde_json::to_value(&m.artifact).unwrap(),
            w["artifact"],
            "{at}"
        );
    }
}

#[test]
fn bad_shell_configurations_are_typed_errors() {
    let empty = ShellToolOptions {
        shell_command: Some(vec![]),
        ..ShellToolOptions::default()
    };
    let err = ShellToolMiddleware::with_options(empty).unwrap_err();
    assert_eq!(err, ShellConfigError::EmptyShellCommand);
    assert_eq!(
        err.to_string(),
        "Shell command must contain at least one argument."
    );
    let err = RedactionRule::new("key", ShellRedactionStrategy::Redact, "(").unwrap_err();
    assert!(matches!(err, ShellConfigError::BadDetector { ref pii_type, .. } if pii_type == "key"));
    let policy = HostExecutionPolicy {
        command_timeout: 0.0,
        ..HostExecutionPolicy::default()
    };
    let zero = ShellToolOptions {
        execution_policy: policy,
        ..ShellToolOptions::default()
    };
    assert_eq!(
        ShellToolMiddleware::with_options(zero).unwrap_err(),
        ShellConfigError::BadTimeout("command_timeout")
    );
}

#[tokio::test]
async fn a_shell_that_cannot_start_fails_the_run_with_a_typed_error() {
    let opts = ShellToolOptions {
        shell_command: Some(vec!["/nonexistent/shell".into()]),
        workspace_root: Some(scratch("noshell")),
        ..ShellToolOptions::default()
    };
    let mw = ShellToolMiddleware::with_options(opts).unwrap();
    let agent = create_agent(FakeChatModel::new([Message::ai("hi")]), vec![])
        .middleware(mw)
        .compile()
        .unwrap();
    let err = agent
        .invoke(MessagesState::input("hi"), &RunConfig::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, stategraph::Error::Node { node, message } if node == "ShellToolMiddleware.before_agent" && message.contains("/nonexistent/shell")),
        "{err:?}"
    );
}

#[tokio::test]
async fn shell_calls_without_one_of_command_or_restart_are_refused_with_pythons_words() {
    let tool = ShellToolMiddleware::new().shell_tool();
    let err = tool.invoke(stategraph::map! {}).await.unwrap_err();
    assert!(
        err.repr()
            .contains("Shell tool requires either 'command' or 'restart'."),
        "{err:?}"
    );
    let both = stategraph::map! {"command" => "ls", "restart" => true};
    let err = tool.invoke(both).await.unwrap_err();
    assert!(
        err.repr()
            .contains("Specify only one of 'command' or 'restart'."),
        "{err:?}"
    );
}
