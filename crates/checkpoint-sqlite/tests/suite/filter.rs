//! `list` filters: any key, hostile or not, names exactly that top-level key; values are
//! bound parameters; nothing in a filter can change the query or the data.

use std::collections::BTreeSet;

use stategraph_checkpoint::{
    list, map, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource,
    ListOptions, Value,
};

use super::support::{count, TempSaver};

/// Keys that would change the meaning of a query or a JSON path if they were pasted in.
const HOSTILE_KEYS: &[&str] = &[
    "'",
    "\"",
    "')",
    "--",
    "'; DROP TABLE checkpoints; --",
    "a') OR 1=1 --",
    "\") OR 1=1 --",
    "$.a",
    "$",
    "a.b",
    "a[0]",
    "[0]",
    "*",
    "a\"]",
    "\\",
    "\\u0061",
    "a\u{0}b",
    "",
    " a",
    "é",
    "a\nb",
    "%",
    "_",
];

/// Puts one checkpoint in `thread` with `metadata` (source loop, step 0 first).
async fn put(
    saver: &dyn CheckpointSaver,
    thread: &str,
    n: usize,
    extra: &[(&str, Value)],
) -> String {
    let id = format!("1ef00000-0000-6000-8000-{n:012}");
    let mut md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    for (k, v) in extra {
        md.extra.insert((*k).to_owned(), v.clone());
    }
    saver
        .put(
            &CheckpointConfig::thread(thread),
            &Checkpoint::empty(id.as_str(), "2025-01-01T00:00:00+00:00"),
            &md,
            &Default::default(),
        )
        .await
        .expect("put");
    id
}

async fn ids(saver: &dyn CheckpointSaver, options: ListOptions) -> BTreeSet<String> {
    saver
        .list(None, &options)
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.checkpoint.id)
        .collect()
}

fn tables(conn: &rusqlite::Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master ORDER BY name")
        .expect("prepare");
    let rows = stmt.query_map([], |r| r.get(0)).expect("query");
    rows.map(|r| r.expect("name")).collect()
}

#[tokio::test]
async fn every_hostile_key_matches_only_its_own_checkpoint() {
    let saver = TempSaver::unfenced("hostile");
    let thread = "t";
    // Every checkpoint holds the same value "v", each under another key, so any key that
    // were read as a path, a pattern or SQL would find the wrong rows.
    let mut own = Vec::new();
    for (n, key) in HOSTILE_KEYS.iter().enumerate() {
        own.push(put(&*saver, thread, n, &[(key, Value::from("v"))]).await);
    }
    let base = HOSTILE_KEYS.len();
    let plain_a = put(&*saver, thread, base, &[("a", Value::from("v"))]).await;
    let nested = put(
        &*saver,
        thread,
        base + 1,
        &[("a", map! {"b" => "v", "0" => "v"})],
    )
    .await;
    let array = put(&*saver, thread, base + 2, &[("a", list!["v"])]).await;
    let config = CheckpointConfig::for_checkpoint(thread, "", array.as_str());
    let writes = [
        ("a".to_owned(), Value::from("v")),
        ("__error__".to_owned(), Value::from("v")),
    ];
    saver
        .put_writes(&config, &writes, "task", "")
        .await
        .expect("put_writes");
    let raw = saver.file.raw();
    let before = (
        count(&raw, "checkpoints"),
        count(&raw, "writes"),
        tables(&raw),
    );

    for (key, id) in HOSTILE_KEYS.iter().zip(&own) {
        let got = ids(&*saver, ListOptions::default().filter(*key, "v")).await;
        assert_eq!(got, BTreeSet::from([id.clone()]), "filter on key {key:?}");
    }
    let got = ids(&*saver, ListOptions::default().filter("a", "v")).await;
    assert_eq!(got, BTreeSet::from([plain_a]), "the plain key a");
    let got = ids(
        &*saver,
        ListOptions::default().filter("a", map! {"b" => "v", "0" => "v"}),
    )
    .await;
    assert_eq!(got, BTreeSet::from([nested]), "a map value");
    let got = ids(&*saver, ListOptions::default().filter("a", list!["v"])).await;
    assert_eq!(got, BTreeSet::from([array]), "a list value");

    let after = (
        count(&raw, "checkpoints"),
        count(&raw, "writes"),
        tables(&raw),
    );
    assert_eq!(before, after, "a filter changed the database");
    assert_eq!((after.0, after.1), ((HOSTILE_KEYS.len() + 3) as i64, 2));
}

