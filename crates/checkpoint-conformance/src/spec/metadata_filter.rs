//! `list` filters on maps, lists and `None`: the one meaning every saver gives a filter.
//!
//! LangGraph's three savers disagree on these filters (docs/format.md#metadata-filters has
//! the table of the pinned Python's answers): its `PostgresSaver` tests containment
//! (`{"nested": {}}` matches every `nested` map, `[1]` every list holding `1`), its
//! in-memory and SQLite savers equality. Every stategraph saver answers by equality, the
//! meaning of [`ListOptions::matches`]: maps in any key order, numbers by value at any
//! depth, lists element by element, and `None` matching a `null` or a missing key (as
//! Python's in-memory and SQLite savers do).
//!
//! Each behaviour stores one chained thread whose checkpoints carry a metadata `row` name
//! and the value under test, and compares the names a filter lists with the expected ones.

use std::collections::BTreeSet;

use stategraph_checkpoint::{list, map, CheckpointMetadata, CheckpointSaver, ListOptions, Value};

use crate::fixtures::{self, loop_step, put_chain, root, uuid4};
use crate::Failure;

/// The rows of every behaviour: a name and the metadata pairs it adds to `{source, step}`.
fn rows() -> Vec<(&'static str, Vec<(&'static str, Value)>)> {
    vec![
        ("obj_empty", vec![("nested", map! {})]),
        ("obj_a1", vec![("nested", map! { "a" => 1 })]),
        ("obj_a1f", vec![("nested", map! { "a" => 1.0 })]),
        ("obj_a1b2", vec![("nested", map! { "a" => 1, "b" => 2 })]),
        ("obj_b2a1", vec![("nested", map! { "b" => 2, "a" => 1 })]),
        (
            "obj_deep",
            vec![("nested", map! { "a" => map! { "c" => 1 }, "b" => 2 })],
        ),
        ("nested_list", vec![("nested", list![])]),
        ("arr_empty", vec![("arr", list![])]),
        ("arr_1", vec![("arr", list![1])]),
        ("arr_12", vec![("arr", list![1, 2])]),
        ("arr_21", vec![("arr", list![2, 1])]),
        ("arr_scalar", vec![("arr", Value::from(1))]),
        ("null", vec![("n", Value::Nil), ("nested", Value::Nil)]),
        ("missing", vec![]),
        ("x_int", vec![("x", Value::from(1))]),
        ("x_true", vec![("x", Value::from(true))]),
    ]
}

/// Stores [`rows`] as one chained thread and returns it.
async fn fixture(saver: &dyn CheckpointSaver) -> Result<String, Failure> {
    let thread = uuid4();
    let rows = rows();
    put_chain(saver, &thread, "", rows.len(), |i| {
        let (name, pairs) = &rows[i];
        let md: CheckpointMetadata = loop_step(i).with("row", *name);
        pairs.iter().fold(md, |md, (k, v)| md.with(*k, v.clone()))
    })
    .await?;
    Ok(thread)
}

/// Fails unless `filter` on the fixture's thread lists exactly the rows `want`.
async fn expect_rows(
    saver: &dyn CheckpointSaver,
    thread: &str,
    key: &str,
    value: Value,
    want: &[&str],
) -> Result<(), Failure> {
    let options = ListOptions::default().filter(key, value.clone());
    let got: BTreeSet<String> = fixtures::list(saver, &root(thread), &options)
        .await?
        .iter()
        .map(|t| match t.metadata.get("row") {
            Some(Value::Str(s)) => s.to_string(),
            other => format!("<row {other:?}>"),
        })
        .collect();
    let want: BTreeSet<String> = want.iter().map(|s| (*s).to_owned()).collect();
    ensure_eq!(
        got,
        want,
        "rows listed with the filter {{{key:?}: {value:?}}}"
    );
    Ok(())
}

/// `{"nested": {}}` lists only the empty map, not every map (no containment).
pub async fn empty_map_matches_only_an_empty_map(
    saver: &dyn CheckpointSaver,
) -> Result<(), Failure> {
    let thread = fixture(saver).await?;
    expect_rows(saver, &thread, "nested", map! {}, &["obj_empty"]).await
}

/// A map filter equals the stored map: same keys whatever their order, numbers by value
/// at any depth, no partial match of a larger or deeper map.
pub async fn nested_maps_compare_by_equality(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = fixture(saver).await?;
    let one = ["obj_a1", "obj_a1f"];
    expect_rows(saver, &thread, "nested", map! { "a" => 1 }, &one).await?;
    expect_rows(saver, &thread, "nested", map! { "a" => 1.0 }, &one).await?;
    let both = ["obj_a1b2", "obj_b2a1"];
    expect_rows(saver, &thread, "nested", map! { "a" => 1, "b" => 2 }, &both).await?;
    let deeper = map! { "a" => map! {} };
    expect_rows(saver, &thread, "nested", deeper, &[]).await?;
    let deep = map! { "b" => 2, "a" => map! { "c" => 1.0 } };
    expect_rows(saver, &thread, "nested", deep, &["obj_deep"]).await
}

/// A list filter equals the stored list element by element, in order; a scalar never
/// matches a list holding it.
pub async fn lists_compare_by_equality(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = fixture(saver).await?;
    expect_rows(saver, &thread, "arr", list![], &["arr_empty"]).await?;
    expect_rows(saver, &thread, "arr", list![1], &["arr_1"]).await?;
    expect_rows(saver, &thread, "arr", list![1, 2], &["arr_12"]).await?;
    expect_rows(saver, &thread, "arr", Value::from(1), &["arr_scalar"]).await?;
    expect_rows(saver, &thread, "nested", list![], &["nested_list"]).await
}

/// `None` lists the rows holding `null` under the key and the rows without the key.
pub async fn none_matches_null_and_missing_keys(
    saver: &dyn CheckpointSaver,
) -> Result<(), Failure> {
    let thread = fixture(saver).await?;
    let all: Vec<&str> = rows().iter().map(|(name, _)| *name).collect();
    expect_rows(saver, &thread, "n", Value::Nil, &all).await?;
    let without_nested: Vec<&str> = rows()
        .into_iter()
        .filter(|(_, pairs)| {
            pairs
                .iter()
                .all(|(k, v)| *k != "nested" || matches!(v, Value::Nil))
        })
        .map(|(name, _)| name)
        .collect();
    expect_rows(saver, &thread, "nested", Value::Nil, &without_nested).await
}

/// Booleans are not numbers: `true` does not match `1` (where Python's `True == 1`).
pub async fn booleans_are_not_numbers(saver: &dyn CheckpointSaver) -> Result<(), Failure> {
    let thread = fixture(saver).await?;
    expect_rows(saver, &thread, "x", Value::from(1), &["x_int"]).await?;
    expect_rows(saver, &thread, "x", Value::from(true), &["x_true"]).await
}
