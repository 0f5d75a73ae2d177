//! What became of a run's input when the fence refused one of its saves (issue 20).
//!
//! Two processes giving one thread new input at once: when B has stored its input
//! checkpoint (and perhaps more) before A loads the thread, A starts from B's newest
//! checkpoint, which is indistinguishable from a thread whose run crashed there (and such
//! a checkpoint must stay resumable by new input, as in Python). A wins; B's next save is
//! refused. The history is one line, but it holds B's input: a caller that gave B's input
//! again after the `Conflict` would apply it twice. No lease table can tell "in flight
//! elsewhere" from "crashed" without a timeout, so the fence admits A, and the loser
//! finds out instead: it walks the thread's root history from the head back to its own
//! checkpoints and reports the [`InputFate`] in [`Error::Conflict`].
//!
//! The answer does not change after the walk. The fence admits a checkpoint only as a
//! child of the namespace's head (the greatest id), as a retry of a stored one, or as a
//! deliberate branch; so once the head descends from none of the loser's checkpoints
//! (which all have smaller ids than that head, else one of them would be the head), no
//! later non-branch checkpoint descends from them either, and once it descends from one,
//! every later head does too.
//!
//! The walk reads one checkpoint per step from the head back and stops at the first of
//! the run's own checkpoints or at the first checkpoint older than all of them (children
//! have greater ids than their parents): on a conflict, usually a handful of reads.

use stategraph_checkpoint::{CheckpointConfig, CheckpointSaver, CheckpointSource};

use crate::error::{Error, InputFate, Result};

/// The root checkpoints a run handed to its saver, in order, which one was its input
/// checkpoint (a run with new input stores that one first), and the checkpoint a
/// `Command` input's writes were stored against.
#[derive(Debug, Default)]
pub(crate) struct StoredByRun {
    ids: Vec<String>,
    input: Option<String>,
    command_writes_on: Option<String>,
}

impl StoredByRun {
    /// Notes a checkpoint handed to the saver (`input`: the run's input checkpoint).
    pub(crate) fn note(&mut self, id: &str, input: bool) {
        if input && self.ids.is_empty() {
            self.input = Some(id.to_owned());
        }
        self.ids.push(id.to_owned());
    }

    /// Notes that the run's `Command` input was stored as writes against checkpoint `id`
    /// (the loaded head): another run loading that checkpoint applies them.
    pub(crate) fn note_command_writes(&mut self, id: &str) {
        self.command_writes_on = Some(id.to_owned());
    }
}

/// One checkpoint on the walk from the head back: its id and its metadata source.
#[derive(Clone, Debug)]
pub(crate) struct Visited {
    /// The checkpoint id.
    pub(crate) id: String,
    /// Its `metadata.source`.
    pub(crate) source: Option<CheckpointSource>,
}

/// `err` with the run's [`InputFate`] when it is a fence's refusal: the fence's
/// [`stategraph_checkpoint::Error::Conflict`] becomes [`Error::Conflict`]; any other
/// error is returned as it is.
pub(crate) async fn with_fate(
    err: Error,
    saver: &dyn CheckpointSaver,
    thread_id: &str,
    stored: &StoredByRun,
) -> Error {
    let Error::Checkpoint(stategraph_checkpoint::Error::Conflict(message)) = err else {
        return err;
    };
    let fate = match walk(saver, thread_id, stored).await {
        Ok(chain) => decide(&chain, stored),
        Err(e) => InputFate::Unknown {
            reason: format!("the thread's history could not be read: {e}"),
        },
    };
    Error::Conflict { message, fate }
}

/// The thread's root history from the head back, up to and including the first of the
/// run's checkpoints, or up to the first checkpoint older than all of them (excluded).
async fn walk(
    saver: &dyn CheckpointSaver,
    thread_id: &str,
    stored: &StoredByRun,
) -> Result<Vec<Visited>> {
    let mut chain = Vec::new();
    let Some(oldest) = stored.ids.iter().min() else {
        return Ok(chain);
    };
    let mut next = Some(CheckpointConfig::thread(thread_id));
    while let Some(config) = next.take() {
        let Some(tuple) = saver.get_tuple(&config).await? else {
            break;
        };
        if tuple.checkpoint.id < *oldest {
            break;
        }
        let mine = stored.ids.contains(&tuple.checkpoint.id);
        chain.push(Visited {
            id: tuple.checkpoint.id,
            source: tuple.metadata.source,
        });
        if mine {
            break;
        }
        next = tuple.parent_config;
    }
    Ok(chain)
}

