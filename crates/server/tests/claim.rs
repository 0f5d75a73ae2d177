//! A claim tells whether the run's thread has a checkpoint in the root namespace
//! (`Claimed::fresh`: its first run may start without reading it). Skipped with a note
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

/// A new thread with one pending `seed` run.
async fn queue_run(pool: &deadpool_postgres::Pool) -> uuid::Uuid {
    let thread_id = uuid::Uuid::new_v4();
    db::create_thread(pool, thread_id, &json!({}), false)
        .await
        .expect("a thread");
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
            claim_for: None,
        },
    )
    .await
    .expect("queue the run");
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
    assert_eq!((run.thread_id, run.fresh, run.attempt), (empty, true, 1));

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
        (run.thread_id, run.fresh),
        (only_sub, true),
        "a subgraph's checkpoint"
    );

    let stored = queue_run(&pool).await;
    put_checkpoint(&saver, stored, "", "1f0a0000-0000-6000-8000-000000000002").await;
    let run = claim().await;
    assert_eq!(
        (run.thread_id, run.fresh),
        (stored, false),
        "a root checkpoint"
    );
}
