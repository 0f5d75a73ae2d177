//! Naming a checkpoint on the command line (`show`, `diff`, `history --before`).
//!
//! A checkpoint is named by one of:
//!
//! * its full id (`1f1eeeef-1760-67b6-bfff-7dd9c1082987`);
//! * a unique prefix of its id, as git names commits (`1f1eeeef-176`): the prefix must
//!   match exactly one checkpoint of the thread's namespace, else the command stops and
//!   lists the candidates;
//! * `step:N`, the checkpoint whose metadata step is `N` (`step:-1` is the input
//!   checkpoint of the first run). A thread forked by `update_state` or a replay can hold
//!   several checkpoints of one step; then the one on the line that leads to the thread's
//!   latest checkpoint (its head, what the user follows now) is taken, and if that does
//!   not settle it the command lists the candidates.
//!
//! The `step:` prefix keeps the two apart: a bare number such as `12` is an id prefix
//! (ids are hex digits), never a step. Resolution reads through the saver's `list_stream`
//! (bounded pages, one short record kept per checkpoint), like `history`.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use futures::TryStreamExt;
use stategraph_checkpoint::{CheckpointConfig, ListOptions};

use crate::db::Db;
use crate::error::{CliError, Result};

/// The length of a full checkpoint id (a UUID with dashes).
const FULL_ID_LEN: usize = 36;

/// How many candidates an ambiguity error lists.
const SHOWN_CANDIDATES: usize = 8;

/// A checkpoint as the user named it (see the module).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckpointRef {
    /// A full id or a prefix of one.
    Id(String),
    /// `step:N`: the checkpoint of metadata step `N`.
    Step(i64),
}

/// Why a checkpoint reference does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadCheckpointRef(String);

impl FromStr for CheckpointRef {
    type Err = BadCheckpointRef;

    fn from_str(s: &str) -> Result<CheckpointRef, BadCheckpointRef> {
        if let Some(step) = s.strip_prefix("step:") {
            return step.trim().parse().map(CheckpointRef::Step).map_err(|_| {
                BadCheckpointRef(format!(
                    "{s:?}: `step:` takes a whole number (step:0, step:-1 for the input)"
                ))
            });
        }
        if s.is_empty() {
            return Err(BadCheckpointRef(
                "an empty checkpoint id: give an id, a prefix of one, or step:N".into(),
            ));
        }
        Ok(CheckpointRef::Id(s.to_owned()))
    }
}

impl fmt::Display for CheckpointRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointRef::Id(id) => f.write_str(id),
            CheckpointRef::Step(n) => write!(f, "step:{n}"),
        }
    }
}

/// What resolution keeps of one checkpoint.
struct Entry {
    id: String,
    parent: Option<String>,
    step: Option<i64>,
    source: String,
}

impl Entry {
    fn describe(&self) -> String {
        let step = self.step.map_or("?".to_owned(), |s| s.to_string());
        format!("{}  step {step}  {}", self.id, self.source)
    }
}

/// The full id that `reference` names in `(thread, ns)`. A full-length id is returned as
/// given (reading it reports a missing one); prefixes and steps are looked up.
pub async fn resolve(db: &Db, thread: &str, ns: &str, reference: &CheckpointRef) -> Result<String> {
    if let CheckpointRef::Id(id) = reference {
        if id.len() >= FULL_ID_LEN {
            return Ok(id.clone());
        }
    }
    let entries = entries(db, thread, ns).await?;
    let place = place(thread, ns);
    match reference {
        CheckpointRef::Id(prefix) => by_prefix(&entries, prefix, &place),
        CheckpointRef::Step(step) => by_step(&entries, *step, &place),
    }
}

/// [`resolve`] for an optional reference.
pub async fn resolve_opt(
    db: &Db,
    thread: &str,
    ns: &str,
    reference: Option<&CheckpointRef>,
) -> Result<Option<String>> {
    match reference {
        Some(r) => resolve(db, thread, ns, r).await.map(Some),
        None => Ok(None),
    }
}

/// Every checkpoint of `(thread, ns)`, newest first.
async fn entries(db: &Db, thread: &str, ns: &str) -> Result<Vec<Entry>> {
    let config = CheckpointConfig::thread(thread).with_ns(ns);
    let mut tuples = db.saver.list_stream(Some(config), ListOptions::default());
    let mut out = Vec::new();
    while let Some(t) = tuples.try_next().await? {
        out.push(Entry {
            id: t.config.checkpoint_id.clone().unwrap_or_default(),
            parent: t.parent_config.and_then(|p| p.checkpoint_id),
            step: t.metadata.step,
            source: t
                .metadata
                .source
                .as_ref()
                .map(|s| s.as_str().to_owned())
                .unwrap_or_default(),
        });
    }
    if out.is_empty() {
        return Err(CliError::NotFound(format!(
            "no checkpoints for {}",
            place(thread, ns)
        )));
    }
    Ok(out)
}

