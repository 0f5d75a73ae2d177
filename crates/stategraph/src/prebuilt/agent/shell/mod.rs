//! langchain's `ShellToolMiddleware`: one persistent shell session per agent run,
//! reached through the `shell` tool, under Python's `HostExecutionPolicy`
//! (timeouts, output limits, a process group), with startup and shutdown commands and
//! redaction rules applied to the output.
//!
//! Python's `DockerExecutionPolicy` and `CodexSandboxExecutionPolicy` are not offered:
//! they need a Docker daemon or the Codex CLI, which this project's machines and CI do
//! not have, so they could not be tested. Nor are `HostExecutionPolicy`'s
//! `cpu_time_seconds` / `memory_bytes` (rlimits set before `exec` need `unsafe`, which
//! the crate forbids).

mod answer;
mod policy;
mod session;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value as Json};
use tokio::sync::Mutex;

pub use policy::{HostExecutionPolicy, RedactionRule, RedactionStrategy, ShellConfigError};
use session::Session;

use super::middleware::{Hook, Middleware, ToolCallRequest, ToolHandler};
use super::state::{AgentState, AgentUpdate};
use crate::messages::Message;
use crate::prebuilt::tool::{Tool, ToolError};
use crate::pregel::context::NodeContext;
use crate::pregel::node_error::NodeError;

const DEFAULT_DESCRIPTION: &str = "Execute a shell command inside a persistent session. Before running a command, confirm the working directory is correct (e.g., inspect with `ls` or `pwd`) and ensure any parent directories exist. Prefer absolute paths and quote paths containing spaces, such as `cd \"/path/with spaces\"`. Chain multiple commands with `&&` or `;` instead of embedding newlines. Avoid unnecessary `cd` usage unless explicitly required so the session remains stable. Outputs may be truncated when they become very large, and long running commands will be terminated once their configured timeout elapses.";

/// langchain's `ShellToolMiddleware`: adds the `shell` tool (Python's name,
/// description and schema: `command` or `restart`); `before_agent` starts the session
/// and runs the startup commands, `after_agent` runs the shutdown commands and stops
/// it. Each call's tool message is Python's: the output (stderr lines as
/// `[stderr] ..`, `<no output>`, the truncation notes, `Exit code: N`), its status and
/// its artifact (`exit_code`, `timed_out`, `total_lines`, ..., `redaction_matches`).
///
/// The session lives in the middleware (Python keeps it in an untracked state
/// channel): one run at a time per middleware value.
#[derive(Clone)]
pub struct ShellToolMiddleware {
    config: Arc<Config>,
    session: Arc<Mutex<Option<Live>>>,
}

struct Config {
    workspace_root: Option<PathBuf>,
    startup: Vec<String>,
    shutdown: Vec<String>,
    policy: HostExecutionPolicy,
    rules: Vec<RedactionRule>,
    tool_name: String,
    description: String,
    shell_command: Vec<String>,
    env: Vec<(String, String)>,
}

/// A started session and the temporary workspace made for it, if any.
struct Live {
    session: Session,
    tempdir: Option<PathBuf>,
}

impl std::fmt::Debug for ShellToolMiddleware {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShellToolMiddleware")
            .field("tool_name", &self.config.tool_name)
            .finish_non_exhaustive()
    }
}

/// The options of [`ShellToolMiddleware`] (Python's keyword arguments).
#[derive(Debug, Clone, Default)]
pub struct ShellToolOptions {
    /// The session's directory (created if missing); `None`: a temporary directory
    /// `langchain-shell-*`, removed when the agent ends.
    pub workspace_root: Option<PathBuf>,
    /// Commands run after the session starts (and after a requested restart).
    pub startup_commands: Vec<String>,
    /// Commands run before the session stops.
    pub shutdown_commands: Vec<String>,
    /// The limits (`HostExecutionPolicy()` by default).
    pub execution_policy: HostExecutionPolicy,
    /// Applied to each command's output, in order.
    pub redaction_rules: Vec<RedactionRule>,
    /// The tool's description (Python's default when `None`).
    pub tool_description: Option<String>,
    /// The tool's name (`"shell"` when `None`).
    pub tool_name: Option<String>,
    /// The shell and its arguments (`["/bin/bash"]` when `None`).
    pub shell_command: Option<Vec<String>>,
    /// The session's whole environment (Python passes exactly this, empty when
    /// `None`).
    pub env: Vec<(String, String)>,
}

