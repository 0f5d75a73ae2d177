//! The suite against `MemorySaver`, and checks that the suite itself skips and fails.

use stategraph_checkpoint::MemorySaver;
use stategraph_checkpoint_conformance::conformance_suite;

// Unfenced: the suite re-puts old checkpoints and puts unrelated ones into one
// namespace, which the fence refuses by design; the fence group runs on a fenced saver
// in `harness::fenced_memory_saver_passes_the_fence_group`.
conformance_suite!(make = async { MemorySaver::new().with_fencing(false) });

/// The same suite through the closure form, a boxed saver that declares no optional
/// capability, and `skip`: the required groups run, the optional ones are skipped.
mod required_only {
    use super::support::Limited;
    use stategraph_checkpoint::CheckpointSaver;
    use stategraph_checkpoint_conformance::conformance_suite;

    conformance_suite!(
        make = || async { Box::new(Limited::required_only()) as Box<dyn CheckpointSaver> },
        skip = [prune],
    );
}

mod support {
    use async_trait::async_trait;
    use stategraph_checkpoint::{
        Capabilities, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig,
        CheckpointMetadata, CheckpointSaver, CheckpointTuple, ListOptions, MemorySaver, Result,
        Value,
    };

    /// A deliberate bug of [`Limited`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Bug {
        /// None: a correct saver.
        None,
        /// `put_writes` succeeds and stores nothing.
        DropWrites,
        /// Pending writes come back in reverse order.
        ReverseWrites,
        /// Integer channel values come back as floats.
        IntsAsFloats,
        /// Nil channel values are dropped.
        DropNil,
        /// `delete_thread` succeeds and deletes nothing.
        NoopDelete,
    }

    /// A `MemorySaver` that declares no optional capability, with an optional bug.
    pub(crate) struct Limited {
        inner: MemorySaver,
        bug: Bug,
    }

    impl Limited {
        /// Implements the required operations only, correctly.
        pub(crate) fn required_only() -> Limited {
            Limited::with_bug(Bug::None)
        }

        /// Implements the required operations only, with `bug`.
        pub(crate) fn with_bug(bug: Bug) -> Limited {
            Limited {
                inner: MemorySaver::new().with_fencing(false),
                bug,
            }
        }

        /// Applies the read-side bug to a tuple.
        fn spoil(&self, mut tuple: CheckpointTuple) -> CheckpointTuple {
            match self.bug {
                Bug::ReverseWrites => tuple.pending_writes.reverse(),
                Bug::IntsAsFloats => {
                    for v in tuple.checkpoint.channel_values.values_mut() {
                        if let Value::Int(i) = v {
                            *v = Value::Float(*i as f64);
                        }
                    }
                }
                Bug::DropNil => tuple.checkpoint.channel_values.retain(|_, v| !v.is_nil()),
                Bug::None | Bug::DropWrites | Bug::NoopDelete => {}
            }
            tuple
        }
    }

    #[async_trait]
    impl CheckpointSaver for Limited {
        async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
            Ok(self.inner.get_tuple(config).await?.map(|t| self.spoil(t)))
        }

        async fn list(
            &self,
            config: Option<&CheckpointConfig>,
            options: &ListOptions,
        ) -> Result<Vec<CheckpointTuple>> {
            let tuples = self.inner.list(config, options).await?;
            Ok(tuples.into_iter().map(|t| self.spoil(t)).collect())
        }

        async fn put(
            &self,
            config: &CheckpointConfig,
            checkpoint: &Checkpoint,
            metadata: &CheckpointMetadata,
            new_versions: &ChannelVersions,
        ) -> Result<CheckpointConfig> {
            self.inner
                .put(config, checkpoint, metadata, new_versions)
                .await
        }

        async fn put_writes(
            &self,
            config: &CheckpointConfig,
            writes: &[(String, Value)],
            task_id: &str,
            task_path: &str,
        ) -> Result<()> {
            if self.bug == Bug::DropWrites {
                return Ok(());
            }
            self.inner
                .put_writes(config, writes, task_id, task_path)
                .await
        }

        async fn delete_thread(&self, thread_id: &str) -> Result<()> {
            if self.bug == Bug::NoopDelete {
                return Ok(());
            }
            self.inner.delete_thread(thread_id).await
        }

        fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
            self.inner.get_next_version(current)
        }

        fn capabilities(&self) -> Capabilities {
            Capabilities::default()
        }
    }
}

/// `validate` and the behaviour table, checked on savers that pass, skip and fail.
mod harness {
    use super::support::{Bug, Limited};
    use stategraph_checkpoint::MemorySaver;
    use stategraph_checkpoint_conformance::{
        behaviours, run_behaviour, validate, Capability, Level, Outcome,
    };