fn place(thread: &str, ns: &str) -> String {
    format!("thread {thread:?} (namespace {ns:?})")
}

fn by_prefix(entries: &[Entry], prefix: &str, place: &str) -> Result<String> {
    let lower = prefix.to_ascii_lowercase();
    let found: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.id.to_ascii_lowercase().starts_with(&lower))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => {
            let hint = if prefix.chars().all(|c| c.is_ascii_digit() || c == '-') {
                format!(" (for a step, write step:{prefix})")
            } else {
                String::new()
            };
            Err(CliError::NotFound(format!(
                "no checkpoint id in {place} starts with {prefix:?}{hint}"
            )))
        }
        many => Err(ambiguous(
            &format!("checkpoint id prefix {prefix:?} is ambiguous in {place}"),
            many,
            "give more characters of the id",
        )),
    }
}

fn by_step(entries: &[Entry], step: i64, place: &str) -> Result<String> {
    let found: Vec<&Entry> = entries.iter().filter(|e| e.step == Some(step)).collect();
    match found.as_slice() {
        [one] => return Ok(one.id.clone()),
        [] => {
            let steps = entries.iter().filter_map(|e| e.step);
            let range = match (steps.clone().min(), steps.max()) {
                (Some(lo), Some(hi)) => format!(" (its steps run from {lo} to {hi})"),
                _ => String::new(),
            };
            return Err(CliError::NotFound(format!(
                "no checkpoint at step {step} in {place}{range}"
            )));
        }
        _ => {}
    }
    let line = head_line(entries);
    let on_line: Vec<&&Entry> = found
        .iter()
        .filter(|e| line.contains(&e.id.as_str()))
        .collect();
    match on_line.as_slice() {
        [one] => Ok(one.id.clone()),
        _ => Err(ambiguous(
            &format!("step {step} is ambiguous in {place}"),
            &found,
            "name the checkpoint by its id (or a prefix of it)",
        )),
    }
}

/// The ids from the latest checkpoint back to its root, following parents.
fn head_line(entries: &[Entry]) -> Vec<&str> {
    let by_id: HashMap<&str, &Entry> = entries.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut line = Vec::new();
    // `list_stream` yields the newest first: the first entry is the head.
    let mut current = entries.first();
    while let Some(e) = current {
        if line.contains(&e.id.as_str()) {
            break; // a parent loop in a damaged database
        }
        line.push(e.id.as_str());
        current = e.parent.as_deref().and_then(|p| by_id.get(p).copied());
    }
    line
}

fn ambiguous(what: &str, candidates: &[&Entry], remedy: &str) -> CliError {
    let mut text = format!("{what}: {} checkpoints match", candidates.len());
    for e in candidates.iter().take(SHOWN_CANDIDATES) {
        text.push_str(&format!("\n  {}", e.describe()));
    }
    if candidates.len() > SHOWN_CANDIDATES {
        text.push_str(&format!(
            "\n  … and {} more",
            candidates.len() - SHOWN_CANDIDATES
        ));
    }
    text.push_str(&format!("\n{remedy}"));
    CliError::Ambiguous(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_ids_parse_apart() {
        assert_eq!("step:3".parse(), Ok(CheckpointRef::Step(3)));
        assert_eq!("step:-1".parse(), Ok(CheckpointRef::Step(-1)));
        assert_eq!("12".parse(), Ok(CheckpointRef::Id("12".into())));
        assert!("step:x".parse::<CheckpointRef>().is_err());
        assert!("".parse::<CheckpointRef>().is_err());
    }

    fn entry(id: &str, parent: Option<&str>, step: i64) -> Entry {
        Entry {
            id: id.into(),
            parent: parent.map(Into::into),
            step: Some(step),
            source: "loop".into(),
        }
    }

    #[test]
    fn a_step_of_several_checkpoints_takes_the_heads_line_or_lists_them() {
        // Newest first: the head `h` descends from `b`; `a` is a sibling branch.
        let forked = [
            entry("h", Some("b"), 2),
            entry("b", Some("r"), 1),
            entry("a", Some("r"), 1),
            entry("r", None, 0),
        ];
        assert_eq!(by_step(&forked, 1, "t").ok(), Some("b".to_owned()));
        assert_eq!(by_step(&forked, 0, "t").ok(), Some("r".to_owned()));
        // The head skips step 1: neither step-1 checkpoint is on its line.
        let skipped = [
            entry("h", Some("r"), 2),
            entry("b", Some("r"), 1),
            entry("a", Some("r"), 1),
            entry("r", None, 0),
        ];
        match by_step(&skipped, 1, "t") {
            Err(CliError::Ambiguous(text)) => {
                assert!(text.contains("2 checkpoints match"), "{text}");
                assert!(text.contains("\n  a  step 1  loop"), "{text}");
            }
            other => panic!("{other:?}"),
        }
    }
}
