//! Group commit: `put_batch` stores exactly the rows of one call per op, and the
//! `synchronous` option.

use std::sync::Arc;

use rusqlite::types::Value as Sql;
use stategraph_checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource, SaveOp,
    Value,
};
use stategraph_checkpoint_sqlite::{SqliteSaver, Synchronous};

use super::support::TempSaver;

fn checkpoint(id: &str, n: i64) -> Arc<Checkpoint> {
    let mut cp = Checkpoint::empty(id, "2025-01-01T00:00:00+00:00");
    cp.channel_values.insert("n".into(), Value::Int(n));
    cp.channel_versions.insert(
        "n".into(),
        stategraph_checkpoint::ChannelVersion::Int(n + 1),
    );
    Arc::new(cp)
}

fn put(config: CheckpointConfig, id: &str, n: i64, source: CheckpointSource) -> SaveOp {
    SaveOp::Put {
        config,
        checkpoint: checkpoint(id, n),
        metadata: CheckpointMetadata::new(source, n - 1),
        new_versions: Default::default(),
    }
}

fn writes(config: CheckpointConfig, task: &str, writes: &[(&str, Value)]) -> SaveOp {
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

/// The saves of a short run, in the order the engine queues them: checkpoints, task
/// writes (normal, reserved, an identical repeat), a subgraph namespace.
fn run_ops() -> Vec<SaveOp> {
    let at = |id: &str| CheckpointConfig::for_checkpoint("t", "", id);
    let root = CheckpointConfig::thread("t");
    let sub = CheckpointConfig::thread("t").with_ns("child:1");
    vec![
        put(
            root,
            "1ef00000-0000-6000-8000-000000000001",
            0,
            CheckpointSource::Input,
        ),
        writes(
            at("1ef00000-0000-6000-8000-000000000001"),
            "a",
            &[("n", Value::Int(1)), ("m", Value::from("x"))],
        ),
        writes(
            at("1ef00000-0000-6000-8000-000000000001"),
            "b",
            &[("__error__", Value::from("boom"))],
        ),
        put(
            at("1ef00000-0000-6000-8000-000000000001"),
            "1ef00000-0000-6000-8000-000000000002",
            1,
            CheckpointSource::Loop,
        ),
        put(
            sub,
            "1ef00000-0000-6000-8000-000000000003",
            0,
            CheckpointSource::Input,
        ),
        writes(
            at("1ef00000-0000-6000-8000-000000000002"),
            "c",
            &[("n", Value::Int(2))],
        ),
        writes(
            at("1ef00000-0000-6000-8000-000000000002"),
            "c",
            &[("n", Value::Int(2))],
        ),
        writes(
            at("1ef00000-0000-6000-8000-000000000002"),
            "b",
            &[("__error__", Value::from("again"))],
        ),
        put(
            at("1ef00000-0000-6000-8000-000000000002"),
            "1ef00000-0000-6000-8000-000000000004",
            2,
            CheckpointSource::Loop,
        ),
    ]
}

/// Every row of both tables, every column, in key order.
fn rows(saver: &TempSaver) -> Vec<Vec<Sql>> {
    let conn = saver.file.raw();
    let mut out = Vec::new();
    for query in [
        "SELECT * FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id",
        "SELECT * FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
    ] {
        let mut stmt = conn.prepare(query).expect("prepare");
        let n = stmt.column_count();
        let found = stmt
            .query_map([], |row| (0..n).map(|i| row.get::<_, Sql>(i)).collect())
            .expect("query")
            .collect::<Result<Vec<Vec<Sql>>, _>>()
            .expect("rows");
        out.extend(found);
    }
    out
}

async fn one_by_one(saver: &SqliteSaver, ops: &[SaveOp]) {
    for op in ops {
        match op {
            SaveOp::Put {
                config,
                checkpoint,
                metadata,
                new_versions,
            } => {
                saver
                    .put(config, checkpoint, metadata, new_versions)
                    .await
                    .expect("put");
            }
            SaveOp::PutWrites {
                config,
                writes,
                task_id,
                task_path,
            } => saver
                .put_writes(config, writes, task_id, task_path)
                .await
                .expect("put_writes"),
        }
    }
}

#[tokio::test]
async fn a_batch_stores_the_rows_of_one_call_per_op() {
    let ops = run_ops();
    let batched = TempSaver::new("batch");
    batched.put_batch(&ops).await.expect("put_batch");
    let single = TempSaver::new("single");
    one_by_one(&single, &ops).await;
    let (got, want) = (rows(&batched), rows(&single));
    assert_eq!(got.len(), 4 + 5, "4 checkpoints and 5 write rows");
    assert_eq!(got, want);
    assert_eq!(
        batched.dump("t").await.expect("dump"),
        single.dump("t").await.expect("dump")
    );
    // In several batches, split anywhere: the same rows again.
    let split = TempSaver::new("split");
    for chunk in ops.chunks(4) {
        split.put_batch(chunk).await.expect("put_batch");
    }
    assert_eq!(rows(&split), want);
    // An empty batch stores nothing and succeeds.
    split.put_batch(&[]).await.expect("empty batch");
    assert_eq!(rows(&split), want);
}

#[tokio::test]
async fn a_refused_op_keeps_the_ops_before_it() {
    let ops = run_ops();
    let saver = TempSaver::new("refused");
    // The fourth op's parent is behind the head once a sibling was put.
    saver.put_batch(&ops[..3]).await.expect("first part");
    let sibling = put(
        CheckpointConfig::for_checkpoint("t", "", "1ef00000-0000-6000-8000-000000000001"),
        "1ef00000-0000-6000-8000-0000000000ff",
        9,
        CheckpointSource::Loop,
    );
    saver.put_batch(&[sibling]).await.expect("another writer");
    let before = rows(&saver);
    let err = saver
        .put_batch(&[ops[1].clone(), ops[3].clone(), ops[4].clone()])
        .await
        .expect_err("refused");
    assert!(
        matches!(err, stategraph_checkpoint::Error::Conflict(_)),
        "{err}"
    );
    // The identical repeat of op 1 stored nothing new; op 3 was refused; op 4 never ran.
    assert_eq!(rows(&saver), before);
}

/// A chain of `n` checkpoints of thread `t`, each holding a string of `mib` MiB, with a
/// task write of the same string against each.
fn large_ops(n: usize, mib: usize) -> Vec<SaveOp> {
    let mut ops = Vec::new();
    let mut parent = CheckpointConfig::thread("t");
    for i in 0..n {
        let id = format!("1ef00000-0000-6000-8000-{i:012}");
        let big = Value::from(format!("{i}").repeat(mib << 20));
        let mut cp = Checkpoint::empty(id.as_str(), "2025-01-01T00:00:00+00:00");
        cp.channel_values.insert("big".into(), big.clone());
        cp.channel_versions.insert(
            "big".into(),
            stategraph_checkpoint::ChannelVersion::Int(i as i64 + 1),
        );
        ops.push(SaveOp::Put {
            config: parent,
            checkpoint: Arc::new(cp),
            metadata: CheckpointMetadata::new(CheckpointSource::Loop, i as i64),
            new_versions: Default::default(),
        });
        parent = CheckpointConfig::for_checkpoint("t", "", id.as_str());
        ops.push(writes(parent.clone(), "task", &[("big", big)]));
    }
    ops
}

#[tokio::test]
async fn a_batch_larger_than_one_transaction_holds_stores_the_same_rows() {
    // 5 × (3 MiB checkpoint + 3 MiB write): more than one transaction's 16 MiB.
    let ops = large_ops(5, 3);
    let batched = TempSaver::new("batch-large");
    batched.put_batch(&ops).await.expect("put_batch");
    let single = TempSaver::new("single-large");
    one_by_one(&single, &ops).await;
    let (got, want) = (rows(&batched), rows(&single));
    assert_eq!(got.len(), 5 + 5);
    assert!(got == want, "the rows differ");
    // A refused op after the first transaction: the ops before it stay stored.
    let saver = TempSaver::new("refused-large");
    let mut ops = large_ops(4, 3);
    let late = CheckpointConfig::for_checkpoint("t", "", "1ef00000-0000-6000-8000-000000000000");
    if let SaveOp::Put { config, .. } = &mut ops[6] {
        *config = late; // its parent is no longer the head by then
    }
    let err = saver.put_batch(&ops).await.expect_err("refused");
    assert!(
        matches!(err, stategraph_checkpoint::Error::Conflict(_)),
        "{err}"
    );
    let stored: i64 = saver
        .file
        .raw()
        .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
        .expect("count");
    assert_eq!(stored, 3);
}

#[tokio::test]
async fn synchronous_normal_commits_what_a_reopened_file_reads() {
    let file = super::support::TempPath::new("sync");
    {
        let saver = SqliteSaver::open(file.path())
            .expect("open")
            .with_synchronous(Synchronous::Normal)
            .expect("synchronous");
        saver.put_batch(&run_ops()).await.expect("put_batch");
    }
    let reopened = SqliteSaver::open(file.path()).expect("reopen");
    let head = reopened
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect("get")
        .expect("head");
    assert_eq!(head.checkpoint.id, "1ef00000-0000-6000-8000-000000000004");
    assert_eq!(Synchronous::default(), Synchronous::Full);
}
