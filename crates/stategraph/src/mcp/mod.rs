//! MCP tools: the tools of Model Context Protocol servers as [`Tool`]s an agent calls, the
//! counterpart of langchain-mcp-adapters' `MultiServerMCPClient`.
//!
//! ```no_run
//! use stategraph::mcp::{Connection, MultiServerMcpClient};
//! # async fn run() -> Result<(), stategraph::mcp::McpError> {
//! let client = MultiServerMcpClient::new([
//!     ("math", Connection::stdio("python", ["math_server.py"])),
//!     ("weather", Connection::http("http://127.0.0.1:8000/mcp")),
//! ]);
//! let tools = client.get_tools().await?; // every server's tools, with their JSON schemas
//! // create_react_agent(model, tools) ...
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! What carries over from Python, and what differs:
//! - Connections: `stdio` (a child process; it inherits only `HOME`, `LOGNAME`, `PATH`,
//!   `SHELL`, `TERM`, `USER` plus its `env`, as with the MCP Python SDK) and
//!   `streamable_http` (`"http"` too) with `headers`; [`Connection`] reads the adapter's
//!   connection dicts from JSON. The legacy SSE and WebSocket transports are not offered.
//! - Tools keep the server's names (`{server}_{name}` with
//!   [`MultiServerMcpClient::with_tool_name_prefix`]), descriptions and input schemas.
//! - A result becomes the `ToolMessage` the adapter writes: the content a list of content
//!   blocks (`{"type": "text", "text", "id"}`, images `{"type": "image", "base64",
//!   "mime_type"}`, resource links `{"type": "file" | "image", "url", "mime_type"}`,
//!   embedded resources as text or base64 blocks), the structured content as the artifact
//!   `{"structured_content": ...}`, and an `isError` result a message with `status:
//!   "error"` that the model reads (the adapter's default `handle_tool_errors=True`).
//!   Audio content fails the call (`NotImplementedError`), as it does in the adapter.
//! - A server that cannot start or be reached, a lost connection, a JSON-RPC error and a
//!   timeout are [`McpError`]s. Inside an agent they fail the tool call with that error's
//!   [`kind`](McpError::kind) (the node fails, the run can be resumed), as transport
//!   errors propagate in Python.
//! - Sessions are kept open (see `session.rs`): Python's `get_tools()` tools open a new
//!   session (a new process, for stdio) per call.
//!
//! Built on `rmcp`, the official Rust SDK of the Model Context Protocol (maintained under
//! the `modelcontextprotocol` organisation beside the Python and TypeScript SDKs), client
//! side only. It is the heaviest dependency of this crate (about 100 crates: hyper,
//! reqwest, rustls), hence a feature of its own, off by default. Its reqwest is built
//! without a TLS provider and rustls is given `ring`: `aws-lc-rs`, reqwest's default,
//! needs a C toolchain build (CMake-sized) for no gain here.

mod connection;
mod content;
mod error;
mod session;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;

pub use connection::{Connection, HttpConnection, StdioConnection};
pub use error::McpError;

use crate::prebuilt::Tool;
use session::Session;

/// Several MCP servers by name, their tools as [`Tool`]s (Python's `MultiServerMCPClient`).
///
/// Each server's session opens on first use ([`get_tools`](Self::get_tools)) and stays
/// open for the tools' calls until [`close`](Self::close) or the client's last tool is
/// dropped; a lost connection is opened again by the next call.
pub struct MultiServerMcpClient {
    sessions: IndexMap<String, Arc<Session>>,
    prefix: bool,
    timeout: Option<Duration>,
}

impl std::fmt::Debug for MultiServerMcpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let connections: IndexMap<&str, &Connection> = self
            .sessions
            .iter()
            .map(|(name, s)| (name.as_str(), s.connection()))
            .collect();
        f.debug_struct("MultiServerMcpClient")
            .field("connections", &connections)
            .field("tool_name_prefix", &self.prefix)
            .field("request_timeout", &self.timeout)
            .finish()
    }
}

impl MultiServerMcpClient {
    /// A client of the servers named in `connections` (nothing connects yet).
    pub fn new<I, K>(connections: I) -> MultiServerMcpClient
    where
        I: IntoIterator<Item = (K, Connection)>,
        K: Into<String>,
    {
        let sessions = connections
            .into_iter()
            .map(|(name, c)| {
                let name = name.into();
                (name.clone(), Arc::new(Session::new(name, c, None)))
            })
            .collect();
        MultiServerMcpClient {
            sessions,
            prefix: false,
            timeout: None,
        }
    }

    /// Names each tool `{server}_{tool}` (the adapter's `tool_name_prefix=True`), so that
    /// two servers' tools of the same name stay apart; builder style.
    #[must_use]
    pub fn with_tool_name_prefix(mut self, prefix: bool) -> MultiServerMcpClient {
        self.prefix = prefix;
        self
    }

    /// Fails a handshake or request that takes longer than `timeout` with
    /// [`McpError::Timeout`] (none by default, as in Python); builder style, before the
    /// first connection.
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Duration) -> MultiServerMcpClient {
        self.timeout = Some(timeout);
        self.sessions = std::mem::take(&mut self.sessions)
            .into_iter()
            .map(|(name, s)| {
                let session = Session::new(name.clone(), s.connection().clone(), Some(timeout));
                (name, Arc::new(session))
            })
            .collect();
        self
    }

    /// The servers' names, in the order given.
    pub fn servers(&self) -> impl Iterator<Item = &str> {
        self.sessions.keys().map(String::as_str)
    }

    /// The tools of every server, server by server in the order given (connecting to all
    /// at once); the first failure is returned.
    pub async fn get_tools(&self) -> Result<Vec<Tool>, McpError> {
        let lists = self.sessions.values().map(|s| self.tools_of(s));
        let mut tools = Vec::new();
        for list in futures::future::join_all(lists).await {
            tools.extend(list?);
        }
        Ok(tools)
    }

    /// The tools of server `server` (Python's `get_tools(server_name=...)`).
    pub async fn get_server_tools(&self, server: &str) -> Result<Vec<Tool>, McpError> {
        let session = self
            .sessions
            .get(server)
            .ok_or_else(|| McpError::UnknownServer(server.to_owned()))?;
        self.tools_of(session).await
    }

    /// Closes every open session (stdio servers exit). Tools obtained before connect
    /// again when called.
    pub async fn close(&self) {
        futures::future::join_all(self.sessions.values().map(|s| s.close())).await;
    }

    async fn tools_of(&self, session: &Arc<Session>) -> Result<Vec<Tool>, McpError> {
        let listed = session.list_tools().await?;
        Ok(listed
            .into_iter()
            .map(|t| tools::to_tool(session, t, self.prefix))
            .collect())
    }
}
