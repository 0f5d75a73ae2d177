//! The conformance suite of stategraph checkpoint savers: the 81 behaviours of LangGraph's
//! `langgraph-checkpoint-conformance` plus the loose spots it leaves open, closed.
//!
//! # Running it against a backend
//!
//! Add this crate and `tokio` as dev-dependencies, then write `tests/conformance.rs`:
//!
//! ```ignore
//! use stategraph_checkpoint_conformance::conformance_suite;
//! use my_backend::MySaver;
//!
//! conformance_suite!(make = async { MySaver::connect("...").await.unwrap() });
//! ```
//!
//! That expands to one `#[tokio::test]` per behaviour, named after it (`put::returns_config`,
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
//!   required. `delete_for_runs`, `copy_thread` and `prune` are optional: a saver declares
//!   them in [`CheckpointSaver::capabilities`]. The behaviours of an optional capability the
//!   saver does not declare are *skipped* and reported apart, never counted as passed; a
//!   declared one always runs. An empty run never passes.
//! * **Behaviours** are plain async functions, `spec::<capability>::<name>(saver)`, one
//!   file per capability, named as in LangGraph without the `test_` prefix. Each uses fresh
//!   uuid4 threads and run ids, so they can share one saver: [`validate`] builds one saver per
//!   capability group (as LangGraph does), the macro one per test.
//! * **Fixtures** ([`fixtures`]) build checkpoints of format v4 (not LangGraph's v1) with
//!   integer channel versions, metadata `{source, step, parents: {}}`, and checkpoint ids
//!   that strictly increase as text, so "latest" is always "greatest id".
//! * **Tightened** ([`spec::tightened`]) closes what the Python suite leaves loose: write
//!   rows really deleted, `task_path` stored and sorted on, bytes and nil values, metadata
//!   `parents`, a config without `checkpoint_ns`, the repeated-write rule of
//!   [`CheckpointSaver::put_writes`], the order of reserved writes, the parent link of a
//!   pruned thread's survivor, and integers, floats and booleans kept apart. Each belongs
//!   to the capability it exercises, so an undeclared optional one is skipped as well.

pub use stategraph_checkpoint::CheckpointSaver;

#[macro_use]
mod check;
mod behaviour;
pub mod fixtures;
mod report;
pub mod spec;
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
}

/// What the macros expand to; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use tokio;

    use stategraph_checkpoint::CheckpointSaver;

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

/// Generates one `#[tokio::test]` per conformance behaviour, each on a fresh saver.
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
                    #[$crate::__private::tokio::test(
                        crate = "stategraph_checkpoint_conformance::__private::tokio"
                    )]
                    async fn $name() {
                        use $crate::__private::AsDynSaver as _;
                        let saver = ($make).await;
                        let behaviour = $crate::Behaviour {
                            capability: $crate::Capability::$cap,
                            name: concat!(stringify!($module), "::", stringify!($name)),
                            run: |s| ::std::boxed::Box::pin($crate::spec::$module::$name(s)),
                        };
                        let skip: &[$crate::Capability] = &$crate::__skip_list!$skip;
                        match $crate::run_behaviour(saver.as_dyn_saver(), &behaviour, skip).await {
                            $crate::Outcome::Passed => {}
                            $crate::Outcome::Skipped(why) => {
                                println!("skipped {}: {}", behaviour.name, why);
                            }
                            $crate::Outcome::Failed(failure) => {
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
