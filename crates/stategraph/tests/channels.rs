//! The channel types against LangGraph's rules (docs/runtime.md#channel-types), one rule per test.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use stategraph::channels::{
    AnyValue, BinaryOperatorAggregate, Channel, ChannelError, EphemeralValue, LastValue,
    LastValueAfterFinish, NamedBarrierValue, NamedBarrierValueAfterFinish, Reducer, Topic,
    UntrackedValue,
};
use stategraph_checkpoint::{list, map, Ext, ObjectCode, Value};

const CONCURRENT_HINT: &str = "\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE";

fn s(text: &str) -> Value {
    Value::from(text)
}

fn invalid_update(err: ChannelError) -> String {
    match err {
        ChannelError::InvalidUpdate(text) => text,
        other => panic!("expected InvalidUpdate, got {other:?}"),
    }
}

/// Restores a channel of the same spec from its own checkpoint.
fn round_trip(channel: &dyn Channel) -> Box<dyn Channel> {
    channel.from_checkpoint(channel.checkpoint()).unwrap()
}

/// A Python `set` (or `frozenset`) extension with the given items, in order.
fn py_set(class: &str, items: &[&str]) -> Value {
    Value::from(Ext::object(
        ObjectCode::ConstructorSingleArg,
        "builtins",
        class,
        Value::List(items.iter().map(|i| s(i)).collect()),
        None,
    ))
}

/// `operator.add` on lists and integers.
fn add() -> Reducer {
    Arc::new(|left, right| match (left, right) {
        (Value::List(mut a), Value::List(b)) => {
            a.extend(b);
            Ok(Value::List(a))
        }
        (Value::Int(a), Value::Int(b)) => Ok(Value::Int(a + b)),
        (a, b) => Err(ChannelError::Reducer(format!("cannot add {a:?} and {b:?}"))),
    })
}

fn list_aggregate() -> BinaryOperatorAggregate {
    BinaryOperatorAggregate::new(add(), Some(list![]))
}

// ---------------------------------------------------------------- LastValue

#[test]
fn last_value_starts_empty_and_ignores_an_empty_update() {
    let mut c = LastValue::new();
    assert_eq!(c.kind(), "LastValue");
    assert!(!c.is_available());
    assert_eq!(c.get(), None);
    assert!(!c.update(vec![]).unwrap());
    assert!(!c.is_available());
}

#[test]
fn last_value_takes_one_value_per_step_and_keeps_it_across_empty_updates() {
    let mut c = LastValue::new();
    assert!(c.update(vec![s("a")]).unwrap());
    assert!(c.is_available());
    assert_eq!(c.get(), Some(s("a")));
    assert!(!c.update(vec![]).unwrap());
    assert_eq!(c.get(), Some(s("a")));
    assert!(c.update(vec![s("b")]).unwrap());
    assert_eq!(c.get(), Some(s("b")));
}

#[test]
fn last_value_rejects_two_values_in_one_step_with_langgraph_text() {
    let mut c = LastValue::new();
    c.update(vec![s("a")]).unwrap();
    let err = c.update(vec![s("b"), s("c")]).unwrap_err();
    assert_eq!(
        invalid_update(err),
        format!("Can receive only one value per step. Use an Annotated key to handle multiple values.{CONCURRENT_HINT}")
    );
    assert_eq!(c.get(), Some(s("a")));
}

#[test]
fn last_value_consume_and_finish_change_nothing() {
    let mut c = LastValue::new();
    c.update(vec![s("a")]).unwrap();
    assert!(!c.consume());
    assert!(!c.finish());
    assert_eq!(c.get(), Some(s("a")));
}

#[test]
fn last_value_checkpoints_its_value_or_nothing() {
    let mut c = LastValue::new();
    assert_eq!(c.checkpoint(), None);
    c.update(vec![map! { "k" => 1 }]).unwrap();
    assert_eq!(c.checkpoint(), Some(map! { "k" => 1 }));
    let restored = round_trip(&c);
    assert_eq!(restored.kind(), "LastValue");
    assert_eq!(restored.get(), Some(map! { "k" => 1 }));
    assert!(!round_trip(&LastValue::new()).is_available());
}

