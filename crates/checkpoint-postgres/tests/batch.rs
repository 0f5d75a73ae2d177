//! Group commit: `put_batch` stores exactly the rows of one call per op, in one
//! transaction, fenced or not.

use std::sync::Arc;

use stategraph_checkpoint::{
    list, ChannelVersion, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Error, SaveOp, Value,
};

use crate::support::TestDb;

const C1: &str = "1ef00000-0000-6000-8000-000000000001";
const C2: &str = "1ef00000-0000-6000-8000-000000000002";
const C3: &str = "1ef00000-0000-6000-8000-000000000003";
const C4: &str = "1ef00000-0000-6000-8000-000000000004";

/// A checkpoint with a primitive `n`, a blob `items` and a long string `text`, the last two
/// new at step `n`.
pub(crate) fn put(config: CheckpointConfig, id: &str, n: i64, source: CheckpointSource) -> SaveOp {
    let mut cp = Checkpoint::empty(id, "2025-01-01T00:00:00+00:00");
    let mut new_versions = stategraph_checkpoint::ChannelVersions::default();
    let version = ChannelVersion::Int(n + 1);
    cp.channel_values.insert("n".into(), Value::Int(n));
    cp.channel_values.insert("items".into(), list![n, "x"]);
    cp.channel_values
        .insert("text".into(), Value::from("long ".repeat(200)));
    for channel in ["n", "items", "text"] {
        cp.channel_versions.insert(channel.into(), version.clone());
    }
    // `text` is new only at the first step: later steps carry it from their parent.
    new_versions.insert("items".into(), version.clone());
    if n == 0 {
        new_versions.insert("text".into(), version);
    }
    SaveOp::Put {
        config,
        checkpoint: Arc::new(cp),
        metadata: CheckpointMetadata::new(source, n - 1),
        new_versions,
    }
}

/// The writes of `task` against `config`'s checkpoint.
pub(crate) fn writes(config: CheckpointConfig, task: &str, writes: &[(&str, Value)]) -> SaveOp {
    SaveOp::PutWrites {
        config,
        writes: writes
            .iter()
            .map(|(c, v)| ((*c).to_owned(), v.clone()))
            .collect(),
        task_id: task.to_owned(),
        task_path: format!("~__pregel_pull, {task}"),
    }
}

/// The saves of a short run of `thread`, in the order the engine queues them:
/// checkpoints, task writes (normal, reserved, an identical repeat, an empty list), a
/// subgraph namespace.
fn run_ops(thread: &str) -> Vec<SaveOp> {
    let at = |id: &str| CheckpointConfig::for_checkpoint(thread, "", id);
    let root = CheckpointConfig::thread(thread);
    let sub = CheckpointConfig::thread(thread).with_ns("child:1");
    vec![
        put(root, C1, 0, CheckpointSource::Input),
        writes(
            at(C1),
            "a",
            &[("n", Value::Int(1)), ("m", Value::from("x"))],
        ),
        writes(at(C1), "b", &[("__error__", Value::from("boom"))]),
        writes(at(C1), "e", &[]),
        put(at(C1), C2, 1, CheckpointSource::Loop),
        put(sub, C3, 0, CheckpointSource::Input),
        writes(at(C2), "c", &[("n", Value::Int(2))]),
        writes(at(C2), "c", &[("n", Value::Int(2))]),
        writes(at(C2), "b", &[("__error__", Value::from("again"))]),
        put(at(C2), C4, 2, CheckpointSource::Loop),
    ]
}

/// Every row of the thread in the three tables (all columns but the thread id), and how
/// many transactions wrote them (distinct `xmin`).
pub(crate) async fn rows(db: &TestDb, thread: &str) -> (String, i64) {
    let raw = db.raw().await;
    let row = raw
        .query_one(
            "SELECT \
               (SELECT coalesce(string_agg(row(checkpoint_ns, checkpoint_id, parent_checkpoint_id, \
                  checkpoint::text, metadata::text)::text, E'\\n' \
                  ORDER BY checkpoint_ns, checkpoint_id), '') \
                FROM checkpoints WHERE thread_id = $1) || E'\\n--\\n' || \
               (SELECT coalesce(string_agg(row(checkpoint_ns, channel, version, type, blob)::text, \
                  E'\\n' ORDER BY checkpoint_ns, channel, version), '') \
                FROM checkpoint_blobs WHERE thread_id = $1) || E'\\n--\\n' || \
               (SELECT coalesce(string_agg(row(checkpoint_ns, checkpoint_id, task_id, task_path, \
                  idx, channel, type, blob)::text, E'\\n' \
                  ORDER BY checkpoint_ns, checkpoint_id, task_id, idx), '') \
                FROM checkpoint_writes WHERE thread_id = $1), \
             (SELECT count(DISTINCT x) FROM ( \
                SELECT xmin::text AS x FROM checkpoints WHERE thread_id = $1 \
                UNION ALL SELECT xmin::text FROM checkpoint_blobs WHERE thread_id = $1 \
                UNION ALL SELECT xmin::text FROM checkpoint_writes WHERE thread_id = $1) AS t)",
            &[&thread],
        )
        .await
        .expect("rows");
    (row.get(0), row.get(1))
}

async fn one_by_one(saver: &dyn CheckpointSaver, ops: &[SaveOp]) {
    for op in ops {
        saver
            .put_batch(std::slice::from_ref(op))
            .await
            .expect("one op");
    }
}

async fn same_rows_in_one_transaction(db: &TestDb) {
    let (batched, single) = ("batched", "single");
    db.put_batch(&run_ops(batched)).await.expect("put_batch");
    one_by_one(&**db, &run_ops(single)).await;
    let (got, transactions) = rows(db, batched).await;
    let (want, single_transactions) = rows(db, single).await;
    assert_eq!(got, want);
    let sections: Vec<usize> = got.split("\n--\n").map(|s| s.lines().count()).collect();
    assert_eq!(sections, [4, 4, 5], "checkpoints, blobs, write rows: {got}");
    assert_eq!(transactions, 1, "the batch commits once");
    assert!(single_transactions > 1, "{single_transactions}");
    // The same batch again changes nothing: unfenced it is a retry, fenced its task
    // writes are behind the head, refused as one call of them would be.
    let again = db.put_batch(&run_ops(batched)).await;
    if db.fencing() {
        assert!(matches!(again, Err(Error::Conflict(_))), "{again:?}");
    } else {
        again.expect("retried batch");
    }
    assert_eq!(rows(db, batched).await.0, want);
}

#[tokio::test]
async fn a_fenced_batch_stores_the_rows_of_one_call_per_op_in_one_transaction() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    same_rows_in_one_transaction(&db).await;
}

#[tokio::test]
async fn an_unfenced_batch_stores_the_rows_of_one_call_per_op_in_one_transaction() {
    let Some(db) = TestDb::unfenced().await else {
        return;
    };
    same_rows_in_one_transaction(&db).await;
}

#[tokio::test]
async fn an_invalid_op_keeps_the_ops_before_it_and_stores_none_after_it() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let thread = "invalid";
    let mut ops = run_ops(thread);
    // The fifth op becomes writes without a checkpoint id.
    ops[4] = writes(
        CheckpointConfig::thread(thread),
        "z",
        &[("n", Value::Int(9))],
    );
    let err = db.put_batch(&ops).await.expect_err("an invalid op");
    assert!(matches!(err, Error::InvalidConfig(_)), "{err}");
    one_by_one(&*db, &run_ops("before")[..4]).await;
    let (got, transactions) = rows(&db, thread).await;
    assert_eq!(got, rows(&db, "before").await.0);
    assert_eq!(transactions, 1);
}
