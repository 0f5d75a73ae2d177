//! `grep_search`: the lines of the files under a directory that a regular expression
//! matches, as Python's fallback search finds them (files read as UTF-8 with universal
//! newlines, split as `str.splitlines`, undecodable files skipped).

use std::collections::BTreeMap;
use std::path::Path;

use globset::GlobBuilder;
use regex::Regex;
use regex_syntax::ast::ErrorKind;
use serde_json::Value as Json;
use walkdir::WalkDir;

use super::root::{str_arg, Root};
use crate::prebuilt::tool::ToolError;

/// `grep_search`'s arguments.
pub(super) struct GrepQuery {
    pattern: String,
    path: String,
    include: Option<String>,
    mode: Mode,
}

/// `output_mode`.
#[derive(Clone, Copy)]
enum Mode {
    Files,
    Content,
    Count,
}

impl GrepQuery {
    /// Reads the tool's arguments (a bad `output_mode` is pydantic's error).
    pub(super) fn from_args(args: &Json) -> Result<GrepQuery, ToolError> {
        let include = match args.get("include") {
            None | Some(Json::Null) => None,
            Some(_) => Some(str_arg(args, "include", "")?),
        };
        let mode = match str_arg(args, "output_mode", "files_with_matches")?.as_str() {
            "files_with_matches" => Mode::Files,
            "content" => Mode::Content,
            "count" => Mode::Count,
            _ => {
                return Err(ToolError::named(
                    "ValidationError",
                    "output_mode: Input should be 'files_with_matches', 'content' or 'count'",
                ))
            }
        };
        Ok(GrepQuery {
            pattern: str_arg(args, "pattern", "")?,
            path: str_arg(args, "path", "/")?,
            include,
            mode,
        })
    }
}

type Found = BTreeMap<String, Vec<(usize, String)>>;

/// Python's `grep_search` answer.
pub(super) fn grep_search(me: &Root, q: &GrepQuery) -> String {
    let regex = match Regex::new(&q.pattern) {
        Ok(r) => r,
        Err(e) => return format!("Invalid regex pattern: {}", regex_error(&q.pattern, &e)),
    };
    let include = match q.include.as_deref().filter(|i| !i.is_empty()) {
        Some(i) => match valid_include(i) {
            Some(globs) => Some(globs),
            None => return "Invalid include pattern".into(),
        },
        None => None,
    };
    let found = search(me, &regex, &q.path, include.as_deref());
    if found.is_empty() {
        return "No matches found".into();
    }
    let lines: Vec<String> = match q.mode {
        Mode::Files => found.into_keys().collect(),
        Mode::Content => found
            .iter()
            .flat_map(|(p, ls)| ls.iter().map(move |(n, l)| format!("{p}:{n}:{l}")))
            .collect(),
        Mode::Count => found
            .iter()
            .map(|(p, ls)| format!("{p}:{}", ls.len()))
            .collect(),
    };
    lines.join("\n")
}

/// The matching lines of each file under the virtual `path`, by virtual path.
fn search(me: &Root, regex: &Regex, path: &str, include: Option<&[globset::GlobMatcher]>) -> Found {
    let mut found = Found::new();
    let Ok(base) = me.resolve(path) else {
        return found;
    };
    // Python walks with `os.walk`, which yields nothing for a file.
    if !base.is_dir() {
        return found;
    }
    for entry in WalkDir::new(&base).min_depth(1) {
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_dir() {
            continue;
        }
        let file = entry.path();
        if !me.within_root(file) || !file.is_file() {
            continue;
        }
        if let Some(globs) = include {
            let name = entry.file_name().to_string_lossy();
            if !globs.iter().any(|g| g.is_match(name.as_ref())) {
                continue;
            }
        }
        if std::fs::metadata(file).map_or(true, |m| m.len() > me.max_file_size_bytes) {
            continue;
        }
        let Some(text) = read_text(file) else {
            continue;
        };
        let lines: Vec<(usize, String)> = split_lines(&text)
            .into_iter()
            .enumerate()
            .filter(|(_, l)| regex.is_match(l))
            .map(|(i, l)| (i + 1, l.to_owned()))
            .collect();
        if let (false, Some(shown)) = (lines.is_empty(), me.virtual_path(file)) {
            found.insert(shown, lines);
        }
    }
    found
}

/// The file as UTF-8 text with `\r\n` and `\r` read as `\n` (Python's `read_text`);
/// `None` for a file that is not UTF-8 or cannot be read.
fn read_text(file: &Path) -> Option<String> {
    let bytes = std::fs::read(file).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    Some(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// Python's `str.splitlines()`.
fn split_lines(text: &str) -> Vec<&str> {
    let breaks = [
        '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
        '\u{2029}',
    ];
    let mut out: Vec<&str> = text.split(|c| breaks.contains(&c)).collect();
    if text.is_empty() || text.ends_with(|c| breaks.contains(&c)) {
        out.pop();
    }
    out
}

/// Python's include check and brace expansion (`*.{ts,tsx}`): the globs a file's name
/// is matched against (`fnmatch`: no escapes), or `None` for a pattern Python refuses.
fn valid_include(pattern: &str) -> Option<Vec<globset::GlobMatcher>> {
    if pattern.contains(['\0', '\n', '\r']) {
        return None;
    }
    if pattern.contains('}') && !pattern.contains('{') {
        return None;
    }
    let mut expanded = Vec::new();
    expand(pattern, &mut expanded)?;
    let globs = expanded.iter().map(|p| {
        GlobBuilder::new(p)
            .backslash_escape(false)
            .build()
            .map(|g| g.compile_matcher())
            .ok()
    });
    globs.collect()
}

/// Expands the first `{..}` of `current` (recursively), as Python's
/// `_expand_include_patterns`; `None` for an unclosed or empty brace.
fn expand(current: &str, out: &mut Vec<String>) -> Option<()> {
    let Some(start) = current.find('{') else {
        out.push(current.to_owned());
        return Some(());
    };
    let end = start + current[start..].find('}')?;
    let (prefix, inner, suffix) = (
        &current[..start],
        &current[start + 1..end],
        &current[end + 1..],
    );
    if inner.is_empty() {
        return None;
    }
    for option in inner.split(',') {
        expand(&format!("{prefix}{option}{suffix}"), out)?;
    }
    Some(())
}

/// The words of Python's `re.error` for the common syntax errors (position in
/// characters), else the `regex` crate's.
fn regex_error(pattern: &str, error: &regex::Error) -> String {
    let Err(ast) = regex_syntax::ast::parse::Parser::new().parse(pattern) else {
        return error.to_string();
    };
    let at = |offset: usize| pattern[..offset].chars().count();
    let span = ast.span();
    let pos = at(span.start.offset);
    match ast.kind() {
        ErrorKind::GroupUnclosed => {
            format!("missing ), unterminated subpattern at position {pos}")
        }
        ErrorKind::ClassUnclosed => format!("unterminated character set at position {pos}"),
        ErrorKind::RepetitionMissing => format!("nothing to repeat at position {pos}"),
        ErrorKind::GroupUnopened => format!("unbalanced parenthesis at position {pos}"),
        _ => error.to_string(),
    }
}