#[test]
fn last_value_holding_none_is_available() {
    let mut c = LastValue::new();
    c.update(vec![Value::Nil]).unwrap();
    assert!(c.is_available());
    assert_eq!(c.checkpoint(), Some(Value::Nil));
    assert_eq!(round_trip(&c).get(), Some(Value::Nil));
}

// ---------------------------------------------------- LastValueAfterFinish

#[test]
fn last_value_after_finish_hides_its_value_until_finish() {
    let mut c = LastValueAfterFinish::new();
    assert_eq!(c.kind(), "LastValueAfterFinish");
    assert!(!c.update(vec![]).unwrap());
    assert!(c.update(vec![s("a"), s("b")]).unwrap());
    assert!(!c.is_available());
    assert_eq!(c.get(), None);
    assert!(c.finish());
    assert!(c.is_available());
    assert_eq!(c.get(), Some(s("b")));
    assert!(!c.finish());
}

#[test]
fn last_value_after_finish_finish_does_nothing_when_empty() {
    let mut c = LastValueAfterFinish::new();
    assert!(!c.finish());
    assert!(!c.is_available());
}

#[test]
fn last_value_after_finish_consume_clears_only_a_finished_value() {
    let mut c = LastValueAfterFinish::new();
    c.update(vec![s("a")]).unwrap();
    assert!(!c.consume());
    assert_eq!(c.checkpoint(), Some(list!["a", false]));
    c.finish();
    assert!(c.consume());
    assert!(!c.is_available());
    assert_eq!(c.checkpoint(), None);
    assert!(!c.consume());
}

#[test]
fn last_value_after_finish_a_new_write_unfinishes_it() {
    let mut c = LastValueAfterFinish::new();
    c.update(vec![s("a")]).unwrap();
    c.finish();
    assert!(c.update(vec![s("b")]).unwrap());
    assert!(!c.is_available());
    assert_eq!(c.checkpoint(), Some(list!["b", false]));
}

#[test]
fn last_value_after_finish_checkpoints_the_pair_value_finished() {
    let mut c = LastValueAfterFinish::new();
    assert_eq!(c.checkpoint(), None);
    c.update(vec![s("x")]).unwrap();
    c.finish();
    assert_eq!(c.checkpoint(), Some(list!["x", true]));
    let restored = round_trip(&c);
    assert!(restored.is_available());
    assert_eq!(restored.get(), Some(s("x")));
    assert_eq!(restored.checkpoint(), Some(list!["x", true]));
    assert!(!round_trip(&LastValueAfterFinish::new()).is_available());
}

#[test]
fn last_value_after_finish_rejects_a_stored_value_that_is_not_a_pair() {
    let spec = LastValueAfterFinish::new();
    for bad in [s("x"), list!["x"], list!["x", true, 1], list!["x", "yes"]] {
        let err = spec.from_checkpoint(Some(bad)).unwrap_err();
        assert!(matches!(err, ChannelError::InvalidCheckpoint(_)), "{err:?}");
    }
}

// ---------------------------------------------------------------- AnyValue

#[test]
fn any_value_keeps_the_last_of_several_values() {
    let mut c = AnyValue::new();
    assert_eq!(c.kind(), "AnyValue");
    assert!(!c.update(vec![]).unwrap());
    assert!(c.update(vec![s("a"), s("b")]).unwrap());
    assert_eq!(c.get(), Some(s("b")));
    assert!(!c.consume());
    assert!(!c.finish());
}

#[test]
fn any_value_is_cleared_by_an_empty_update() {
    let mut c = AnyValue::new();
    c.update(vec![s("a")]).unwrap();
    assert!(c.update(vec![]).unwrap());
    assert!(!c.is_available());
    assert_eq!(c.checkpoint(), None);
    assert!(!c.update(vec![]).unwrap());
}

#[test]
fn any_value_round_trips_through_a_checkpoint() {
    let mut c = AnyValue::new();
    c.update(vec![Value::Int(7)]).unwrap();
    assert_eq!(c.checkpoint(), Some(Value::Int(7)));
    assert_eq!(round_trip(&c).get(), Some(Value::Int(7)));
}

// ---------------------------------------------------------- EphemeralValue

