//! Faults on a private cluster (see `support::cluster`): a restart in the middle of a
//! call and a server that stops answering give typed errors, and the thread goes on
//! afterwards. Also what the errors say, and the keys no saver stores.

use std::time::Duration;

use stategraph_checkpoint::{
    list, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver,
    CheckpointSource, Error, ListOptions, Value, MAX_KEY_BYTES,
};
use stategraph_checkpoint_postgres::{pg_error, PostgresOptions, PostgresSaver};

use crate::support::cluster::Cluster;
use crate::support::{connect_raw, TestDb};

fn checkpoint(saver: &PostgresSaver, n: i64) -> (Checkpoint, ChannelVersions) {
    let id = stategraph_checkpoint::id::IdGenerator::system().uuid6(n);
    let mut cp = Checkpoint::empty(id, "2025-01-01T00:00:00+00:00");
    let version = saver.get_next_version(None);
    cp.channel_values.insert("data".into(), list![n]);
    cp.channel_versions.insert("data".into(), version.clone());
    (cp, [("data".to_owned(), version)].into_iter().collect())
}

/// A saver on the cluster with short timeouts, its tables set up.
async fn saver_on(cluster: &Cluster, limit: Duration) -> PostgresSaver {
    let options = PostgresOptions::default()
        .with_connect_timeout(Some(limit))
        .with_pool_wait_timeout(Some(limit))
        .with_statement_timeout(Some(limit));
    let saver = PostgresSaver::connect_with(&cluster.url(), &options)
        .await
        .expect("connect to the private cluster");
    saver.setup().await.expect("setup");
    saver
}

