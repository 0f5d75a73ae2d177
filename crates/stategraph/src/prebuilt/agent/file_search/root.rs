//! The root a file search is confined to: virtual paths resolved and refused as
//! Python's `_validate_and_resolve_path` and `_is_within_root` do.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::prebuilt::tool::ToolError;

/// A virtual path refused by [`super::FilesystemFileSearchMiddleware::resolve`] (Python's
/// `ValueError`s, with its messages).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileSearchError {
    /// The path has `..` or `~` in it.
    #[error("Path traversal not allowed")]
    Traversal,
    /// The path resolves (symlinks followed) outside the root; the path as given,
    /// with a leading `/`.
    #[error("Path outside root directory: {0}")]
    OutsideRoot(String),
}

/// The resolved root and the size limit of `grep_search`.
#[derive(Debug, Clone)]
pub(super) struct Root {
    /// The resolved root directory.
    pub(super) dir: PathBuf,
    /// Larger files are not searched by `grep_search`.
    pub(super) max_file_size_bytes: u64,
}

impl Root {
    /// See [`super::FilesystemFileSearchMiddleware::resolve`].
    pub(super) fn resolve(&self, path: &str) -> Result<PathBuf, FileSearchError> {
        let shown = if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("/{path}")
        };
        if shown.contains("..") || shown.contains('~') {
            return Err(FileSearchError::Traversal);
        }
        let full = resolve_lenient(&self.dir.join(shown.trim_start_matches('/')));
        if full.starts_with(&self.dir) {
            Ok(full)
        } else {
            Err(FileSearchError::OutsideRoot(shown))
        }
    }

    /// The file's virtual path (`/` + its path under the root).
    pub(super) fn virtual_path(&self, file: &Path) -> Option<String> {
        let rel = file.strip_prefix(&self.dir).ok()?;
        Some(format!("/{}", rel.to_string_lossy()))
    }

    /// Whether `candidate`, symlinks resolved, lies under the root.
    pub(super) fn within_root(&self, candidate: &Path) -> bool {
        std::fs::canonicalize(candidate).is_ok_and(|p| p.starts_with(&self.dir))
    }
}

/// A string argument (its default when absent); another type is pydantic's error.
pub(super) fn str_arg(args: &Json, name: &str, default: &str) -> Result<String, ToolError> {
    match args.get(name) {
        None => Ok(default.to_owned()),
        Some(Json::String(s)) => Ok(s.clone()),
        Some(_) => Err(ToolError::named(
            "ValidationError",
            format!("{name}: Input should be a valid string"),
        )),
    }
}

/// `path` resolved as Python's non-strict `Path.resolve()`: the longest existing
/// prefix canonicalized (symlinks followed), the rest appended.
fn resolve_lenient(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut head = path.to_path_buf();
    loop {
        if let Ok(real) = std::fs::canonicalize(&head) {
            return rest.iter().rev().fold(real, |acc: PathBuf, c| acc.join(c));
        }
        match (head.file_name().map(|c| c.to_os_string()), head.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                head = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}