#[test]
fn ephemeral_value_is_cleared_by_the_next_empty_update() {
    let mut c = EphemeralValue::new(true);
    assert_eq!(c.kind(), "EphemeralValue");
    assert!(!c.update(vec![]).unwrap());
    assert!(c.update(vec![s("in")]).unwrap());
    assert_eq!(c.get(), Some(s("in")));
    assert!(!c.consume());
    assert!(!c.finish());
    assert!(c.update(vec![]).unwrap());
    assert!(!c.is_available());
    assert_eq!(c.checkpoint(), None);
    assert!(!c.update(vec![]).unwrap());
}

#[test]
fn ephemeral_value_with_guard_rejects_two_values_with_langgraph_text() {
    let mut c = EphemeralValue::new(true);
    let err = c.update(vec![s("a"), s("b")]).unwrap_err();
    assert_eq!(
        invalid_update(err),
        "EphemeralValue(guard=True) can receive only one value per step. Use guard=False if you want to store any one of multiple values."
    );
    assert!(!c.is_available());
}

#[test]
fn ephemeral_value_without_guard_keeps_the_last_value() {
    let mut c = EphemeralValue::new(false);
    assert!(!c.guard());
    assert!(c.update(vec![s("a"), s("b")]).unwrap());
    assert_eq!(c.get(), Some(s("b")));
}

#[test]
fn ephemeral_value_round_trips_and_keeps_its_guard() {
    let mut c = EphemeralValue::new(false);
    c.update(vec![s("a")]).unwrap();
    assert_eq!(c.checkpoint(), Some(s("a")));
    let mut restored = round_trip(&c);
    assert_eq!(restored.get(), Some(s("a")));
    // guard = false survives: several values are accepted.
    assert!(restored.update(vec![s("b"), s("c")]).unwrap());
    let mut guarded = EphemeralValue::new(true).from_checkpoint(None).unwrap();
    assert!(!guarded.is_available());
    assert!(guarded.update(vec![s("b"), s("c")]).is_err());
}

// ---------------------------------------------------------- UntrackedValue

#[test]
fn untracked_value_never_checkpoints() {
    let mut c = UntrackedValue::new(true);
    assert_eq!(c.kind(), "UntrackedValue");
    assert!(c.update(vec![s("a")]).unwrap());
    assert_eq!(c.get(), Some(s("a")));
    assert_eq!(c.checkpoint(), None);
    let restored = c.from_checkpoint(Some(s("stored"))).unwrap();
    assert!(!restored.is_available());
}

#[test]
fn untracked_value_keeps_its_value_across_empty_updates() {
    let mut c = UntrackedValue::new(false);
    assert!(!c.update(vec![]).unwrap());
    c.update(vec![s("a")]).unwrap();
    assert!(!c.update(vec![]).unwrap());
    assert_eq!(c.get(), Some(s("a")));
    assert!(!c.consume());
    assert!(!c.finish());
}

#[test]
fn untracked_value_with_guard_rejects_two_values_with_langgraph_text() {
    let mut c = UntrackedValue::new(true);
    let err = c.update(vec![s("a"), s("b")]).unwrap_err();
    assert_eq!(
        invalid_update(err),
        "UntrackedValue(guard=True) can receive only one value per step. Use guard=False if you want to store any one of multiple values."
    );
    let mut unguarded = UntrackedValue::new(false);
    assert!(unguarded.update(vec![s("a"), s("b")]).unwrap());
    assert_eq!(unguarded.get(), Some(s("b")));
}

#[test]
fn untracked_value_copy_keeps_the_value() {
    let mut c = UntrackedValue::new(true);
    c.update(vec![s("a")]).unwrap();
    let copy = c.clone_box();
    assert_eq!(copy.get(), Some(s("a")));
}

// ------------------------------------------------------------------- Topic

#[test]
fn topic_flattens_written_lists_one_level() {
    let mut c = Topic::new(false);
    assert_eq!(c.kind(), "Topic");
    assert!(c
        .update(vec![s("a"), list!["b", "c"], list![list!["d"]]])
        .unwrap());
    assert_eq!(c.get(), Some(list!["a", "b", "c", list!["d"]]));
}

#[test]
fn topic_without_accumulate_is_emptied_by_the_next_update() {
    let mut c = Topic::new(false);
    assert!(!c.update(vec![]).unwrap());
    c.update(vec![s("a")]).unwrap();
    assert!(c.update(vec![s("b")]).unwrap());
    assert_eq!(c.get(), Some(list!["b"]));
    assert!(c.update(vec![]).unwrap());
    assert!(!c.is_available());
    assert_eq!(c.get(), None);
    assert!(!c.update(vec![]).unwrap());
}