/// Runs `call` until it succeeds, retrying (up to 5 times) only on a lost connection or
/// a timeout, as a caller that survives a restart does.
async fn retrying<T, F, Fut>(mut call: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Error>>,
{
    for _ in 0..5 {
        match call().await {
            Ok(v) => return v,
            Err(Error::Timeout(_)) => {}
            Err(e) if pg_error(&e).is_some_and(|p| p.is_connection_lost()) => {}
            Err(e) => panic!("not a connection loss: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the saver did not recover");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_in_the_middle_of_a_call_is_a_typed_error_and_the_thread_goes_on() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let saver = saver_on(&cluster, Duration::from_secs(30)).await;
    let thread = "restarted";
    let (first, v1) = checkpoint(&saver, 0);
    let md = CheckpointMetadata::new(CheckpointSource::Input, -1);
    let head = saver
        .put(&CheckpointConfig::thread(thread), &first, &md, &v1)
        .await
        .expect("first checkpoint");
    // Hold the thread's fence lock so that the next write waits inside the server.
    let blocker = connect_raw(&cluster.url()).await.expect("raw connection");
    blocker
        .execute(
            "SELECT pg_advisory_lock(hashtext($1::text), hashtext(''))",
            &[&thread],
        )
        .await
        .expect("take the thread's lock");
    let writes = [("data".to_owned(), Value::from("task result"))];
    let call = {
        let (saver, head, writes) = (&saver, head.clone(), writes.clone());
        async move { saver.put_writes(&head, &writes, "task-1", "").await }
    };
    let waiting = async {
        for _ in 0..200 {
            let waiting: i64 = blocker
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity \
                     WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'",
                    &[],
                )
                .await
                .expect("pg_stat_activity")
                .get(0);
            if waiting > 0 {
                cluster.restart();
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the write never waited for the lock");
    };
    let (result, ()) = tokio::join!(call, waiting);
    let err = result.expect_err("the restart ends the call");
    let pg = pg_error(&err).unwrap_or_else(|| panic!("a Postgres backend error: {err:?}"));
    assert!(pg.is_connection_lost(), "{err}");
    let text = err.to_string();
    println!("restart: {text}");
    assert!(
        text.contains("put_writes") && text.contains(&cluster.address()),
        "the error names the call and the server: {text}"
    );
    // The thread goes on: the head is still there, the write and the next step succeed.
    let at_thread = CheckpointConfig::thread(thread);
    let tuple = retrying(|| saver.get_tuple(&at_thread))
        .await
        .expect("the head survived");
    assert_eq!(tuple.checkpoint.id, first.id);
    retrying(|| saver.put_writes(&head, &writes, "task-1", "")).await;
    let (second, v2) = checkpoint(&saver, 1);
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    retrying(|| saver.put(&head, &second, &md, &v2)).await;
    let listed = saver
        .list(
            Some(&CheckpointConfig::thread(thread)),
            &ListOptions::default(),
        )
        .await
        .expect("list");
    let ids: Vec<&str> = listed.iter().map(|t| t.checkpoint.id.as_str()).collect();
    assert_eq!(ids, [second.id.as_str(), first.id.as_str()]);
    assert_eq!(listed[1].pending_writes.len(), 1);
}

/// A safety net only (not a timing assertion): without timeouts the calls of the frozen
/// server test would never return.
fn bounded<T>(what: &str, r: Result<T, tokio::time::error::Elapsed>) -> T {
    r.unwrap_or_else(|_| panic!("{what} still waits after 60 s: no timeout"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_answering_gives_timeout_errors_and_then_recovers() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let saver = saver_on(&cluster, Duration::from_secs(5)).await;
    let thread = "frozen";
    let (first, v1) = checkpoint(&saver, 0);
    let md = CheckpointMetadata::new(CheckpointSource::Input, -1);
    let head = saver
        .put(&CheckpointConfig::thread(thread), &first, &md, &v1)
        .await
        .expect("first checkpoint");
    let frozen = cluster.freeze();
    // A pooled connection whose statement gets no reply: the statement timeout.
    let read = tokio::time::timeout(
        Duration::from_secs(60),
        saver.get_tuple(&CheckpointConfig::thread(thread)),
    )
    .await;
    let err = bounded("get_tuple", read).expect_err("no reply");
    println!("frozen, pooled connection: {err}");
    assert!(
        matches!(&err, Error::Timeout(m) if m.contains("get_tuple")),
        "{err:?}"
    );
    assert!(err.to_string().contains(&cluster.address()), "{err}");
    // That connection was closed; a new one cannot be opened: the connect timeout.
    let (second, v2) = checkpoint(&saver, 1);
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    let put =
        tokio::time::timeout(Duration::from_secs(60), saver.put(&head, &second, &md, &v2)).await;
    let err = bounded("put", put).expect_err("no connection");
    println!("frozen, new connection: {err}");
    assert!(
        matches!(&err, Error::Timeout(m) if m.contains("put")),
        "{err:?}"
    );
    // `connect_timeout` in the URL bounds a new saver's connect (the options say: never).
    let url = format!("{}?connect_timeout=1", cluster.url());
    let forever = PostgresOptions::default().with_connect_timeout(None);
    let connect = tokio::time::timeout(
        Duration::from_secs(60),
        PostgresSaver::connect_with(&url, &forever),
    )
    .await;
    let err = bounded("connect", connect).expect_err("no connection");
    println!("frozen, connect: {err}");
    assert!(
        matches!(&err, Error::Timeout(m) if m.contains("connect")),
        "{err:?}"
    );
    drop(frozen);
    // Thawed, the same saver goes on with the thread.
    let at_thread = CheckpointConfig::thread(thread);
    let tuple = retrying(|| saver.get_tuple(&at_thread))
        .await
        .expect("the head");
    assert_eq!(tuple.checkpoint.id, first.id);
    retrying(|| saver.put(&head, &second, &md, &v2)).await;
}

#[tokio::test]
async fn a_server_error_says_what_where_and_which_sqlstate_once() {
    let Some(db) = TestDb::bare().await else {
        return;
    };
    // No tables: the server refuses the statement.
    let err = db
        .get_tuple(&CheckpointConfig::thread("t"))
        .await
        .expect_err("no tables");
    let text = err.to_string();
    println!("server error: {text}");
    let address = db
        .address()
        .expect("a saver made by connect knows its server");
    for part in [
        "get_tuple",
        "SQLSTATE 42P01",
        "checkpoints",
        "does not exist",
        address,
    ] {
        assert!(text.contains(part), "{part:?} missing from {text:?}");
    }
    assert!(
        std::error::Error::source(&err).is_none(),
        "the text is not repeated"
    );
    assert_eq!(
        stategraph_checkpoint_postgres::db_error(&err).map(|d| d.code().code()),
        Some("42P01")
    );
}

#[tokio::test]
async fn a_refused_connection_names_the_server_and_the_cause() {
    // A port nobody listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let url = format!("postgresql://postgres@127.0.0.1:{port}/postgres");
    let err = PostgresSaver::connect(&url)
        .await
        .expect_err("nobody listens");
    let text = err.to_string();
    println!("refused: {text}");
    assert!(
        text.contains(&format!("127.0.0.1:{port}")) && text.contains("connect"),
        "{text}"
    );
    assert!(text.to_lowercase().contains("refused"), "the cause: {text}");
}

#[tokio::test]
async fn keys_postgres_cannot_store_are_refused_before_any_statement() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let long = "t".repeat(MAX_KEY_BYTES + 1);
    let (cp, versions) = checkpoint(&db, 0);
    let md = CheckpointMetadata::new(CheckpointSource::Input, -1);
    let writes = [("data".to_owned(), Value::from(1))];
    for bad in ["nul\0inside", long.as_str()] {
        let as_thread = CheckpointConfig::thread(bad);
        let as_ns = CheckpointConfig::thread("ok").with_ns(bad);
        let as_id = CheckpointConfig::for_checkpoint("ok", "", bad);
        for config in [&as_thread, &as_ns, &as_id] {
            let results = [
                db.get_tuple(config).await.map(|_| ()),
                db.list(Some(config), &ListOptions::default())
                    .await
                    .map(|_| ()),
                db.put(config, &cp, &md, &versions).await.map(|_| ()),
                db.put_writes(config, &writes, "task", "").await,
            ];
            for r in results {
                assert!(
                    matches!(r, Err(Error::InvalidConfig(_))),
                    "{bad:.20?}: {r:?}"
                );
            }
        }
        let ok = CheckpointConfig::for_checkpoint("ok", "", "c");
        for r in [
            db.delete_thread(bad).await,
            db.copy_thread("ok", bad).await,
            db.put_writes(&ok, &writes, bad, "").await,
        ] {
            assert!(
                matches!(r, Err(Error::InvalidConfig(_))),
                "{bad:.20?}: {r:?}"
            );
        }
    }
    // At the limit, a thread id and a namespace are stored and read back.
    let at_limit = "é".repeat(MAX_KEY_BYTES / 2);
    let config = CheckpointConfig::thread(at_limit.as_str()).with_ns(at_limit.as_str());
    db.put(&config, &cp, &md, &versions)
        .await
        .expect("keys at the limit");
    let got = db.get_tuple(&config).await.expect("get").expect("stored");
    assert_eq!(got.config.thread_id, at_limit);
}

#[tokio::test]
async fn a_pool_error_keeps_the_servers_sqlstate() {
    let Some(db) = TestDb::bare().await else {
        return;
    };
    // A database that does not exist: the server refuses the connection with 3D000.
    let base = crate::support::base_url();
    let Some((server, _)) = base.rsplit_once('/') else {
        panic!("a URL with a database: {base}");
    };
    let url = format!("{server}/sg_missing_{}", db.schema);
    let err = PostgresSaver::connect(&url)
        .await
        .expect_err("no such database");
    let text = err.to_string();
    println!("pool: {text}");
    assert!(
        text.contains("SQLSTATE 3D000") && text.contains("connect"),
        "{text}"
    );
    assert_eq!(
        stategraph_checkpoint_postgres::db_error(&err).map(|d| d.code().code()),
        Some("3D000")
    );
}