impl ShellToolMiddleware {
    /// A middleware with Python's defaults (`ShellToolMiddleware()`).
    pub fn new() -> ShellToolMiddleware {
        ShellToolMiddleware::with_options(ShellToolOptions::default())
            .unwrap_or_else(|_| unreachable!("the defaults are valid"))
    }

    /// A middleware with `options`; an empty shell command or a non-positive timeout
    /// is a [`ShellConfigError`].
    pub fn with_options(
        options: ShellToolOptions,
    ) -> Result<ShellToolMiddleware, ShellConfigError> {
        options.execution_policy.check()?;
        let shell_command = options
            .shell_command
            .unwrap_or_else(|| vec!["/bin/bash".into()]);
        if shell_command.is_empty() {
            return Err(ShellConfigError::EmptyShellCommand);
        }
        let config = Config {
            workspace_root: options.workspace_root,
            startup: options.startup_commands,
            shutdown: options.shutdown_commands,
            policy: options.execution_policy,
            rules: options.redaction_rules,
            tool_name: options.tool_name.unwrap_or_else(|| "shell".into()),
            description: options
                .tool_description
                .unwrap_or_else(|| DEFAULT_DESCRIPTION.into()),
            shell_command,
            env: options.env,
        };
        Ok(ShellToolMiddleware {
            config: Arc::new(config),
            session: Arc::new(Mutex::new(None)),
        })
    }

    /// The shell tool (Python's name, description and schema). Called directly it
    /// answers the output text; in an agent the middleware stores Python's whole tool
    /// message (status and artifact).
    pub fn shell_tool(&self) -> Tool {
        let me = self.clone();
        let tool = Tool::new(
            self.config.tool_name.clone(),
            self.config.description.clone(),
            move |args: Json| {
                let me = me.clone();
                async move { me.run(&args).await.map(|(content, _, _)| content) }
            },
        );
        let schema = json!({
            "title": self.config.tool_name,
            "description": self.config.description,
            "properties": {
                "command": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
                "restart": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": null},
            },
            "type": "object",
        });
        tool.with_schema(schema)
    }

    /// Runs one call: the content, whether it failed, and the artifact.
    async fn run(&self, args: &Json) -> Result<(String, bool, Json), ToolError> {
        let command = match args.get("command") {
            None | Some(Json::Null) => None,
            Some(Json::String(s)) => Some(s.clone()),
            Some(_) => return Err(invalid("command: Input should be a valid string")),
        };
        let restart = match args.get("restart") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(_) => return Err(invalid("restart: Input should be a valid boolean")),
        };
        match (&command, restart) {
            (None, false) => {
                return Err(invalid(
                    "Shell tool requires either 'command' or 'restart'.",
                ))
            }
            (Some(_), true) => return Err(invalid("Specify only one of 'command' or 'restart'.")),
            _ => {}
        }
        let mut guard = self.session.lock().await;
        if guard.is_none() {
            *guard = Some(
                self.create()
                    .await
                    .map_err(|e| ToolError::named("RuntimeError", e))?,
            );
        }
        let live = guard.as_mut().unwrap_or_else(|| unreachable!("set above"));
        if restart {
            let restarted = async {
                live.session.restart().await.map_err(|e| e.to_string())?;
                self.startup(&mut live.session).await
            };
            return match restarted.await {
                Ok(()) => Ok(("Shell session restarted.".into(), false, json!({}))),
                Err(_) => Err(ToolError::named(
                    "ToolException",
                    "Failed to restart shell session.",
                )),
            };
        }
        let command = command.unwrap_or_default();
        if command.is_empty() {
            return Err(ToolError::named(
                "ToolException",
                "Shell tool expects a 'command' string when restart is not requested.",
            ));
        }
        let policy = &self.config.policy;
        let result = live
            .session
            .execute(&command, policy.command_timeout)
            .await
            .map_err(|e| ToolError::named("RuntimeError", e))?;
        Ok(answer::format(policy, &self.config.rules, result))
    }

    /// Starts a session in its workspace and runs the startup commands.
    async fn create(&self) -> Result<Live, String> {
        let (workspace, tempdir) = match &self.config.workspace_root {
            Some(dir) => (dir.clone(), None),
            None => {
                let dir = std::env::temp_dir()
                    .join(format!("langchain-shell-{}", uuid::Uuid::new_v4().simple()));
                (dir.clone(), Some(dir))
            }
        };
        std::fs::create_dir_all(&workspace).map_err(|e| format!("{}: {e}", workspace.display()))?;
        let c = &self.config;
        let mut session = Session::new(
            &workspace,
            c.shell_command.clone(),
            c.env.clone(),
            c.policy.clone(),
        );
        let started = match session.start() {
            Ok(()) => self.startup(&mut session).await,
            Err(e) => Err(format!("{}: {e}", c.shell_command[0])),
        };
        if let Err(e) = started {
            session.stop().await;
            if let Some(dir) = &tempdir {
                let _ = std::fs::remove_dir_all(dir);
            }
            return Err(e);
        }
        Ok(Live { session, tempdir })
    }

    /// Runs the startup commands; the first that fails or times out is Python's error.
    async fn startup(&self, session: &mut Session) -> Result<(), String> {
        for command in &self.config.startup {
            let r = session
                .execute(command, self.config.policy.startup_timeout)
                .await?;
            if r.timed_out || r.exit_code.is_some_and(|c| c != 0) {
                let code = r.exit_code.map_or("None".to_owned(), |c| c.to_string());
                return Err(format!(
                    "Startup command '{command}' failed with exit code {code}"
                ));
            }
        }
        Ok(())
    }
}