#[test]
fn topic_with_accumulate_keeps_values_across_steps() {
    let mut c = Topic::new(true);
    assert!(c.accumulate());
    assert!(c.update(vec![s("a")]).unwrap());
    assert!(!c.update(vec![]).unwrap());
    assert!(!c.update(vec![list![]]).unwrap());
    assert!(c.update(vec![list!["b"]]).unwrap());
    assert_eq!(c.get(), Some(list!["a", "b"]));
    assert!(!c.consume());
    assert!(!c.finish());
}

#[test]
fn topic_checkpoints_its_list_even_when_empty() {
    let mut c = Topic::new(false);
    assert_eq!(c.checkpoint(), Some(list![]));
    c.update(vec![s("a")]).unwrap();
    assert_eq!(c.checkpoint(), Some(list!["a"]));
    c.update(vec![]).unwrap();
    assert_eq!(c.checkpoint(), Some(list![]));
}

#[test]
fn topic_round_trips_and_keeps_accumulate() {
    let mut c = Topic::new(true);
    c.update(vec![s("a"), s("b")]).unwrap();
    let mut restored = round_trip(&c);
    assert_eq!(restored.get(), Some(list!["a", "b"]));
    restored.update(vec![s("c")]).unwrap();
    assert_eq!(restored.get(), Some(list!["a", "b", "c"]));
    assert!(!Topic::new(false)
        .from_checkpoint(None)
        .unwrap()
        .is_available());
}

#[test]
fn topic_reads_the_legacy_seen_values_pair() {
    let legacy = Value::list(vec![py_set("set", &["x"]), list!["x", "y"]]);
    let restored = Topic::new(true).from_checkpoint(Some(legacy)).unwrap();
    assert_eq!(restored.get(), Some(list!["x", "y"]));
}

#[test]
fn topic_keeps_a_stored_two_item_list_that_is_not_the_legacy_pair() {
    let stored = list![list!["a"], list!["b"]];
    let restored = Topic::new(true)
        .from_checkpoint(Some(stored.clone()))
        .unwrap();
    assert_eq!(restored.checkpoint(), Some(stored));
}

#[test]
fn topic_rejects_a_stored_value_that_is_not_a_list() {
    let err = Topic::new(false).from_checkpoint(Some(s("x"))).unwrap_err();
    assert!(matches!(err, ChannelError::InvalidCheckpoint(_)));
}

// ------------------------------------------------- BinaryOperatorAggregate

#[test]
fn aggregate_starts_with_its_initial_value() {
    let c = list_aggregate();
    assert_eq!(c.kind(), "BinaryOperatorAggregate");
    assert!(c.is_available());
    assert_eq!(c.get(), Some(list![]));
    assert_eq!(c.checkpoint(), Some(list![]));
    let missing = BinaryOperatorAggregate::new(add(), None);
    assert!(!missing.is_available());
    assert_eq!(missing.checkpoint(), None);
}

#[test]
fn aggregate_folds_writes_in_order_with_its_reducer() {
    let mut c = list_aggregate();
    assert!(!c.update(vec![]).unwrap());
    assert!(c.update(vec![list!["a"], list!["b", "c"]]).unwrap());
    assert!(c.update(vec![list!["d"]]).unwrap());
    assert_eq!(c.get(), Some(list!["a", "b", "c", "d"]));
    assert!(!c.consume());
    assert!(!c.finish());
}

#[test]
fn aggregate_without_initial_value_takes_the_first_write_as_is() {
    let mut c = BinaryOperatorAggregate::new(add(), None);
    assert!(c.update(vec![Value::Int(2), Value::Int(3)]).unwrap());
    assert_eq!(c.get(), Some(Value::Int(5)));
    // Even an overwrite is stored verbatim when it is the first value of an empty channel.
    let mut c = BinaryOperatorAggregate::new(add(), None);
    c.update(vec![map! { "__overwrite__" => list![1] }])
        .unwrap();
    assert_eq!(c.get(), Some(map! { "__overwrite__" => list![1] }));
}

