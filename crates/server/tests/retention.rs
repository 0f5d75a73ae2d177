//! The stream events of a finished run are deleted once the retention has passed; the run
//! itself (status, output) stays. Skipped with a note without Postgres (unless
//! `STATEGRAPH_REQUIRE_POSTGRES` is set).

// Shared with the tests that drive the Python client, which this one does not.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use serde_json::json;
use stategraph_server::{assistant_id, db, demo, Server};

/// Queues a `seed` run on a new thread straight into the runs table; its id.
async fn queue_seed_run(pool: &deadpool_postgres::Pool) -> uuid::Uuid {
    let thread_id = uuid::Uuid::new_v4();
    db::create_thread(pool, thread_id, &json!({}), false)
        .await
        .expect("a thread");
    let run_id = uuid::Uuid::new_v4();
    let kwargs = json!({"assistant_id": "seed", "input": {}, "stream_mode": ["values", "updates"]});
    db::insert_run(
        pool,
        &db::NewRun {
            run_id,
            thread_id,
            assistant_id: assistant_id("seed"),
            graph_id: "seed",
            metadata: &json!({}),
            kwargs: &kwargs,
            multitask_strategy: "reject",
            stateless: false,
            // From outside any server process: every server hears the NOTIFY.
            process: "test",
            claim_for: None,
        },
    )
    .await
    .expect("queue the run");
    run_id
}

async fn count(pg: &tokio_postgres::Client, sql: &str, run: uuid::Uuid) -> i64 {
    pg.query_one(sql, &[&run])
        .await
        .expect("count")
        .get::<_, i64>(0)
}

/// Runs one `seed` run on a server keeping finished runs' events for `retention`; the
/// number of its events once it has succeeded, then `after` later.
async fn events_of_one_run(retention: Duration, after: Duration) -> Option<(i64, i64)> {
    let tdb = support::TestDatabase::create().await?;
    let server = Server::builder()
        .database_url(&tdb.url)
        .workers(1)
        .event_retention(Some(retention))
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
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let (stop, shutdown) = tokio::sync::watch::channel(false);
    let serving = tokio::spawn(server.serve(listener, shutdown));
    let run = queue_seed_run(&pool).await;
    let (pg, conn) = tokio_postgres::connect(&tdb.url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    let finished = "SELECT count(*) FROM runs WHERE run_id = $1 AND status = 'success'";
    for _ in 0..1000 {
        if count(&pg, finished, run).await == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(count(&pg, finished, run).await, 1, "the run succeeded");
    let events = "SELECT count(*) FROM run_events WHERE run_id = $1";
    let at_end = count(&pg, events, run).await;
    tokio::time::sleep(after).await;
    let later = count(&pg, events, run).await;
    assert_eq!(count(&pg, finished, run).await, 1, "the run stays");
    stop.send(true).expect("stop");
    serving
        .await
        .expect("server task")
        .expect("server stops cleanly");
    Some((at_end, later))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_runs_events_expire_and_the_run_stays() {
    // Pruned every second: three seconds see at least two prunes after the end.
    let Some((_, later)) = events_of_one_run(Duration::ZERO, Duration::from_secs(3)).await else {
        return;
    };
    assert_eq!(later, 0, "the events expired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_young_runs_events_stay() {
    // Kept three seconds, pruned every second: a prune runs while they are younger.
    let Some((at_end, later)) =
        events_of_one_run(Duration::from_secs(3), Duration::from_millis(1500)).await
    else {
        return;
    };
    // updates, values (the empty input changes no value: no values event for it).
    assert_eq!(
        (at_end, later),
        (2, 2),
        "(events at the end, a moment later)"
    );
}
