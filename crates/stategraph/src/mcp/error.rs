//! The typed failures of MCP servers: one that does not start, a handshake that fails, a
//! connection lost, a request the server refuses or never answers.

use std::time::Duration;

/// Why an MCP server could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// No server of that name in the client's connections.
    #[error("no MCP server named {0:?}")]
    UnknownServer(String),
    /// A connection setting that cannot be used (a header name or value HTTP refuses).
    #[error("MCP server {server:?}: invalid connection: {message}")]
    InvalidConnection {
        /// The server's name.
        server: String,
        /// What is wrong.
        message: String,
    },
    /// The server's process could not be spawned (no such command, not executable).
    #[error("MCP server {server:?} failed to start: {source}")]
    Start {
        /// The server's name.
        server: String,
        /// The spawn error.
        #[source]
        source: std::io::Error,
    },
    /// The server started (or the URL was reached) but the MCP handshake failed: the
    /// process exited, the URL is not an MCP endpoint, the connection was refused.
    #[error("MCP server {server:?} did not complete the handshake: {message}")]
    Initialize {
        /// The server's name.
        server: String,
        /// The SDK's account of the failure.
        message: String,
    },
    /// The connection closed under a request (the process died, the HTTP server went
    /// away). The next call connects again.
    #[error("connection to MCP server {server:?} lost: {message}")]
    ConnectionLost {
        /// The server's name.
        server: String,
        /// The SDK's account of the failure.
        message: String,
    },
    /// The server answered a request with a JSON-RPC error (an unknown tool, invalid
    /// parameters). A tool that fails *inside* answers with an `isError` result instead,
    /// which becomes an error tool message, not this.
    #[error("MCP server {server:?} refused the request: {message} (code {code})")]
    Protocol {
        /// The server's name.
        server: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The error message.
        message: String,
    },
    /// The server did not answer within the client's request timeout.
    #[error("MCP server {server:?} did not answer within {timeout:?}")]
    Timeout {
        /// The server's name.
        server: String,
        /// The timeout that passed.
        timeout: Duration,
    },
}

impl McpError {
    /// The error's type name in a tool message or node error (`McpConnectionLost`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            McpError::UnknownServer(_) => "McpUnknownServer",
            McpError::InvalidConnection { .. } => "McpInvalidConnection",
            McpError::Start { .. } => "McpStartError",
            McpError::Initialize { .. } => "McpInitializeError",
            McpError::ConnectionLost { .. } => "McpConnectionLost",
            McpError::Protocol { .. } => "McpError",
            McpError::Timeout { .. } => "McpTimeout",
        }
    }

    /// The name of the server the error is about.
    pub fn server(&self) -> &str {
        match self {
            McpError::UnknownServer(server)
            | McpError::InvalidConnection { server, .. }
            | McpError::Start { server, .. }
            | McpError::Initialize { server, .. }
            | McpError::ConnectionLost { server, .. }
            | McpError::Protocol { server, .. }
            | McpError::Timeout { server, .. } => server,
        }
    }
}