impl Default for ShellToolMiddleware {
    fn default() -> Self {
        ShellToolMiddleware::new()
    }
}

fn invalid(message: &str) -> ToolError {
    ToolError::named("ValidationError", message)
}

#[async_trait]
impl Middleware for ShellToolMiddleware {
    fn name(&self) -> String {
        "ShellToolMiddleware".into()
    }

    fn hooks(&self) -> Vec<Hook> {
        vec![Hook::BeforeAgent, Hook::AfterAgent, Hook::WrapToolCall]
    }

    fn tools(&self) -> Vec<Tool> {
        vec![self.shell_tool()]
    }

    async fn before_agent(
        &self,
        _: &AgentState,
        _: &NodeContext,
    ) -> Result<AgentUpdate, NodeError> {
        let mut guard = self.session.lock().await;
        if guard.is_none() {
            let live = self
                .create()
                .await
                .map_err(|e| NodeError::named("RuntimeError", e))?;
            *guard = Some(live);
        }
        Ok(AgentUpdate::none())
    }

    async fn after_agent(&self, _: &AgentState, _: &NodeContext) -> Result<AgentUpdate, NodeError> {
        let Some(mut live) = self.session.lock().await.take() else {
            return Ok(AgentUpdate::none());
        };
        for command in &self.config.shutdown {
            let timeout = self.config.policy.command_timeout;
            if let Err(e) = live.session.execute(command, timeout).await {
                tracing::warn!("Failed to run shutdown command '{command}': {e}");
            }
        }
        live.session.stop().await;
        if let Some(dir) = &live.tempdir {
            let _ = std::fs::remove_dir_all(dir);
        }
        Ok(AgentUpdate::none())
    }

    /// The shell tool's calls get Python's whole tool message (status, artifact).
    async fn wrap_tool_call(
        &self,
        request: ToolCallRequest,
        handler: ToolHandler,
    ) -> Result<Message, NodeError> {
        if request.call.name != self.config.tool_name {
            return handler.call(request).await;
        }
        let args: Json = serde_json::to_value(&request.call.args).unwrap_or(Json::Null);
        let (content, error, artifact) = match self.run(&args).await {
            Ok(reply) => reply,
            Err(_) => return handler.call(request).await,
        };
        let mut message = Message::tool(content, request.call.id.clone().unwrap_or_default())
            .with_name(self.config.tool_name.clone());
        message.status = if error { "error" } else { "success" }.into();
        message.artifact = serde_json::from_value(artifact).unwrap_or_default();
        Ok(message)
    }
}
