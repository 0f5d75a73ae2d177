//! The behaviours, one file per capability, and the one list that names them all.
//!
//! Every behaviour is `pub async fn name(saver: &dyn CheckpointSaver) -> Result<(), Failure>`,
//! named after LangGraph's `test_<capability>_<name>`. The numbers in their docs (`#12`)
//! count the 81 tests of `langgraph-checkpoint-conformance` 0.0.2, capability by
//! capability, in the order its `spec/test_*.py` modules define them. [`tightened`] holds
//! the behaviours this port adds where the Python suite is loose; [`metadata_filter`] the
//! filters on maps, lists and `None` that LangGraph's savers answer differently; [`fence`]
//! the optional group of the one-writer-per-thread fence.

pub mod copy_thread;
pub mod delete_for_runs;
pub mod delete_thread;
pub mod delta_history;
pub mod fence;
pub mod get_tuple;
pub mod list;
pub mod metadata_filter;
pub mod prune;
pub mod put;
pub mod put_writes;
pub mod tightened;

/// Given `[callback] args…`, calls `callback! { [args…] module { name: Capability, … } … }`
/// with every behaviour of the suite: the single list both [`crate::behaviours`] and
/// [`crate::conformance_suite!`] are generated from.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_behaviours {
    ([$($callback:tt)*] $($args:tt)*) => {
        $($callback)*! {
            [$($args)*]
            put {
                returns_config: Put,
                roundtrip: Put,
                preserves_channel_values: Put,
                preserves_channel_versions: Put,
                preserves_versions_seen: Put,
                preserves_metadata: Put,
                root_namespace: Put,
                child_namespace: Put,
                default_namespace: Put,
                multiple_checkpoints_same_thread: Put,
                multiple_threads_isolated: Put,
                parent_config: Put,
                incremental_channel_update: Put,
                new_channel_added: Put,
                channel_removed: Put,
                preserves_run_id: Put,
                preserves_versions_seen_values: Put,
            }
            put_writes {
                basic: PutWrites,
                multiple_writes_same_task: PutWrites,
                multiple_tasks: PutWrites,
                preserves_task_id: PutWrites,
                preserves_channel_and_value: PutWrites,
                task_path: PutWrites,
                idempotent: PutWrites,
                special_channels: PutWrites,
                across_namespaces: PutWrites,
                cleared_on_next_checkpoint: PutWrites,
            }
            get_tuple {
                nonexistent_returns_none: GetTuple,
                latest_when_no_checkpoint_id: GetTuple,
                specific_checkpoint_id: GetTuple,
                config_structure: GetTuple,
                checkpoint_fields: GetTuple,
                metadata: GetTuple,
                parent_config: GetTuple,
                pending_writes: GetTuple,
                respects_namespace: GetTuple,
                nonexistent_checkpoint_id: GetTuple,
            }
            list {
                all: List,
                by_thread: List,
                by_namespace: List,
                ordering: List,
                metadata_filter_single_key: List,
                metadata_filter_step: List,
                metadata_filter_multiple_keys: List,
                metadata_filter_no_match: List,
                metadata_custom_keys: List,
                before: List,
                limit: List,
                limit_plus_before: List,
                combined_thread_and_filter: List,
                empty_result: List,
                includes_pending_writes: List,
                multiple_namespaces: List,
            }
            metadata_filter {
                empty_map_matches_only_an_empty_map: List,
                nested_maps_compare_by_equality: List,
                lists_compare_by_equality: List,
                none_matches_null_and_missing_keys: List,
                booleans_are_not_numbers: List,
            }
            delete_thread {
                removes_checkpoints: DeleteThread,
                removes_writes: DeleteThread,
                removes_all_namespaces: DeleteThread,
                preserves_other_threads: DeleteThread,
                nonexistent_noop: DeleteThread,
            }
            delete_for_runs {
                single: DeleteForRuns,
                multiple: DeleteForRuns,
                preserves_other_runs: DeleteForRuns,
                removes_writes: DeleteForRuns,
                empty_list_noop: DeleteForRuns,
                nonexistent_noop: DeleteForRuns,
                across_namespaces: DeleteForRuns,
            }
            copy_thread {
                basic: CopyThread,
                all_checkpoints: CopyThread,
                preserves_metadata: CopyThread,
                preserves_namespaces: CopyThread,
                preserves_writes: CopyThread,
                preserves_ordering: CopyThread,
                source_unchanged: CopyThread,
                nonexistent_source: CopyThread,
            }
            prune {
                keep_latest_single_thread: Prune,
                keep_latest_multiple_threads: Prune,
                keep_latest_across_namespaces: Prune,
                keep_latest_preserves_writes: Prune,
                delete_all: Prune,
                preserves_other_threads: Prune,
                empty_list_noop: Prune,
                nonexistent_noop: Prune,
            }
            delta_history {
                seed_and_writes_oldest_first: GetTuple,
                no_seed_walks_to_the_root: GetTuple,
                follows_the_parent_chain: GetTuple,
                each_channel_stops_at_its_seed: GetTuple,
                writes_in_task_path_order: GetTuple,
                latest_and_unknown_targets: GetTuple,
                prune_keeps_what_the_chain_needs: Prune,
            }
            tightened {
                int_float_bool_values_stay_distinct: Put,
                bytes_and_nil_values_roundtrip: Put,
                metadata_parents_roundtrip: Put,
                bytes_and_nil_writes_roundtrip: PutWrites,
                task_path_orders_writes: PutWrites,
                reserved_writes_come_first: PutWrites,
                repeated_normal_write_keeps_first: PutWrites,
                repeated_reserved_writes_keep_last: PutWrites,
                repeated_mixed_batch: PutWrites,
                absent_ns_gets_root: GetTuple,
                absent_ns_lists_every_namespace: List,
                no_config_lists_every_thread: List,
                delete_thread_removes_write_rows: DeleteThread,
                delete_for_runs_removes_the_run: DeleteForRuns,
                delete_for_runs_removes_write_rows: DeleteForRuns,
                delete_for_runs_survivor_has_no_parent: DeleteForRuns,
                prune_keep_latest_removes_write_rows: Prune,
                prune_delete_removes_write_rows: Prune,
                prune_survivor_has_no_parent: Prune,
                unstorable_keys_are_refused: PutWrites,
            }
            fence {
                put_behind_the_head_conflicts: Fence,
                put_without_parent_into_a_used_namespace_conflicts: Fence,
                branch_put_is_admitted: Fence,
                retried_put_is_admitted: Fence,
                namespaces_are_fenced_apart: Fence,
                writes_behind_the_head_conflict: Fence,
                different_result_for_a_stored_task_conflicts: Fence,
                batch_stops_at_the_refused_op: Fence,
            }
        }
    };
}
