//! langchain's `FilesystemFileSearchMiddleware`: the `glob_search` and `grep_search`
//! tools over the files under one root directory, with paths shown as virtual paths
//! (`/src/app.py`, `/` being the root).
//!
//! Confinement is Python's: a `path` with `..` or `~`, or one that resolves (symlinks
//! followed) outside the root, is refused ([`FileSearchError`], with Python's messages;
//! the tools then answer `No files found` / `No matches found`, as Python's do), a glob
//! pattern that is absolute or has a `..` part finds nothing, and a file or directory
//! reached through a symlink that leaves the root is never listed or read.
//!
//! Search is Python's fallback search (its `use_ripgrep=False` path; the pinned Python
//! falls back to it too where `rg` is not installed): patterns are matched with
//! `globset`, directories walked with `walkdir`, lines searched with `regex`. What
//! differs: the `regex` crate has no look-around or back-references (Python's `re`
//! has), so such a pattern answers `Invalid regex pattern: ...` with the crate's words;
//! the common syntax errors (unclosed group or class, nothing to repeat, unbalanced
//! parenthesis) get Python's words and positions. Files of the same modification time
//! are listed by path (Python: in directory order). A `*` part of a glob does not go
//! through a symlinked directory inside the root (Python's does; `**` does not in
//! either).

mod glob;
mod grep;
mod root;
mod texts;

use std::path::{Path, PathBuf};

pub use root::FileSearchError;
use root::{str_arg, Root};

use async_trait::async_trait;
use serde_json::{json, Value as Json};

use super::middleware::{Hook, Middleware};
use crate::prebuilt::tool::{Tool, ToolError};

/// langchain's `FilesystemFileSearchMiddleware(root_path=..)`: adds the tools
/// `glob_search` (files by name pattern, newest first) and `grep_search` (file contents
/// by regular expression) over the files under `root_path`. It has no hooks.
///
/// ```
/// use stategraph::prebuilt::agent::{create_agent, FilesystemFileSearchMiddleware};
/// use stategraph::prebuilt::FakeChatModel;
/// use stategraph::Message;
///
/// let search = FilesystemFileSearchMiddleware::new(std::env::temp_dir());
/// assert_eq!(search.glob_search_tool().name(), "glob_search");
/// let agent = create_agent(FakeChatModel::new([Message::ai("hi")]), vec![])
///     .middleware(search)
///     .compile()
///     .unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct FilesystemFileSearchMiddleware {
    root: Root,
}

impl FilesystemFileSearchMiddleware {
    /// Searches under `root_path` (resolved as Python's `Path(root_path).resolve()`:
    /// symlinks followed where it exists; a root that does not exist finds nothing).
    /// Files over 10 MB are not searched by `grep_search`.
    pub fn new(root_path: impl AsRef<Path>) -> FilesystemFileSearchMiddleware {
        let root = root_path.as_ref();
        let root = std::fs::canonicalize(root)
            .or_else(|_| std::path::absolute(root))
            .unwrap_or_else(|_| root.to_path_buf());
        FilesystemFileSearchMiddleware {
            root: Root {
                dir: root,
                max_file_size_bytes: 10 * 1024 * 1024,
            },
        }
    }

    /// Python's `max_file_size_mb`: `grep_search` skips larger files.
    pub fn max_file_size_mb(mut self, megabytes: u64) -> Self {
        self.root.max_file_size_bytes = megabytes.saturating_mul(1024 * 1024);
        self
    }

    /// The resolved root directory.
    pub fn root(&self) -> &Path {
        &self.root.dir
    }

    /// The directory a virtual path names (Python's `_validate_and_resolve_path`): a
    /// missing leading `/` is added; `..` or `~` anywhere is refused; the path is
    /// resolved (symlinks followed, as far as it exists) and must stay under the root.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, FileSearchError> {
        self.root.resolve(path)
    }

    /// The `glob_search` tool (Python's name, description and argument schema).
    pub fn glob_search_tool(&self) -> Tool {
        let root = self.root.clone();
        let tool = Tool::new("glob_search", texts::GLOB_DESCRIPTION, move |args: Json| {
            let root = root.clone();
            async move {
                let pattern = str_arg(&args, "pattern", "")?;
                let path = str_arg(&args, "path", "/")?;
                tokio::task::spawn_blocking(move || glob::glob_search(&root, &pattern, &path))
                    .await
                    .map_err(ToolError::new)?
            }
        })
        .arg("pattern", "string");
        let schema = json!({
            "properties": {
                "pattern": {"type": "string"},
                "path": {"default": "/", "type": "string"},
            },
            "required": ["pattern"],
            "type": "object",
        });
        titled(tool, schema)
    }

    /// The `grep_search` tool (Python's name, description and argument schema).
    pub fn grep_search_tool(&self) -> Tool {
        let root = self.root.clone();
        let tool = Tool::new("grep_search", texts::GREP_DESCRIPTION, move |args: Json| {
            let root = root.clone();
            async move {
                let query = grep::GrepQuery::from_args(&args)?;
                tokio::task::spawn_blocking(move || Ok(grep::grep_search(&root, &query)))
                    .await
                    .map_err(ToolError::new)?
            }
        })
        .arg("pattern", "string");
        let schema = json!({
            "properties": {
                "pattern": {"type": "string"},
                "path": {"default": "/", "type": "string"},
                "include": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
                "output_mode": {
                    "default": "files_with_matches",
                    "enum": ["files_with_matches", "content", "count"],
                    "type": "string",
                },
            },
            "required": ["pattern"],
            "type": "object",
        });
        titled(tool, schema)
    }
}

#[async_trait]
impl Middleware for FilesystemFileSearchMiddleware {
    fn name(&self) -> String {
        "FilesystemFileSearchMiddleware".into()
    }

    fn hooks(&self) -> Vec<Hook> {
        Vec::new()
    }

    fn tools(&self) -> Vec<Tool> {
        vec![self.glob_search_tool(), self.grep_search_tool()]
    }
}

/// The schema with the tool's name as title and its description, as
/// [`Tool::schema`] has them.
fn titled(tool: Tool, mut schema: Json) -> Tool {
    schema["title"] = json!(tool.name());
    schema["description"] = json!(tool.description());
    tool.with_schema(schema)
}