#[test]
fn aggregate_single_key_overwrite_replaces_the_value() {
    let mut c = list_aggregate();
    c.update(vec![list!["a"]]).unwrap();
    assert!(c
        .update(vec![list!["b"], map! { "__overwrite__" => list!["z"] }])
        .unwrap());
    assert_eq!(c.get(), Some(list!["z"]));
}

#[test]
fn aggregate_tagged_map_overwrite_replaces_the_value() {
    let mut c = list_aggregate();
    c.update(vec![list!["a"]]).unwrap();
    let tagged = map! { "type" => "__overwrite__", "value" => list!["z"], "extra" => 1 };
    c.update(vec![tagged]).unwrap();
    assert_eq!(c.get(), Some(list!["z"]));
}

#[test]
fn aggregate_overwrite_object_replaces_the_value() {
    let mut c = list_aggregate();
    c.update(vec![list!["a"]]).unwrap();
    // `langgraph.types.Overwrite(value=["z"])` as JsonPlusSerializer stores it.
    let object = Value::from(Ext::object(
        ObjectCode::ConstructorKwArgs,
        "langgraph.types",
        "Overwrite",
        map! { "value" => list!["z"], "type" => "__overwrite__" },
        None,
    ));
    c.update(vec![object]).unwrap();
    assert_eq!(c.get(), Some(list!["z"]));
}

#[test]
fn aggregate_ignores_plain_writes_after_an_overwrite_in_the_same_step() {
    let mut c = list_aggregate();
    c.update(vec![
        list!["a"],
        map! { "__overwrite__" => list!["z"] },
        list!["b"],
    ])
    .unwrap();
    assert_eq!(c.get(), Some(list!["z"]));
    // The next step folds again.
    c.update(vec![list!["c"]]).unwrap();
    assert_eq!(c.get(), Some(list!["z", "c"]));
}

#[test]
fn aggregate_rejects_two_overwrites_in_one_step_and_stays_unchanged() {
    let mut c = list_aggregate();
    c.update(vec![list!["a"]]).unwrap();
    let err = c
        .update(vec![
            map! { "__overwrite__" => list!["x"] },
            map! { "type" => "__overwrite__", "value" => list!["y"] },
        ])
        .unwrap_err();
    assert_eq!(
        invalid_update(err),
        format!("Can receive only one Overwrite value per super-step.{CONCURRENT_HINT}")
    );
    assert_eq!(c.get(), Some(list!["a"]));
}

#[test]
fn aggregate_treats_other_maps_as_plain_values() {
    let merge: Reducer = Arc::new(|_, right| Ok(right));
    let mut c = BinaryOperatorAggregate::new(merge, Some(map! {}));
    let not_single = map! { "__overwrite__" => 1, "other" => 2 };
    let no_value = map! { "type" => "__overwrite__" };
    c.update(vec![not_single.clone()]).unwrap();
    assert_eq!(c.get(), Some(not_single));
    c.update(vec![no_value.clone()]).unwrap();
    assert_eq!(c.get(), Some(no_value));
}

#[test]
fn aggregate_reports_a_reducer_error_and_stays_unchanged() {
    let mut c = list_aggregate();
    c.update(vec![list!["a"]]).unwrap();
    let err = c.update(vec![list!["b"], Value::Int(1)]).unwrap_err();
    assert!(matches!(err, ChannelError::Reducer(_)), "{err:?}");
    assert_eq!(c.get(), Some(list!["a"]));
}

#[test]
fn aggregate_restores_its_initial_value_when_nothing_was_stored() {
    let mut c = list_aggregate();
    c.update(vec![list!["a"]]).unwrap();
    let restored = c.from_checkpoint(None).unwrap();
    assert_eq!(restored.get(), Some(list![]));
    let missing = BinaryOperatorAggregate::new(add(), None);
    assert!(!missing.from_checkpoint(None).unwrap().is_available());
}

#[test]
fn aggregate_round_trips_and_keeps_its_reducer() {
    let mut c = list_aggregate();
    c.update(vec![list!["a"]]).unwrap();
    let mut restored = round_trip(&c);
    assert_eq!(restored.get(), Some(list!["a"]));
    restored.update(vec![list!["b"]]).unwrap();
    assert_eq!(restored.get(), Some(list!["a", "b"]));
    // The copy is independent of the original.
    assert_eq!(c.get(), Some(list!["a"]));
}

