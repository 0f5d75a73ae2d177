//! How to reach one MCP server: a command to spawn (stdio) or a URL (streamable HTTP),
//! with the fields and JSON shape of langchain-mcp-adapters' connection dicts
//! (`{"transport": "stdio", "command": ..., "args": [...]}`,
//! `{"transport": "streamable_http", "url": ..., "headers": {...}}`), so a config file
//! written for `MultiServerMCPClient` reads as is.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

/// One server's connection (Python's `Connection` dict, tagged by `transport`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Connection {
    /// A server run as a child process, speaking MCP over its stdin and stdout.
    Stdio(StdioConnection),
    /// A server at a URL, over streamable HTTP (`"streamable_http"`; `"http"` and
    /// `"streamable-http"` are read as well, as the adapter reads them).
    #[serde(alias = "http", alias = "streamable-http")]
    StreamableHttp(HttpConnection),
}

/// A stdio server: the command and its arguments, environment and working directory.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct StdioConnection {
    /// The executable (looked up on `PATH`).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables. The child inherits only the variables the MCP Python
    /// SDK passes on by default (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`), then
    /// these: API keys of this process do not leak into servers.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The working directory (default: this process's).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
}

/// A streamable-HTTP server: its URL and the headers sent with every request.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct HttpConnection {
    /// The endpoint, e.g. `http://127.0.0.1:8000/mcp`.
    pub url: String,
    /// Headers sent with every request (e.g. `Authorization`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

impl Connection {
    /// A stdio server: `command` run with `args`.
    pub fn stdio<I, S>(command: impl Into<String>, args: I) -> Connection
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Connection::Stdio(StdioConnection {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            cwd: None,
        })
    }

    /// A streamable-HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Connection {
        Connection::StreamableHttp(HttpConnection {
            url: url.into(),
            headers: BTreeMap::new(),
        })
    }

    /// Adds an environment variable of a stdio server (no effect on an HTTP one);
    /// builder style.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Connection {
        if let Connection::Stdio(c) = &mut self {
            c.env.insert(key.into(), value.into());
        }
        self
    }

    /// Sets the working directory of a stdio server (no effect on an HTTP one).
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Connection {
        if let Connection::Stdio(c) = &mut self {
            c.cwd = Some(dir.into());
        }
        self
    }

    /// Adds a header sent to an HTTP server (no effect on a stdio one); builder style.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Connection {
        if let Connection::StreamableHttp(c) = &mut self {
            c.headers.insert(name.into(), value.into());
        }
        self
    }
}

/// The variables a stdio server inherits (the MCP Python SDK's
/// `DEFAULT_INHERITED_ENV_VARS` on POSIX).
pub(crate) const INHERITED_ENV: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_connection_dicts_read_as_connections() {
        let config: BTreeMap<String, Connection> = serde_json::from_str(
            r#"{
                "math": {"transport": "stdio", "command": "python", "args": ["math_server.py"]},
                "weather": {"transport": "streamable_http", "url": "http://127.0.0.1:8000/mcp"},
                "other": {"transport": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-A": "1"}}
            }"#,
        )
        .unwrap();
        assert_eq!(
            config["math"],
            Connection::stdio("python", ["math_server.py"])
        );
        assert_eq!(
            config["weather"],
            Connection::http("http://127.0.0.1:8000/mcp")
        );
        assert_eq!(
            config["other"],
            Connection::http("http://127.0.0.1:9/mcp").header("X-A", "1")
        );
        let sse = serde_json::from_str::<Connection>(r#"{"transport": "sse", "url": "x"}"#);
        assert!(sse.is_err(), "the legacy SSE transport is not supported");
    }
}
