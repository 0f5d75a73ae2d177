//! The conformance suite every stategraph checkpoint saver runs, in a few lines.
//!
//! It holds the 81 behaviours of LangGraph's `langgraph-checkpoint-conformance` 0.0.2 and
//! closes the loose spots that suite leaves open.
//!
//! # Running it against a backend
//!
//! Add this crate as a dev-dependency (it brings its own tokio runtime), then write
//! `tests/conformance.rs`:
//!
//! ```ignore
//! use stategraph_checkpoint_conformance::conformance_suite;
//! use my_backend::MySaver;
//!
//! conformance_suite!(make = async { MySaver::connect("...").await.unwrap() });
//! ```
//!
//! That expands to one test per behaviour (a `#[test]` on a current-thread tokio runtime,
//! as `#[tokio::test]` would make), named after it (`put::returns_config`,
//! `list::ordering`, `tightened::repeated_mixed_batch`, …), each on a fresh saver, so
//! `cargo test list::` runs one group and a failure names the behaviour that broke.
//! `make` is a future or a closure without arguments returning one (`make = || async {…}`);
//! the saver may be owned, boxed (`Box<dyn CheckpointSaver>`) or shared (`Arc<…>`).
//! `skip = [prune, copy_thread]` after `make` skips optional groups a backend declares but
//! wants left out (required groups cannot be skipped).
//!
//! For one verdict instead of many tests, [`validate`] runs every group and returns a
//! [`Report`]; gate on [`Report::passed_all_required`] (or [`Report::passed_all`]):
//!
//! ```ignore
//! let report = stategraph_checkpoint_conformance::validate(|| async { MySaver::new() }).await;
//! println!("{report}");
//! assert!(report.passed_all_required());
//! ```
//!
//! # Design
//!
//! * **Capabilities.** `put`, `put_writes`, `get_tuple`, `list` and `delete_thread` are
//!   required. `delete_for_runs`, `copy_thread`, `prune` and `fence` (the
//!   one-writer-per-thread rule of `stategraph_checkpoint::fence`) are optional: a saver
//!   declares them in [`CheckpointSaver::capabilities`]. The behaviours of an optional capability the
//!   saver does not declare are *skipped* and reported apart, never counted as passed; a
//!   declared one always runs. An empty run never passes.
//! * **Behaviours** are plain async functions, `spec::<capability>::<name>(saver)`, one
//!   file per capability, named as in LangGraph without the `test_` prefix. Each uses fresh
//!   uuid4 threads and run ids, so they can share one saver: [`validate`] builds one saver per
//!   capability group (as LangGraph does), the macro one per test.
//! * **Fixtures** ([`fixtures`]) build checkpoints of format v4 (not LangGraph's v1) with
//!   integer channel versions, metadata `{source, step, parents: {}}`, and checkpoint ids
//!   that strictly increase as text, so "latest" is always "greatest id".
//! * **Tightened** ([`spec::tightened`]) closes what the Python suite leaves loose, each
//!   as a behaviour of the capability it exercises: write rows really gone after
//!   `delete_thread`, `delete_for_runs` and `prune` (the same checkpoint put again comes
//!   back without writes); `task_path` stored and sorted on; pending writes ordered by
//!   `(task_path, task_id, index)`, reserved indexes (-4…-1) first; bytes and nil values
//!   and writes; integers, floats and booleans kept apart; metadata `parents`; a config
//!   without `checkpoint_ns` (`get_tuple` reads the root, `list` every namespace) and
//!   `list` without a config (every thread); a deleted run gone from every thread; the
//!   repeated-write rule of [`CheckpointSaver::put_writes`] (reserved index: last wins,
//!   normal index: first wins, also within one mixed batch); and no dangling parent: a
//!   checkpoint kept by `prune(keep_latest)` or `delete_for_runs` whose parent was
//!   removed has `parent_config == None`.
//! * **Metadata filters** ([`spec::metadata_filter`]): the filters LangGraph's savers
//!   answer differently (`{}`, nested maps, lists, `None`) get the one meaning of
//!   [`stategraph_checkpoint::ListOptions::matches`] on every saver: equality (maps in any
//!   key order, numbers by value at any depth), `None` matching a missing key too.
//! * **Decisions where Python accepts anything:** `copy_thread` from an unknown thread
//!   (#73) may succeed or fail, but not with [`stategraph_checkpoint::Error::Unsupported`],
//!   since a saver that runs it declared the capability. Values are compared exactly
//!   (`Value` equality), not with Python's `1 == 1.0 == True`; versions by integer part.

pub use stategraph_checkpoint::CheckpointSaver;

#[macro_use]
mod check;
// Before `behaviour`, which calls `__with_behaviours!` by its textual name (a path to it
// would be one to the crate root, which re-exports `behaviour`: an import circle).
#[macro_use]
pub mod spec;
mod behaviour;
pub mod fixtures;
mod report;
pub mod streaming;
mod validate;