#[test]
fn aggregate_unwraps_a_delta_snapshot() {
    let snapshot = Value::from(Ext::DeltaSnapshot(list!["a", "b"]));
    let restored = list_aggregate().from_checkpoint(Some(snapshot)).unwrap();
    assert_eq!(restored.get(), Some(list!["a", "b"]));
}

// ------------------------------------------------------- NamedBarrierValue

fn join() -> NamedBarrierValue {
    NamedBarrierValue::new(vec!["left".to_owned(), "right".to_owned()])
}

#[test]
fn barrier_is_available_once_every_name_arrived() {
    let mut c = join();
    assert_eq!(c.kind(), "NamedBarrierValue");
    assert!(!c.update(vec![]).unwrap());
    assert!(c.update(vec![s("right")]).unwrap());
    assert!(!c.is_available());
    assert_eq!(c.get(), None);
    assert!(!c.update(vec![s("right")]).unwrap());
    assert!(c.update(vec![s("left"), s("right")]).unwrap());
    assert!(c.is_available());
    assert_eq!(c.get(), Some(Value::Nil));
    assert!(!c.finish());
}

#[test]
fn barrier_rejects_a_value_that_is_not_a_name_with_langgraph_text() {
    let mut c = join();
    let err = c.update(vec![s("left"), s("up")]).unwrap_err();
    assert_eq!(invalid_update(err), "Value up not in {'left', 'right'}");
    assert!(c.seen().is_empty());
    let err = c.update(vec![Value::Int(3)]).unwrap_err();
    assert_eq!(invalid_update(err), "Value 3 not in {'left', 'right'}");
    let mut none = NamedBarrierValue::new(vec![]);
    let err = none.update(vec![s("it's")]).unwrap_err();
    assert_eq!(invalid_update(err), "Value it's not in set()");
}

#[test]
fn barrier_consume_resets_only_a_complete_barrier() {
    let mut c = join();
    c.update(vec![s("left")]).unwrap();
    assert!(!c.consume());
    assert_eq!(c.seen(), &[s("left")]);
    c.update(vec![s("right")]).unwrap();
    assert!(c.consume());
    assert!(c.seen().is_empty());
    assert!(!c.is_available());
}

#[test]
fn barrier_checkpoints_seen_as_a_python_set_in_arrival_order() {
    let mut c = join();
    assert_eq!(c.checkpoint(), Some(py_set("set", &[])));
    c.update(vec![s("right")]).unwrap();
    c.update(vec![s("left")]).unwrap();
    // golden join.json: c71a0093a86275696c74696e73a373657492a57269676874a46c656674
    assert_eq!(c.checkpoint(), Some(py_set("set", &["right", "left"])));
}

#[test]
fn barrier_restores_a_set_a_frozenset_or_a_list() {
    for stored in [
        py_set("set", &["right", "left"]),
        py_set("frozenset", &["right", "left"]),
        list!["right", "left"],
    ] {
        let restored = join().from_checkpoint(Some(stored)).unwrap();
        assert!(restored.is_available());
        assert_eq!(
            restored.checkpoint(),
            Some(py_set("set", &["right", "left"]))
        );
    }
    let partial = join()
        .from_checkpoint(Some(py_set("set", &["left"])))
        .unwrap();
    assert!(!partial.is_available());
    assert!(!join().from_checkpoint(None).unwrap().is_available());
}

#[test]
fn barrier_rejects_a_stored_value_that_is_not_a_set() {
    let err = join().from_checkpoint(Some(s("left"))).unwrap_err();
    assert!(matches!(err, ChannelError::InvalidCheckpoint(_)));
}

// -------------------------------------------- NamedBarrierValueAfterFinish

fn deferred_join() -> NamedBarrierValueAfterFinish {
    NamedBarrierValueAfterFinish::new(vec!["left".to_owned(), "right".to_owned()])
}

#[test]
fn deferred_barrier_waits_for_finish_after_completing() {
    let mut c = deferred_join();
    assert_eq!(c.kind(), "NamedBarrierValueAfterFinish");
    c.update(vec![s("left")]).unwrap();
    assert!(!c.finish());
    c.update(vec![s("right")]).unwrap();
    assert!(!c.is_available());
    assert_eq!(c.get(), None);
    assert!(!c.consume());
    assert!(c.finish());
    assert!(c.is_available());
    assert_eq!(c.get(), Some(Value::Nil));
    assert!(!c.finish());
    assert!(c.consume());
    assert!(!c.is_available());
    assert!(c.seen().is_empty());
}