/// The fate, from the walk (`chain`, head first): none of the run's checkpoints in it is
/// [`InputFate::NotApplied`] (`Unknown` when a `Command` input's writes were stored: the
/// winner may have loaded them with the head); its newest one past its input is
/// `Applied`; its input checkpoint, followed by another run's step (`loop`, a resume that
/// ran this run's start) is `Applied`, by another run's input is `Dropped`, by anything
/// else `Unknown`.
pub(crate) fn decide(chain: &[Visited], stored: &StoredByRun) -> InputFate {
    let Some(last) = chain.last().filter(|v| stored.ids.contains(&v.id)) else {
        return match &stored.command_writes_on {
            None => InputFate::NotApplied,
            Some(id) => InputFate::Unknown {
                reason: format!(
                    "the run's command input is stored as writes against checkpoint {id}, \
                     which another run may have loaded and applied"
                ),
            },
        };
    };
    let checkpoint_id = last.id.clone();
    if stored.input.as_ref() != Some(&last.id) {
        return InputFate::Applied { checkpoint_id };
    }
    let child = chain.len().checked_sub(2).map(|i| &chain[i]);
    match child.and_then(|c| c.source.as_ref()) {
        Some(CheckpointSource::Loop) => InputFate::Applied { checkpoint_id },
        Some(CheckpointSource::Input) => InputFate::Dropped { checkpoint_id },
        _ => InputFate::Unknown {
            reason: format!(
                "the run's input checkpoint {checkpoint_id} is in the thread's history \
                 without a step of another run after it"
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(id: &str, source: CheckpointSource) -> Visited {
        Visited {
            id: id.into(),
            source: Some(source),
        }
    }

    fn run(ids: &[&str], with_input: bool) -> StoredByRun {
        let mut stored = StoredByRun::default();
        for (i, id) in ids.iter().enumerate() {
            stored.note(id, with_input && i == 0);
        }
        stored
    }

    use CheckpointSource::{Input, Loop, Update};

    #[test]
    fn a_history_without_the_runs_checkpoints_is_not_applied() {
        let stored = run(&["5", "6"], true);
        // The walk stopped at a checkpoint older than the run's (it is not pushed).
        assert_eq!(
            decide(&[at("8", Loop), at("7", Input)], &stored),
            InputFate::NotApplied
        );
        assert_eq!(decide(&[], &stored), InputFate::NotApplied);
        assert_eq!(decide(&[], &StoredByRun::default()), InputFate::NotApplied);
        // A command's writes on the loaded head: the winner may have applied them.
        let mut command = run(&["5"], false);
        command.note_command_writes("4");
        assert_eq!(decide(&[at("6", Loop)], &command).applied(), None);
        assert_eq!(
            decide(&[at("6", Loop), at("5", Loop)], &command).applied(),
            Some(true)
        );
    }

    #[test]
    fn a_step_of_the_run_in_the_history_is_applied() {
        let stored = run(&["5", "6"], true);
        let chain = [at("8", Loop), at("7", Input), at("6", Loop)];
        let applied = InputFate::Applied {
            checkpoint_id: "6".into(),
        };
        assert_eq!(decide(&chain, &stored), applied);
        assert_eq!(applied.applied(), Some(true));
        // A resume (no input checkpoint): its steps are in the history.
        let resumed = run(&["5"], false);
        assert_eq!(
            decide(&[at("7", Input), at("5", Loop)], &resumed),
            InputFate::Applied {
                checkpoint_id: "5".into()
            }
        );
    }

    #[test]
    fn the_input_checkpoint_alone_depends_on_what_followed_it() {
        let stored = run(&["5"], true);
        let resumed = decide(&[at("6", Loop), at("5", Input)], &stored);
        assert_eq!(resumed.applied(), Some(true));
        let dropped = decide(&[at("7", Loop), at("6", Input), at("5", Input)], &stored);
        assert_eq!(
            dropped,
            InputFate::Dropped {
                checkpoint_id: "5".into()
            }
        );
        assert_eq!(dropped.applied(), Some(false));
        let updated = decide(&[at("6", Update), at("5", Input)], &stored);
        assert_eq!(updated.applied(), None);
        assert_eq!(decide(&[at("5", Input)], &stored).applied(), None);
    }
}