pub use behaviour::{behaviours, Behaviour, BehaviourFn, Capability, Failure, Outcome};
pub use report::{CapabilityReport, Level, Report};
pub use validate::{run_behaviour, validate, validate_skipping};

/// Names usable in `conformance_suite!(…, skip = [...])`: the optional capabilities.
#[allow(non_upper_case_globals)]
pub mod skip {
    use crate::Capability;

    /// Skip the `delete_for_runs` group.
    pub const delete_for_runs: Capability = Capability::DeleteForRuns;
    /// Skip the `copy_thread` group.
    pub const copy_thread: Capability = Capability::CopyThread;
    /// Skip the `prune` group.
    pub const prune: Capability = Capability::Prune;
    /// Skip the `fence` group.
    pub const fence: Capability = Capability::Fence;
}

/// What the macros expand to; not part of the public API.
#[doc(hidden)]
pub mod __private {
    use std::future::Future;

    use stategraph_checkpoint::CheckpointSaver;

    /// Runs a test body on a current-thread tokio runtime, as `#[tokio::test]` does (done
    /// here so that the calling crate needs no `tokio` of its own).
    pub fn block_on<F: Future>(future: F) -> std::io::Result<F::Output> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(runtime.block_on(future))
    }

    /// Turns whatever a factory made (a saver, a `Box`/`Arc` of one) into `&dyn
    /// CheckpointSaver`; called with method syntax so auto-deref finds the saver.
    pub trait AsDynSaver {
        /// The saver as a trait object.
        fn as_dyn_saver(&self) -> &dyn CheckpointSaver;
    }

    impl<T: CheckpointSaver> AsDynSaver for T {
        fn as_dyn_saver(&self) -> &dyn CheckpointSaver {
            self
        }
    }

    impl AsDynSaver for dyn CheckpointSaver {
        fn as_dyn_saver(&self) -> &dyn CheckpointSaver {
            self
        }
    }
}

/// Generates one test per conformance behaviour, each on a fresh saver and its own
/// current-thread tokio runtime (what `#[tokio::test]` expands to).
///
/// `make` is an expression producing a future of the saver (`async { MySaver::new() }`,
/// `MySaver::connect(url)`), or a closure without arguments returning one
/// (`|| async { … }`). An optional `skip = [prune, …]` names optional capabilities to leave
/// out. Tests of an optional capability the saver does not declare print a "skipped" line
/// and return. Use it once per module; the tests land in modules named after the spec
/// files (`put`, `put_writes`, …, `tightened`).
#[macro_export]
macro_rules! conformance_suite {
    (make = move || $body:expr $(, skip = [$($skip:ident),* $(,)?])? $(,)?) => {
        $crate::__with_behaviours!([$crate::__conformance_tests] @make $body, @skip [$($($skip),*)?]);
    };
    (make = || $body:expr $(, skip = [$($skip:ident),* $(,)?])? $(,)?) => {
        $crate::__with_behaviours!([$crate::__conformance_tests] @make $body, @skip [$($($skip),*)?]);
    };
    (make = $future:expr $(, skip = [$($skip:ident),* $(,)?])? $(,)?) => {
        $crate::__with_behaviours!([$crate::__conformance_tests] @make $future, @skip [$($($skip),*)?]);
    };
}

/// The test generator behind [`conformance_suite!`]; receives the behaviour list.
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    (
        [@make $make:expr, @skip $skip:tt]
        $( $module:ident { $( $name:ident : $cap:ident ),* $(,)? } )*
    ) => {
        $(
            mod $module {
                #[allow(unused_imports)]
                use super::*;
                $(
                    #[test]
                    fn $name() {
                        use $crate::__private::AsDynSaver as _;
                        let behaviour = $crate::Behaviour {
                            capability: $crate::Capability::$cap,
                            name: concat!(stringify!($module), "::", stringify!($name)),
                            run: |s| ::std::boxed::Box::pin($crate::spec::$module::$name(s)),
                        };
                        let skip: &[$crate::Capability] = &$crate::__skip_list!$skip;
                        let outcome = $crate::__private::block_on(async {
                            let saver = ($make).await;
                            $crate::run_behaviour(saver.as_dyn_saver(), &behaviour, skip).await
                        });
                        match outcome {
                            ::std::result::Result::Err(e) => {
                                panic!("cannot start a tokio runtime: {}", e);
                            }
                            ::std::result::Result::Ok($crate::Outcome::Passed) => {}
                            ::std::result::Result::Ok($crate::Outcome::Skipped(why)) => {
                                println!("skipped {}: {}", behaviour.name, why);
                            }
                            ::std::result::Result::Ok($crate::Outcome::Failed(failure)) => {
                                panic!("{} failed: {}", behaviour.name, failure);
                            }
                        }
                    }
                )*
            }
        )*
    };
}

/// Maps the `skip = [...]` names of [`conformance_suite!`] to capabilities.
#[doc(hidden)]
#[macro_export]
macro_rules! __skip_list {
    ($($skip:ident),*) => {
        [$($crate::skip::$skip),*]
    };
}