#[test]
fn deferred_barrier_rejects_a_value_that_is_not_a_name() {
    let mut c = deferred_join();
    let err = c.update(vec![s("up")]).unwrap_err();
    assert_eq!(invalid_update(err), "Value up not in {'left', 'right'}");
}

#[test]
fn deferred_barrier_checkpoints_the_pair_seen_finished() {
    let mut c = deferred_join();
    assert_eq!(
        c.checkpoint(),
        Some(Value::list(vec![py_set("set", &[]), Value::Bool(false)]))
    );
    c.update(vec![s("left"), s("right")]).unwrap();
    c.finish();
    let stored = Value::list(vec![py_set("set", &["left", "right"]), Value::Bool(true)]);
    assert_eq!(c.checkpoint(), Some(stored.clone()));
    let restored = deferred_join().from_checkpoint(Some(stored)).unwrap();
    assert!(restored.is_available());
    let err = deferred_join()
        .from_checkpoint(Some(py_set("set", &[])))
        .unwrap_err();
    assert!(matches!(err, ChannelError::InvalidCheckpoint(_)));
}

// -------------------------------------------------------------- all types

#[test]
fn every_channel_copy_is_independent_of_the_original() {
    let channels: Vec<(Box<dyn Channel>, Value)> = vec![
        (Box::new(LastValue::new()), s("a")),
        (Box::new(AnyValue::new()), s("a")),
        (Box::new(EphemeralValue::new(true)), s("a")),
        (Box::new(UntrackedValue::new(true)), s("a")),
        (Box::new(Topic::new(true)), s("a")),
        (Box::new(list_aggregate()), list!["a"]),
        (
            Box::new(NamedBarrierValue::new(vec!["left".to_owned()])),
            s("left"),
        ),
    ];
    for (original, write) in channels {
        let before = original.checkpoint();
        let mut copy = original.clone();
        assert!(copy.update(vec![write]).unwrap(), "{}", original.kind());
        assert_eq!(original.checkpoint(), before, "{}", original.kind());
        assert_ne!(copy.get(), original.get(), "{}", original.kind());
    }
}

// ----------------------------------------------------------- stored bytes

fn stored_hex(channel: &dyn Channel) -> String {
    let value = channel.checkpoint().unwrap();
    hex::encode(stategraph_checkpoint::serde::msgpack::encode(&value).unwrap())
}

#[test]
fn stored_shapes_encode_to_the_bytes_langgraph_writes() {
    // Expected bytes from JsonPlusSerializer in the pinned venv.
    assert_eq!(stored_hex(&Topic::new(false)), "90");

    let mut after_finish = LastValueAfterFinish::new();
    after_finish.update(vec![s("x")]).unwrap();
    after_finish.finish();
    assert_eq!(stored_hex(&after_finish), "92a178c3");

    let one = || vec!["left".to_owned()];
    assert_eq!(
        stored_hex(&NamedBarrierValue::new(one())),
        "c70f0093a86275696c74696e73a373657490"
    );
    let mut deferred = NamedBarrierValueAfterFinish::new(one());
    assert_eq!(
        stored_hex(&deferred),
        "92c70f0093a86275696c74696e73a373657490c2"
    );
    deferred.update(vec![s("left")]).unwrap();
    deferred.finish();
    assert_eq!(
        stored_hex(&deferred),
        "92c7140093a86275696c74696e73a373657491a46c656674c3"
    );
}

#[test]
fn barrier_restores_and_rewrites_the_golden_join_set_byte_for_byte() {
    // golden join.json: the `join:left+right:join` blob, the set written as ["right", "left"].
    let golden = "c71a0093a86275696c74696e73a373657492a57269676874a46c656674";
    let stored =
        stategraph_checkpoint::serde::msgpack::decode(&hex::decode(golden).unwrap()).unwrap();
    let restored = join().from_checkpoint(Some(stored)).unwrap();
    assert!(restored.is_available());
    assert_eq!(stored_hex(restored.as_ref()), golden);
}
