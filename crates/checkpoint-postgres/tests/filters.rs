//! `list` metadata filters with hostile keys and values: only the intended rows come
//! back, and nothing in the database changes.
//!
//! Keys and values are those of SQL injection (quotes, `')`, `--`, a `DROP TABLE`), of
//! JSON-path tricks (`$.source`, `a.b`, `$[0]`), of the operator keys of CVE-2025-8709
//! (`$eq`, `$ne`, …) and of LIKE wildcards. Some rows really have such keys, so the tests
//! also show that a literal key matches literally.

use stategraph_checkpoint::{
    list, map, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource,
    ListOptions, Value,
};

use crate::support::TestDb;

const DROP: &str = "'); DROP TABLE checkpoints; --";

/// Four checkpoints on four threads; returns their ids in put order.
async fn seed(db: &TestDb) -> Vec<String> {
    let rows = [
        CheckpointMetadata::new(CheckpointSource::Loop, 1)
            .with("user", "alice")
            .with("score", 1.0),
        CheckpointMetadata::new(CheckpointSource::Input, -1)
            .with("user", "bob")
            .with("n", 1)
            .with("flag", true),
        CheckpointMetadata::new(CheckpointSource::Loop, 2)
            .with("user", "mallory")
            .with(DROP, "x")
            .with("a.b", "dot")
            .with("$.source", "dollar")
            .with("$eq", "op"),
        CheckpointMetadata::new(CheckpointSource::Update, 3)
            .with("nested", map! { "a" => map! { "b" => 1 } })
            .with("tags", list!["t1", "t2"]),
    ];
    let mut ids = Vec::new();
    for md in rows {
        let id = stategraph_checkpoint::id::IdGenerator::system().uuid6(0);
        let cp = Checkpoint::empty(id.as_str(), "2025-01-01T00:00:00+00:00");
        let thread = uuid::Uuid::new_v4().to_string();
        db.put(
            &CheckpointConfig::thread(thread),
            &cp,
            &md,
            &Default::default(),
        )
        .await
        .expect("put");
        ids.push(id);
    }
    ids
}

/// The ids (as indexes into the seeded ids) that `list(None, filter)` returns.
async fn matching(db: &TestDb, ids: &[String], options: ListOptions) -> Vec<usize> {
    let mut got: Vec<usize> = db
        .list(None, &options)
        .await
        .expect("list")
        .iter()
        .map(|t| {
            ids.iter()
                .position(|i| *i == t.checkpoint.id)
                .expect("a seeded id")
        })
        .collect();
    got.sort_unstable();
    got
}

fn f(key: &str, value: impl Into<Value>) -> ListOptions {
    ListOptions::default().filter(key, value)
}

/// Counts every row of the three tables (and fails if one of them is gone).
async fn row_counts(db: &TestDb) -> [i64; 3] {
    let raw = db.raw().await;
    let mut counts = [0; 3];
    for (i, table) in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]
        .iter()
        .enumerate()
    {
        counts[i] = raw
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .expect("the table still exists")
            .get(0);
    }
    counts
}

