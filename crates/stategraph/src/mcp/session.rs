//! One server's session: opened on first use, kept for the calls after it, opened again
//! after the connection was lost.
//!
//! langchain-mcp-adapters' `get_tools()` tools open a new session for every call (for a
//! stdio server: a new process per tool call). A session kept open does the same calls
//! without that cost; a server that keeps state between calls keeps it here. A lost
//! connection fails the call under it (never retried here: a tool call need not be
//! idempotent) and the next call connects again, so a run resumed after the failure
//! reaches the server anew.

use std::collections::HashMap;
use std::future::Future;
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, JsonObject,
    Tool as McpTool,
};
use rmcp::service::{ClientInitializeError, Peer, RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::Value as Json;

use super::connection::{Connection, HttpConnection, StdioConnection, INHERITED_ENV};
use super::error::McpError;

type Running = RunningService<RoleClient, ClientConfig>;

/// A server's connection settings and its live session, if one is open.
pub(crate) struct Session {
    server: String,
    connection: Connection,
    timeout: Option<Duration>,
    live: tokio::sync::Mutex<Live>,
}

/// The open session, if any, and how many have been opened (to tell a session that failed
/// from one opened since by another call).
#[derive(Default)]
struct Live {
    running: Option<Running>,
    opened: u64,
}

impl Session {
    /// A session with `server`, not connected yet.
    pub(crate) fn new(server: String, connection: Connection, timeout: Option<Duration>) -> Self {
        Session {
            server,
            connection,
            timeout,
            live: tokio::sync::Mutex::new(Live::default()),
        }
    }

    /// The server's name.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// The connection settings.
    pub(crate) fn connection(&self) -> &Connection {
        &self.connection
    }

    /// Every tool of the server (all pages of `tools/list`).
    pub(crate) async fn list_tools(&self) -> Result<Vec<McpTool>, McpError> {
        let (peer, opened) = self.peer().await?;
        self.request(opened, peer.list_all_tools()).await
    }

    /// Calls tool `name` with `arguments`: the result's wire JSON.
    pub(crate) async fn call_tool(
        &self,
        name: &str,
        arguments: JsonObject,
    ) -> Result<Json, McpError> {
        let (peer, opened) = self.peer().await?;
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        let result = self.request(opened, peer.call_tool(params)).await?;
        serde_json::to_value(&result).map_err(|e| McpError::Protocol {
            server: self.server.clone(),
            code: -32603,
            message: format!("unreadable tool result: {e}"),
        })
    }

    /// Ends the session (a stdio server's process exits); the next call opens a new one.
    pub(crate) async fn close(&self) {
        if let Some(mut running) = self.live.lock().await.running.take() {
            // The SDK closes stdin, waits for the process, then terminates it.
            let _ = running.close().await;
        }
    }

    /// The peer of the live session and its number, connecting first if there is none
    /// or it closed.
    async fn peer(&self) -> Result<(Peer<RoleClient>, u64), McpError> {
        let mut live = self.live.lock().await;
        if let Some(running) = &live.running {
            if !running.is_closed() {
                return Ok((running.peer().clone(), live.opened));
            }
        }
        live.running = None;
        let running = self.connect().await?;
        let peer = running.peer().clone();
        live.running = Some(running);
        live.opened += 1;
        Ok((peer, live.opened))
    }

    /// Runs a request on session number `opened`, within the timeout if there is one; a
    /// lost connection also drops that session so that the next call reconnects.
    async fn request<T>(
        &self,
        opened: u64,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        let outcome = match self.timeout {
            Some(timeout) => match tokio::time::timeout(timeout, request).await {
                Ok(outcome) => outcome,
                Err(_) => return Err(self.timed_out(timeout)),
            },
            None => request.await,
        };
        let error = match outcome {
            Ok(value) => return Ok(value),
            Err(e) => self.service_error(e),
        };
        if matches!(error, McpError::ConnectionLost { .. }) {
            let mut live = self.live.lock().await;
            if live.opened == opened {
                live.running = None;
            }
        }
        Err(error)
    }

    /// Opens a session over the connection's transport.
    async fn connect(&self) -> Result<Running, McpError> {
        match &self.connection {
            Connection::Stdio(c) => {
                let transport = self.spawn(c)?;
                self.handshake(client_info().serve(transport)).await
            }
            Connection::StreamableHttp(c) => {
                crate::tls::install_crypto_provider();
                let transport = StreamableHttpClientTransport::from_config(self.http_config(c)?);
                self.handshake(client_info().serve(transport)).await
            }
        }
    }

    /// Spawns a stdio server (its stderr goes to ours, as in Python).
    fn spawn(&self, c: &StdioConnection) -> Result<TokioChildProcess, McpError> {
        let mut cmd = tokio::process::Command::new(&c.command);
        cmd.args(&c.args).env_clear();
        for key in INHERITED_ENV {
            if let Some(value) = std::env::var_os(key) {
                cmd.env(key, value);
            }
        }
        cmd.envs(&c.env);
        if let Some(dir) = &c.cwd {
            cmd.current_dir(dir);
        }
        let (transport, _stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|source| McpError::Start {
                server: self.server.clone(),
                source,
            })?;
        Ok(transport)
    }

    /// The streamable-HTTP transport's settings: `c.url` with its headers.
    fn http_config(
        &self,
        c: &HttpConnection,
    ) -> Result<StreamableHttpClientTransportConfig, McpError> {
        let invalid = |message: String| McpError::InvalidConnection {
            server: self.server.clone(),
            message,
        };
        let mut headers = HashMap::new();
        for (name, value) in &c.headers {
            let name = http::HeaderName::try_from(name.as_str())
                .map_err(|e| invalid(format!("header name {name:?}: {e}")))?;
            let value = http::HeaderValue::try_from(value.as_str())
                .map_err(|e| invalid(format!("header {name}: {e}")))?;
            headers.insert(name, value);
        }
        Ok(StreamableHttpClientTransportConfig::with_uri(c.url.as_str()).custom_headers(headers))
    }

    /// Waits for the MCP handshake, within the timeout if there is one.
    async fn handshake(
        &self,
        serve: impl Future<Output = Result<Running, ClientInitializeError>>,
    ) -> Result<Running, McpError> {
        let outcome = match self.timeout {
            Some(timeout) => tokio::time::timeout(timeout, serve)
                .await
                .map_err(|_| self.timed_out(timeout))?,
            None => serve.await,
        };
        outcome.map_err(|e| McpError::Initialize {
            server: self.server.clone(),
            message: e.to_string(),
        })
    }

    fn timed_out(&self, timeout: Duration) -> McpError {
        McpError::Timeout {
            server: self.server.clone(),
            timeout,
        }
    }

    /// A request's failure as a typed error.
    fn service_error(&self, e: ServiceError) -> McpError {
        let server = self.server.clone();
        match e {
            ServiceError::McpError(data) => McpError::Protocol {
                server,
                code: data.code.0,
                message: data.message.into_owned(),
            },
            ServiceError::Timeout { timeout } => McpError::Timeout { server, timeout },
            other => McpError::ConnectionLost {
                server,
                message: other.to_string(),
            },
        }
    }
}

/// How this client introduces itself in the handshake.
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("stategraph", env!("CARGO_PKG_VERSION")),
    )
}
