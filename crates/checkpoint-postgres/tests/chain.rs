//! The chained batch: a fenced `put_batch` stores each `(thread, namespace)` of a chain in
//! one statement, with the rows of one call per op; when the fence would refuse an op it
//! stores what one call per op stores and returns the conflict.
//!
//! Each test runs the same ops on two threads, as one batch and as one call per op, and
//! compares every row. A statement trigger counts the statements inserting checkpoints.

use std::sync::Arc;

use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, Error, SaveOp, Value,
};

use crate::batch::{put, rows, writes};
use crate::support::TestDb;

const C1: &str = "1ef00000-0000-6000-8000-000000000001";
const C2: &str = "1ef00000-0000-6000-8000-000000000002";
const C3: &str = "1ef00000-0000-6000-8000-000000000003";
const C4: &str = "1ef00000-0000-6000-8000-000000000004";
const C5: &str = "1ef00000-0000-6000-8000-000000000005";

/// The ops of a case, for a thread.
type Ops = fn(&str) -> Vec<SaveOp>;

/// The root namespace of `thread` at checkpoint `id`.
fn at(thread: &str, id: &str) -> CheckpointConfig {
    CheckpointConfig::for_checkpoint(thread, "", id)
}

/// Stores the ops one call each, in order, up to the first error, which it returns.
async fn one_call_each(
    saver: &dyn CheckpointSaver,
    ops: &[SaveOp],
) -> stategraph_checkpoint::Result<()> {
    for op in ops {
        saver.put_batch(std::slice::from_ref(op)).await?;
    }
    Ok(())
}

/// Installs a statement trigger counting the statements that insert checkpoints.
async fn count_statements(db: &TestDb) {
    db.raw()
        .await
        .batch_execute(
            "CREATE TABLE put_statements (n int NOT NULL); \
             CREATE FUNCTION count_put() RETURNS trigger LANGUAGE plpgsql AS \
               $$ BEGIN INSERT INTO put_statements VALUES (1); RETURN NULL; END $$; \
             CREATE TRIGGER count_put AFTER INSERT ON checkpoints \
               FOR EACH STATEMENT EXECUTE FUNCTION count_put();",
        )
        .await
        .expect("the statement counter");
}

/// How many statements inserted checkpoints so far.
async fn statements(db: &TestDb) -> i64 {
    db.raw()
        .await
        .query_one("SELECT count(*) FROM put_statements", &[])
        .await
        .expect("count")
        .get(0)
}

/// A checkpoint whose long string `text` is `text` at version `at`; `stored` is the version
/// `new_versions` gives it (none: unchanged, carried from the parent; another version
/// than `at`: kept inline, as an older writer would).
fn text_put(
    config: CheckpointConfig,
    id: &str,
    n: i64,
    text: &str,
    at: i64,
    stored: Option<i64>,
) -> SaveOp {
    let mut cp = Checkpoint::empty(id, "2025-01-01T00:00:00+00:00");
    let mut new_versions = ChannelVersions::default();
    cp.channel_values.insert("n".into(), Value::Int(n));
    cp.channel_values
        .insert("text".into(), Value::from(text.repeat(300)));
    cp.channel_versions
        .insert("n".into(), ChannelVersion::Int(n + 10));
    cp.channel_versions
        .insert("text".into(), ChannelVersion::Int(at));
    new_versions.insert("n".into(), ChannelVersion::Int(n + 10));
    if let Some(v) = stored {
        new_versions.insert("text".into(), ChannelVersion::Int(v));
    }
    SaveOp::Put {
        config,
        checkpoint: Arc::new(cp),
        metadata: CheckpointMetadata::new(CheckpointSource::Loop, n),
        new_versions,
    }
}