/// SQLite's JSON path lookup ends a label at an escaped NUL, so `$."a"` would find the key
/// `"a\u0000b"` written before `"a"`; the filter must still see the real `a`.
#[tokio::test]
async fn a_key_with_a_nul_does_not_hide_its_prefix() {
    let saver = TempSaver::unfenced("nul");
    let both = put(
        &*saver,
        "t",
        0,
        &[("a\u{0}b", Value::from("w")), ("a", Value::from("v"))],
    )
    .await;
    let got = ids(&*saver, ListOptions::default().filter("a", "v")).await;
    assert_eq!(got, BTreeSet::from([both.clone()]));
    let got = ids(&*saver, ListOptions::default().filter("a\u{0}b", "w")).await;
    assert_eq!(got, BTreeSet::from([both]));
    assert!(ids(&*saver, ListOptions::default().filter("a", "w"))
        .await
        .is_empty());
}

#[tokio::test]
async fn hostile_values_are_plain_data() {
    let saver = TempSaver::unfenced("values");
    put(&*saver, "t", 0, &[("k", Value::from("v"))]).await;
    for value in [
        "v' OR '1'='1",
        "') OR 1=1 --",
        "'; DELETE FROM checkpoints; --",
        "%",
        "*",
    ] {
        let got = ids(&*saver, ListOptions::default().filter("k", value)).await;
        assert!(got.is_empty(), "value {value:?} matched {got:?}");
    }
    let raw = saver.file.raw();
    assert_eq!(count(&raw, "checkpoints"), 1);
}

#[tokio::test]
async fn values_compare_by_type_as_the_trait_says() {
    let saver = TempSaver::unfenced("types");
    let int = put(&*saver, "t", 0, &[("x", Value::Int(1))]).await;
    let float = put(&*saver, "t", 1, &[("x", Value::Float(1.0))]).await;
    let boolean = put(&*saver, "t", 2, &[("x", Value::Bool(true))]).await;
    let text = put(&*saver, "t", 3, &[("x", Value::from("1"))]).await;
    let null = put(&*saver, "t", 4, &[("x", Value::Nil)]).await;
    let missing = put(&*saver, "t", 5, &[]).await;
    let numbers = BTreeSet::from([int.clone(), float.clone()]);
    assert_eq!(
        ids(&*saver, ListOptions::default().filter("x", 1)).await,
        numbers
    );
    assert_eq!(
        ids(&*saver, ListOptions::default().filter("x", 1.0)).await,
        numbers
    );
    assert_eq!(
        ids(&*saver, ListOptions::default().filter("x", true)).await,
        BTreeSet::from([boolean])
    );
    assert_eq!(
        ids(&*saver, ListOptions::default().filter("x", "1")).await,
        BTreeSet::from([text])
    );
    assert_eq!(
        ids(&*saver, ListOptions::default().filter("x", Value::Nil)).await,
        BTreeSet::from([null, missing.clone()]),
        "None matches a null and a missing key"
    );
    assert!(ids(&*saver, ListOptions::default().filter("x", false))
        .await
        .is_empty());
    assert!(ids(
        &*saver,
        ListOptions::default().filter("x", Value::bytes(vec![1]))
    )
    .await
    .is_empty());
    assert!(ids(&*saver, ListOptions::default().filter("x", f64::NAN))
        .await
        .is_empty());
    // The standard keys filter the same way, and every key must match.
    let all = ids(
        &*saver,
        ListOptions::default()
            .filter("step", 0)
            .filter("source", "loop"),
    )
    .await;
    assert_eq!(all.len(), 6);
    assert!(all.contains(&missing));
}

#[tokio::test]
async fn limit_counts_matching_checkpoints_newest_first() {
    let saver = TempSaver::unfenced("limit");
    let mut evens = Vec::new();
    for n in 0..10 {
        let id = put(&*saver, "t", n, &[("even", Value::Bool(n % 2 == 0))]).await;
        if n % 2 == 0 {
            evens.push(id);
        }
    }
    let options = ListOptions::default().filter("even", true).limit(2);
    let got: Vec<String> = saver
        .list(Some(&CheckpointConfig::thread("t")), &options)
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.checkpoint.id)
        .collect();
    assert_eq!(got, vec![evens[4].clone(), evens[3].clone()]);
}
