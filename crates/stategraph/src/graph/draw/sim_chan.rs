//! The trigger channels the drawing's dry run tracks (`simulate.rs`): an ephemeral value,
//! a value readable after the run would finish, and the join barriers. Below
//! `simulate.rs`.

use std::collections::BTreeSet;

/// The trigger channels the dry run tracks.
#[derive(Clone, Debug)]
pub(super) enum Chan {
    /// `EphemeralValue`: holds a value for one step.
    Ephemeral(bool),
    /// `LastValueAfterFinish`: readable once the run would otherwise finish.
    AfterFinish { value: bool, finished: bool },
    /// `NamedBarrierValue(AfterFinish)`: complete once every name was written.
    Barrier {
        names: BTreeSet<String>,
        seen: BTreeSet<String>,
        after_finish: bool,
        finished: bool,
    },
}

impl Chan {
    pub(super) fn available(&self) -> bool {
        match self {
            Chan::Ephemeral(v) => *v,
            Chan::AfterFinish { value, finished } => *value && *finished,
            Chan::Barrier {
                names,
                seen,
                after_finish,
                finished,
            } => seen == names && (!after_finish || *finished),
        }
    }

    pub(super) fn update(&mut self, values: &[Option<String>]) -> bool {
        match self {
            Chan::Ephemeral(v) => {
                if values.is_empty() {
                    std::mem::replace(v, false)
                } else {
                    *v = true;
                    true
                }
            }
            Chan::AfterFinish { value, finished } => {
                if values.is_empty() {
                    false
                } else {
                    *value = true;
                    *finished = false;
                    true
                }
            }
            Chan::Barrier { names, seen, .. } => {
                let mut updated = false;
                for v in values.iter().flatten() {
                    if names.contains(v) && seen.insert(v.clone()) {
                        updated = true;
                    }
                }
                updated
            }
        }
    }

    pub(super) fn consume(&mut self) -> bool {
        match self {
            Chan::Ephemeral(_) => false,
            Chan::AfterFinish { value, finished } => {
                if *finished {
                    *finished = false;
                    *value = false;
                    true
                } else {
                    false
                }
            }
            Chan::Barrier {
                names,
                seen,
                after_finish,
                finished,
            } => {
                if *after_finish {
                    if *finished && seen == names {
                        *finished = false;
                        seen.clear();
                        true
                    } else {
                        false
                    }
                } else if seen == names {
                    seen.clear();
                    true
                } else {
                    false
                }
            }
        }
    }

    pub(super) fn finish(&mut self) -> bool {
        match self {
            Chan::Ephemeral(_) => false,
            Chan::AfterFinish { value, finished } => {
                if !*finished && *value {
                    *finished = true;
                    true
                } else {
                    false
                }
            }
            Chan::Barrier {
                names,
                seen,
                after_finish,
                finished,
            } => {
                if *after_finish && !*finished && seen == names {
                    *finished = true;
                    true
                } else {
                    false
                }
            }
        }
    }
}
