//! `glob_search`: the files under a directory whose path matches a glob (Python's
//! `pathlib.Path.glob` of 3.11: `*` within one path part, hidden files included, `**`
//! any number of directories, no braces), newest first.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use globset::{GlobBuilder, GlobMatcher};
use walkdir::WalkDir;

use super::root::Root;
use crate::prebuilt::tool::ToolError;

const NO_FILES: &str = "No files found";

/// Python's `glob_search(pattern, path)` answer (an empty pattern is pathlib's
/// `ValueError`).
pub(super) fn glob_search(me: &Root, pattern: &str, path: &str) -> Result<String, ToolError> {
    let Ok(base) = me.resolve(path) else {
        return Ok(NO_FILES.into());
    };
    if !base.is_dir() {
        return Ok(NO_FILES.into());
    }
    if pattern.starts_with('/') || pattern.split('/').any(|part| part == "..") {
        return Ok(NO_FILES.into());
    }
    let parts: Vec<&str> = pattern
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() {
        return Err(ToolError::named(
            "ValueError",
            format!("Unacceptable pattern: '{pattern}'"),
        ));
    }
    // pathlib 3.11: a pattern ending in `**` selects directories only.
    if parts.last() == Some(&"**") {
        return Ok(NO_FILES.into());
    }
    let Some(matcher) = matcher(&parts) else {
        return Ok(NO_FILES.into());
    };
    let mut found: Vec<(String, u128)> = Vec::new();
    for entry in WalkDir::new(&base).min_depth(1).sort_by_file_name() {
        let Ok(entry) = entry else { continue };
        let file = entry.path();
        let Ok(rel) = file.strip_prefix(&base) else {
            continue;
        };
        if !matcher.is_match(rel) || !file.is_file() || !me.within_root(file) {
            continue;
        }
        if let Some(shown) = me.virtual_path(file) {
            found.push((shown, modified_micros(file)));
        }
    }
    if found.is_empty() {
        return Ok(NO_FILES.into());
    }
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let paths: Vec<String> = found.into_iter().map(|(p, _)| p).collect();
    Ok(paths.join("\n"))
}

/// The glob of the pattern's parts: braces are literal (pathlib has none), `\` is not
/// an escape, a `**` inside a part is a `*`. `None` for a pattern globset refuses.
fn matcher(parts: &[&str]) -> Option<GlobMatcher> {
    let parts: Vec<String> = parts
        .iter()
        .map(|p| {
            let p = p.replace('{', "[{]").replace('}', "[}]");
            if p == "**" {
                p
            } else {
                collapse_stars(&p)
            }
        })
        .collect();
    let glob = GlobBuilder::new(&parts.join("/"))
        .literal_separator(true)
        .backslash_escape(false)
        .build()
        .ok()?;
    Some(glob.compile_matcher())
}

/// A run of `*` in a part is one `*` (`a**b` is `a*b` to pathlib).
fn collapse_stars(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    for c in part.chars() {
        if !(c == '*' && out.ends_with('*')) {
            out.push(c);
        }
    }
    out
}

/// The file's modification time in microseconds (Python compares ISO times with
/// microseconds).
fn modified_micros(file: &Path) -> u128 {
    std::fs::metadata(file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t: SystemTime| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_micros())
}
