//! A claim tells whether the run's thread has a checkpoint in the root namespace
//! (`Claimed::fresh`: its first run may start without reading it) and which is its head
//! (`Claimed::head`: the greatest id and the writes stored against it, which the
//! worker compares with the head its process holds). Skipped with a note
//! without Postgres (unless `STATEGRAPH_REQUIRE_POSTGRES` is set).

// Shared with the tests that drive the Python client, which this one does not.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use serde_json::json;
use stategraph::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
};
use stategraph_checkpoint_postgres::PostgresSaver;
use stategraph_server::{assistant_id, db, demo, Server};

/// Inserts a `seed` run on `thread_id`: pending, or claimed at insert for `claim_for`.
async fn insert_run(
    pool: &deadpool_postgres::Pool,
    thread_id: uuid::Uuid,
    claim_for: Option<(&str, Duration)>,
) -> db::Inserted {
    let kwargs = json!({"assistant_id": "seed", "input": {}});
    db::insert_run(
        pool,
        &db::NewRun {
            run_id: uuid::Uuid::new_v4(),
            thread_id,
            assistant_id: assistant_id("seed"),
            graph_id: "seed",
            metadata: &json!({}),
            kwargs: &kwargs,
            multitask_strategy: "reject",
            stateless: false,
            process: "test",
            claim_for,
        },
    )
    .await
    .expect("insert the run")
}

/// A new thread with one pending `seed` run.
async fn queue_run(pool: &deadpool_postgres::Pool) -> uuid::Uuid {
    let thread_id = uuid::Uuid::new_v4();
    db::create_thread(pool, thread_id, &json!({}), false)
        .await
        .expect("a thread");
    let inserted = insert_run(pool, thread_id, None).await;
    assert!(inserted.claimed.is_none(), "queued, not claimed");
    thread_id
}

/// Stores an empty checkpoint of `thread` in namespace `ns`.
async fn put_checkpoint(saver: &PostgresSaver, thread: uuid::Uuid, ns: &str, id: &str) {
    let config = CheckpointConfig::thread(thread.to_string()).with_ns(ns);
    saver
        .put(
            &config,
            &Checkpoint::empty(id, "2026-12-02T00:00:00+00:00"),
            &CheckpointMetadata::default(),
            &ChannelVersions::default(),
        )
        .await
        .expect("a checkpoint");
}

#[tokio::test]
async fn a_claim_says_whether_the_thread_has_a_root_checkpoint() {
    let Some(tdb) = support::TestDatabase::create().await else {
        return;
    };
    // Builds the tables; no workers, so the test claims by itself.
    let _server = Server::builder()
        .database_url(&tdb.url)
        .workers(0)
        .graph("seed", demo::seed)
        .build()
        .await
        .expect("build the server");
    let pool = deadpool_postgres::Config {
        url: Some(tdb.url.clone()),
        ..Default::default()
    }
    .create_pool(
        Some(deadpool_postgres::Runtime::Tokio1),
        tokio_postgres::NoTls,
    )
    .expect("a pool");
    let saver = PostgresSaver::connect(&tdb.url).await.expect("a saver");
    let graphs = ["seed".to_owned()];
    let lease = Duration::from_secs(30);
    let claim = || async {
        db::claim(&pool, "w", lease, &graphs, false)
            .await
            .expect("claim")
            .expect("a pending run")
    };

    let empty = queue_run(&pool).await;
    let run = claim().await;
    assert_eq!((run.thread_id, run.fresh(), run.attempt), (empty, true, 1));

    let only_sub = queue_run(&pool).await;
    put_checkpoint(
        &saver,
        only_sub,
        "sub:1",
        "1f0a0000-0000-6000-8000-000000000001",
    )
    .await;
    let run = claim().await;
    assert_eq!(
        (run.thread_id, run.fresh()),
        (only_sub, true),
        "a subgraph's checkpoint"
    );

    assert_eq!(run.head, None, "a subgraph's checkpoint is no head");

    // The head is the greatest root checkpoint id, with the writes stored against it
    // (not those of its parent).
    let stored = queue_run(&pool).await;
    put_checkpoint(&saver, stored, "", "1f0a0000-0000-6000-8000-000000000002").await;
    put_writes(&saver, stored, "1f0a0000-0000-6000-8000-000000000002", 1).await;
    put_child(&saver, stored, "1f0a0000-0000-6000-8000-000000000002", HEAD).await;
    put_writes(&saver, stored, HEAD, 2).await;
    let run = claim().await;
    assert_eq!(
        (run.thread_id, run.fresh(), run.head),
        (
            stored,
            false,
            Some(db::StoredHead {
                checkpoint_id: HEAD.into(),
                writes: 2
            })
        ),
        "a root checkpoint"
    );

    // Claimed at insert (an idle worker of the inserting process): the same answer.
    let new = uuid::Uuid::new_v4();
    db::create_thread(&pool, new, &json!({}), false)
        .await
        .expect("a thread");
    let claimed = insert_run(&pool, new, Some(("w2", lease)))
        .await
        .claimed
        .expect("claimed at insert");
    assert_eq!((claimed.thread_id, claimed.fresh()), (new, true));
    let later = uuid::Uuid::new_v4();
    db::create_thread(&pool, later, &json!({}), false)
        .await
        .expect("a thread");
    put_checkpoint(&saver, later, "", "1f0a0000-0000-6000-8000-000000000003").await;
    let claimed = insert_run(&pool, later, Some(("w2", lease)))
        .await
        .claimed
        .expect("claimed at insert");
    assert_eq!((claimed.thread_id, claimed.fresh()), (later, false));
    assert_eq!(
        claimed.head,
        Some(db::StoredHead {
            checkpoint_id: "1f0a0000-0000-6000-8000-000000000003".into(),
            writes: 0
        })
    );
}

/// The head of the thread in [`a_claim_says_whether_the_thread_has_a_root_checkpoint`].
const HEAD: &str = "1f0a0000-0000-6000-8000-000000000004";

/// Stores a child `id` of `parent` in `thread`'s root namespace.
async fn put_child(saver: &PostgresSaver, thread: uuid::Uuid, parent: &str, id: &str) {
    let config = CheckpointConfig::for_checkpoint(thread.to_string(), "", parent);
    saver
        .put(
            &config,
            &Checkpoint::empty(id, "2026-12-02T00:00:01+00:00"),
            &CheckpointMetadata::default(),
            &ChannelVersions::default(),
        )
        .await
        .expect("a child checkpoint");
}

/// Stores `n` writes of one task against `thread`'s root checkpoint `id`.
async fn put_writes(saver: &PostgresSaver, thread: uuid::Uuid, id: &str, n: usize) {
    let config = CheckpointConfig::for_checkpoint(thread.to_string(), "", id);
    let writes: Vec<(String, stategraph::Value)> = (0..n)
        .map(|i| (format!("c{i}"), stategraph::Value::from(i as i64)))
        .collect();
    saver
        .put_writes(&config, &writes, "task", "")
        .await
        .expect("writes");
}