#[tokio::test]
async fn a_chain_is_one_statement_with_the_rows_and_carried_strings_of_one_call_per_op() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    count_statements(&db).await;
    // C1, stored first, keeps "one" inline; C2 carries it from that stored row. C3 keeps
    // "two" inline, C4 carries it from C3 (a parent in the batch), C5 finds it carried.
    let ops = |thread: &str| {
        vec![
            writes(at(thread, C1), "a", &[("n", Value::Int(2))]),
            text_put(at(thread, C1), C2, 2, "one ", 1, None),
            writes(
                at(thread, C2),
                "b",
                &[("n", Value::Int(3)), ("__error__", Value::from("x"))],
            ),
            text_put(at(thread, C2), C3, 3, "two ", 2, Some(7)),
            writes(at(thread, C3), "c", &[("n", Value::Int(4))]),
            text_put(at(thread, C3), C4, 4, "two ", 2, None),
            text_put(at(thread, C4), C5, 5, "two ", 2, None),
        ]
    };
    for thread in ["chained", "single"] {
        let first = text_put(CheckpointConfig::thread(thread), C1, 1, "one ", 1, Some(9));
        db.put_batch(&[first]).await.expect("the first checkpoint");
    }
    let before = statements(&db).await;
    db.put_batch(&ops("chained"))
        .await
        .expect("the chained batch");
    assert_eq!(
        statements(&db).await - before,
        1,
        "one statement stores the chain"
    );
    one_call_each(&*db, &ops("single"))
        .await
        .expect("one call each");
    let (got, transactions) = rows(&db, "chained").await;
    let (want, _) = rows(&db, "single").await;
    assert_eq!(got, want);
    assert_eq!(transactions, 2, "the first put and the batch");
    let carried: i64 = db
        .raw()
        .await
        .query_one(
            "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'chained' AND channel = 'text'",
            &[],
        )
        .await
        .expect("carried")
        .get(0);
    assert_eq!(carried, 2, "both long strings carried into blobs: {got}");
}

#[tokio::test]
async fn a_batch_whose_first_put_the_fence_refuses_stores_what_one_call_per_op_stores() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let other = db.another_saver(true).await;
    let sub = |thread: &str| CheckpointConfig::thread(thread).with_ns("child:1");
    let ops = |thread: &str| {
        vec![
            put(sub(thread), C1, 0, CheckpointSource::Input),
            writes(
                sub(thread).with_checkpoint_id(C1),
                "s",
                &[("n", Value::Int(1))],
            ),
            // Refused: another writer moved the head to C2.
            put(at(thread, C1), C3, 1, CheckpointSource::Loop),
            writes(at(thread, C3), "a", &[("n", Value::Int(5))]),
            put(at(thread, C3), C4, 2, CheckpointSource::Loop),
        ]
    };
    for thread in ["batched", "single"] {
        one_call_each(
            &*db,
            &[put(
                CheckpointConfig::thread(thread),
                C1,
                0,
                CheckpointSource::Input,
            )],
        )
        .await
        .expect("the head");
        one_call_each(
            &other,
            &[put(at(thread, C1), C2, 1, CheckpointSource::Loop)],
        )
        .await
        .expect("another writer's child");
    }
    let err = db
        .put_batch(&ops("batched"))
        .await
        .expect_err("a refused put");
    assert!(
        matches!(&err, Error::Conflict(m) if m.contains(C2)),
        "{err}"
    );
    let single = one_call_each(&*db, &ops("single")).await;
    assert!(matches!(single, Err(Error::Conflict(_))), "{single:?}");
    let (got, _) = rows(&db, "batched").await;
    assert_eq!(got, rows(&db, "single").await.0);
    assert!(
        got.contains("child:1"),
        "the ops before the refused one are stored: {got}"
    );
    assert!(!got.contains(C3), "nothing of the refused put: {got}");
}

#[tokio::test]
async fn a_batch_of_several_threads_and_namespaces_is_one_statement_each() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    count_statements(&db).await;
    let ops = |prefix: &str| {
        let (a, b) = (format!("{prefix}-a"), format!("{prefix}-b"));
        let sub = CheckpointConfig::thread(a.as_str()).with_ns("child:1");
        vec![
            put(
                CheckpointConfig::thread(a.as_str()),
                C1,
                0,
                CheckpointSource::Input,
            ),
            put(
                CheckpointConfig::thread(b.as_str()),
                C1,
                0,
                CheckpointSource::Input,
            ),
            put(sub.clone(), C2, 0, CheckpointSource::Input),
            writes(at(&a, C1), "t", &[("n", Value::Int(1))]),
            writes(at(&b, C1), "t", &[("n", Value::Int(7))]),
            writes(
                sub.clone().with_checkpoint_id(C2),
                "u",
                &[("m", Value::from("y"))],
            ),
            put(at(&a, C1), C3, 1, CheckpointSource::Loop),
            // Carries nothing, and repeats the blob keys of C1 (the first stays).
            put(at(&b, C1), C3, 0, CheckpointSource::Loop),
            put(sub.with_checkpoint_id(C2), C4, 1, CheckpointSource::Loop),
        ]
    };
    let before = statements(&db).await;
    db.put_batch(&ops("batched")).await.expect("the batch");
    assert_eq!(
        statements(&db).await - before,
        3,
        "one statement per thread and namespace"
    );
    one_call_each(&*db, &ops("single"))
        .await
        .expect("one call each");
    for (batched, single) in [("batched-a", "single-a"), ("batched-b", "single-b")] {
        let (got, transactions) = rows(&db, batched).await;
        assert_eq!(got, rows(&db, single).await.0);
        assert_eq!(transactions, 1, "{batched}");
    }
}