#[tokio::test]
async fn ordinary_filters_match_by_top_level_value() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let ids = seed(&db).await;
    assert_eq!(matching(&db, &ids, f("user", "alice")).await, [0]);
    assert_eq!(matching(&db, &ids, f("step", 1)).await, [0]);
    assert_eq!(matching(&db, &ids, f("source", "loop")).await, [0, 2]);
    assert_eq!(
        matching(&db, &ids, f("source", "loop").filter("user", "mallory")).await,
        [2]
    );
    // Numbers by value, booleans apart from numbers.
    assert_eq!(matching(&db, &ids, f("score", 1)).await, [0]);
    assert_eq!(matching(&db, &ids, f("n", 1.0)).await, [1]);
    assert_eq!(matching(&db, &ids, f("flag", 1)).await, Vec::<usize>::new());
    assert_eq!(matching(&db, &ids, f("flag", true)).await, [1]);
    // `None` matches a missing key (as Python's in-memory and SQLite savers).
    assert_eq!(
        matching(&db, &ids, f("missing", Value::Nil)).await,
        [0, 1, 2, 3]
    );
    assert_eq!(matching(&db, &ids, f("n", Value::Nil)).await, [0, 2, 3]);
    // Maps and lists by equality, not containment (Python's `PostgresSaver` differs).
    assert_eq!(
        matching(&db, &ids, f("nested", map! { "a" => map! {} })).await,
        Vec::<usize>::new()
    );
    assert_eq!(
        matching(&db, &ids, f("nested", map! { "a" => map! { "b" => 1.0 } })).await,
        [3]
    );
    assert_eq!(
        matching(&db, &ids, f("tags", list!["t1"])).await,
        Vec::<usize>::new()
    );
    assert_eq!(matching(&db, &ids, f("tags", list!["t1", "t2"])).await, [3]);
    assert_eq!(
        matching(&db, &ids, f("tags", "t1")).await,
        Vec::<usize>::new()
    );
    // With limit and a thread.
    assert_eq!(
        matching(&db, &ids, f("source", "loop").limit(1))
            .await
            .len(),
        1
    );
}

#[tokio::test]
async fn hostile_keys_and_values_return_only_intended_rows_and_change_nothing() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let ids = seed(&db).await;
    let before = row_counts(&db).await;
    let none = Vec::<usize>::new();
    let hostile_keys = [
        "a') OR 1=1 --",
        "source') = 'loop' OR ('1'='1",
        "x') IS NOT NULL OR ('1'='1",
        "step\" OR \"1\"=\"1",
        "'; DROP TABLE checkpoints; --",
        "$.step",
        "$[0]",
        "nested.a.b",
        "$.nested.a",
        "source\\",
        "$ne",
        "$gt",
        "%",
        "_",
        "*",
        "",
    ];
    for key in hostile_keys {
        for value in [
            Value::from("loop"),
            Value::from(1),
            Value::from("x' OR '1'='1"),
        ] {
            assert_eq!(
                matching(&db, &ids, f(key, value.clone())).await,
                none,
                "key {key:?} value {value:?}"
            );
        }
    }
    let hostile_values = [
        Value::from("alice' OR '1'='1"),
        Value::from("alice'); DROP TABLE checkpoints; --"),
        Value::from("%"),
        Value::from("_lice"),
        Value::from("alice\""),
        map! { "$ne" => "x" },
        map! { "$gt" => 0 },
        list!["alice"],
    ];
    for value in hostile_values {
        assert_eq!(
            matching(&db, &ids, f("user", value.clone())).await,
            none,
            "{value:?}"
        );
    }
    // Literal keys that look like SQL or paths match literally, and only exactly.
    assert_eq!(matching(&db, &ids, f(DROP, "x")).await, [2]);
    assert_eq!(matching(&db, &ids, f(DROP, "y")).await, none);
    assert_eq!(matching(&db, &ids, f("a.b", "dot")).await, [2]);
    assert_eq!(matching(&db, &ids, f("$.source", "dollar")).await, [2]);
    assert_eq!(matching(&db, &ids, f("$.source", "loop")).await, none);
    assert_eq!(matching(&db, &ids, f("$eq", "op")).await, [2]);
    // Values JSONB cannot hold can equal nothing.
    assert_eq!(matching(&db, &ids, f("user", "ali\0ce")).await, none);
    assert_eq!(matching(&db, &ids, f("user\0", "alice")).await, none);
    assert_eq!(matching(&db, &ids, f("user", vec![1u8])).await, none);
    assert_eq!(matching(&db, &ids, f("score", f64::NAN)).await, none);
    // A hostile thread id is a thread id.
    let config = CheckpointConfig {
        thread_id: "' OR '1'='1".into(),
        ..CheckpointConfig::default()
    };
    assert!(db
        .list(Some(&config), &ListOptions::default())
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        row_counts(&db).await,
        before,
        "a filter changed the database"
    );
    assert_eq!(
        matching(&db, &ids, ListOptions::default()).await,
        [0, 1, 2, 3]
    );
}