    #[test]
    fn table_has_the_81_behaviours_and_the_tightened_ones() {
        let all = behaviours();
        let upstream: Vec<_> = all
            .iter()
            .filter(|b| {
                !b.name.starts_with("tightened::")
                    && !b.name.starts_with("fence::")
                    && !b.name.starts_with("delta_history::")
                    && !b.name.starts_with("metadata_filter::")
            })
            .collect();
        assert_eq!(upstream.len(), 81);
        let count = |c: Capability| upstream.iter().filter(|b| b.capability == c).count();
        let counts: Vec<usize> = Capability::ALL.iter().map(|c| count(*c)).collect();
        assert_eq!(counts, [17, 10, 10, 16, 5, 7, 8, 8, 0]);
        let fence = all.iter().filter(|b| b.capability == Capability::Fence);
        assert!(fence.clone().all(|b| b.name.starts_with("fence::")));
        assert_eq!(fence.count(), 8);
        assert_eq!(all.len() - upstream.len(), 20 + 8 + 7 + 5);
        let mut names: Vec<_> = all.iter().map(|b| b.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "behaviour names are unique");
    }

    #[tokio::test]
    async fn memory_saver_passes_everything() {
        let report = validate(|| async { MemorySaver::new().with_fencing(false) }).await;
        println!("{report}");
        assert!(report.passed_all_required());
        assert!(report.passed_all());
        assert_eq!(report.level(), Level::Full);
        assert_eq!(
            (report.passed(), report.failed(), report.skipped()),
            (113, 0, 8),
            "the fence group is skipped on an unfenced saver"
        );
    }

    #[tokio::test]
    async fn fenced_memory_saver_passes_the_fence_group() {
        let fence: Vec<_> = behaviours()
            .into_iter()
            .filter(|b| b.capability == Capability::Fence)
            .collect();
        for behaviour in &fence {
            let saver = MemorySaver::new();
            let outcome = run_behaviour(&saver, behaviour, &[]).await;
            assert_eq!(outcome, Outcome::Passed, "{}", behaviour.name);
        }
        // The tightened write rules hold on a fenced saver too (the second call is refused).
        for name in [
            "tightened::repeated_normal_write_keeps_first",
            "tightened::repeated_mixed_batch",
            "tightened::repeated_reserved_writes_keep_last",
        ] {
            let behaviour = behaviours().into_iter().find(|b| b.name == name).unwrap();
            let outcome = run_behaviour(&MemorySaver::new(), &behaviour, &[]).await;
            assert_eq!(outcome, Outcome::Passed, "{name}");
        }
    }

    #[tokio::test]
    async fn undeclared_optional_capabilities_are_skipped() {
        let report = validate(|| async { Limited::required_only() }).await;
        println!("{report}");
        assert!(report.passed_all_required());
        assert_eq!(report.level(), Level::Required);
        for r in report.optional() {
            assert!(!r.detected, "{} should not be detected", r.capability);
            assert_eq!(r.verdict(), None);
            assert_eq!((r.passed, r.failed), (0, 0));
            assert!(r.skipped > 0);
        }
        let text = report.to_string();
        assert!(text.contains("prune            SKIPPED"), "{text}");
    }

    #[tokio::test]
    async fn a_saver_that_drops_writes_fails() {
        let report = validate(|| async { Limited::with_bug(Bug::DropWrites) }).await;
        println!("{report}");
        assert!(!report.passed_all_required());
        assert_eq!(report.level(), Level::Failing);
        let put_writes = report
            .capability(Capability::PutWrites)
            .expect("put_writes ran");
        assert_eq!(put_writes.verdict(), Some(false));
        assert!(
            report
                .failures()
                .any(|f| f.starts_with("put_writes::basic: ")),
            "{report}"
        );
        let put = report.capability(Capability::Put).expect("put ran");
        assert_eq!(put.verdict(), Some(true), "put does not depend on writes");
    }

    #[tokio::test]
    async fn tightened_behaviours_catch_their_bugs() {
        let cases = [
            (Bug::ReverseWrites, "tightened::task_path_orders_writes"),
            (Bug::ReverseWrites, "tightened::reserved_writes_come_first"),
            (
                Bug::ReverseWrites,
                "delta_history::writes_in_task_path_order",
            ),
            (
                Bug::DropWrites,
                "delta_history::seed_and_writes_oldest_first",
            ),
            (
                Bug::IntsAsFloats,
                "tightened::int_float_bool_values_stay_distinct",
            ),
            (Bug::IntsAsFloats, "put::preserves_channel_values"),
            (Bug::DropNil, "tightened::bytes_and_nil_values_roundtrip"),
            (
                Bug::NoopDelete,
                "tightened::delete_thread_removes_write_rows",
            ),
        ];
        let all = behaviours();
        for (bug, name) in cases {
            let behaviour = all
                .iter()
                .find(|b| b.name == name)
                .expect("known behaviour");
            let saver = Limited::with_bug(Bug::None);
            let outcome = run_behaviour(&saver, behaviour, &[]).await;
            assert_eq!(outcome, Outcome::Passed, "{name} on a correct saver");
            let saver = Limited::with_bug(bug);
            let outcome = run_behaviour(&saver, behaviour, &[]).await;
            assert!(
                matches!(outcome, Outcome::Failed(_)),
                "{name} with {bug:?}: {outcome:?}"
            );
        }
    }
}