#[tokio::test]
async fn writes_for_a_checkpoint_another_writer_moved_past_are_refused_as_one_call_would() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let other = db.another_saver(true).await;
    let sub = |thread: &str| CheckpointConfig::thread(thread).with_ns("child:1");
    let ops = |thread: &str| {
        vec![
            put(sub(thread), C1, 0, CheckpointSource::Input),
            // Refused: C2 already continues from C1.
            writes(at(thread, C1), "late", &[("n", Value::Int(1))]),
            put(at(thread, C2), C3, 2, CheckpointSource::Loop),
        ]
    };
    for thread in ["batched", "single"] {
        one_call_each(
            &*db,
            &[put(
                CheckpointConfig::thread(thread),
                C1,
                0,
                CheckpointSource::Input,
            )],
        )
        .await
        .expect("the head");
        one_call_each(
            &other,
            &[put(at(thread, C1), C2, 1, CheckpointSource::Loop)],
        )
        .await
        .expect("another writer's child");
    }
    let err = db
        .put_batch(&ops("batched"))
        .await
        .expect_err("refused writes");
    assert!(
        matches!(&err, Error::Conflict(m) if m.contains(C2)),
        "{err}"
    );
    let single = one_call_each(&*db, &ops("single")).await;
    assert!(matches!(single, Err(Error::Conflict(_))), "{single:?}");
    let (got, _) = rows(&db, "batched").await;
    assert_eq!(got, rows(&db, "single").await.0);
    assert!(got.contains("child:1") && !got.contains("late"), "{got}");
}

#[tokio::test]
async fn writes_the_batch_itself_moved_past_or_that_differ_are_refused_as_one_call_would() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let cases: [(&str, Ops); 3] = [
        // The batch's own put continues from C1 before the writes against C1.
        ("moved", |thread| {
            vec![
                put(at(thread, C1), C2, 1, CheckpointSource::Loop),
                writes(at(thread, C1), "late", &[("n", Value::Int(1))]),
            ]
        }),
        // Another value of the same task at a normal index, within the batch.
        ("differs", |thread| {
            vec![
                writes(at(thread, C1), "t", &[("n", Value::Int(1))]),
                writes(at(thread, C1), "t", &[("n", Value::Int(2))]),
                put(at(thread, C1), C2, 1, CheckpointSource::Loop),
            ]
        }),
        // Another value than the stored write of the task.
        ("stored", |thread| {
            vec![
                writes(at(thread, C1), "s", &[("n", Value::Int(3))]),
                put(at(thread, C1), C2, 1, CheckpointSource::Loop),
            ]
        }),
    ];
    for (case, ops) in cases {
        let (batched, single) = (format!("{case}-batched"), format!("{case}-single"));
        for thread in [&batched, &single] {
            let head = put(
                CheckpointConfig::thread(thread.as_str()),
                C1,
                0,
                CheckpointSource::Input,
            );
            let stored = writes(at(thread, C1), "s", &[("n", Value::Int(9))]);
            one_call_each(&*db, &[head, stored])
                .await
                .expect("the head");
        }
        let err = db.put_batch(&ops(&batched)).await.expect_err(case);
        assert!(matches!(err, Error::Conflict(_)), "{case}: {err}");
        let single_err = one_call_each(&*db, &ops(&single)).await;
        assert!(
            matches!(single_err, Err(Error::Conflict(_))),
            "{case}: {single_err:?}"
        );
        assert_eq!(
            rows(&db, &batched).await.0,
            rows(&db, &single).await.0,
            "{case}"
        );
    }
}
