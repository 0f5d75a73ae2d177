//! TOAST compression: the saver's writes compress large values with lz4 when the server
//! has it (the default), or with the server's default when asked to.

use stategraph_checkpoint::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointSaver, CheckpointSource, Value,
};
use stategraph_checkpoint_postgres::{PostgresOptions, PostgresSaver, ToastCompression};

use crate::support::TestDb;

/// A value that compresses well and is far over the TOAST threshold (~2 KB).
fn compressible() -> Value {
    Value::List(
        (0..400)
            .map(|i| Value::from(format!("message {} {}", i % 7, "chat ".repeat(20))))
            .collect::<Vec<_>>()
            .into(),
    )
}

/// Puts one checkpoint holding [`compressible`] on a new thread.
async fn put_big(saver: &PostgresSaver, thread: &str) {
    let mut c = Checkpoint::empty(
        stategraph_checkpoint::id::IdGenerator::system().uuid6(0),
        "2025-01-01T00:00:00+00:00",
    );
    let v = ChannelVersion::from("1.0");
    c.channel_values.insert("messages".into(), compressible());
    c.channel_versions.insert("messages".into(), v.clone());
    let new: ChannelVersions = [("messages".to_owned(), v)].into_iter().collect();
    let md = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    saver
        .put(&CheckpointConfig::thread(thread), &c, &md, &new)
        .await
        .expect("put");
}

/// The compression of the thread's blob, as the server reports it.
async fn compression(db: &TestDb, thread: &str) -> Option<String> {
    db.raw()
        .await
        .query_one(
            "SELECT pg_column_compression(blob) FROM checkpoint_blobs WHERE thread_id = $1",
            &[&thread],
        )
        .await
        .expect("compression")
        .get(0)
}

/// True when the server can compress with lz4.
async fn server_has_lz4(db: &TestDb) -> bool {
    db.raw()
        .await
        .query_one(
            "SELECT count(*) > 0 FROM pg_settings \
             WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)",
            &[],
        )
        .await
        .expect("settings")
        .get(0)
}

#[tokio::test]
async fn large_values_are_compressed_with_lz4_by_default_and_read_back() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    if !server_has_lz4(&db).await {
        println!("note: this server has no lz4; the fallback is tested instead");
    }
    let want = if server_has_lz4(&db).await {
        "lz4"
    } else {
        "pglz"
    };
    put_big(&db, "default").await;
    assert_eq!(compression(&db, "default").await.as_deref(), Some(want));

    // A saver over a pool of the caller's gets it too.
    let pool = db.pool().clone();
    let from_pool = PostgresSaver::from_pool(pool);
    put_big(&from_pool, "from-pool").await;
    assert_eq!(compression(&db, "from-pool").await.as_deref(), Some(want));

    // Either reads it back, cache off, as it was put.
    let reader = db.another_saver(true).await.with_blob_cache(0);
    for thread in ["default", "from-pool"] {
        let got = reader
            .get_tuple(&CheckpointConfig::thread(thread))
            .await
            .expect("get")
            .expect("found");
        assert_eq!(
            got.checkpoint.channel_values.get("messages"),
            Some(&compressible())
        );
    }
}

#[tokio::test]
async fn server_default_leaves_the_servers_compression() {
    let Some(db) = TestDb::create().await else {
        return;
    };
    let options =
        PostgresOptions::default().with_toast_compression(ToastCompression::ServerDefault);
    let saver = PostgresSaver::connect_with(&db.url, &options)
        .await
        .expect("connect");
    put_big(&saver, "server-default").await;
    let default: String = db
        .raw()
        .await
        .query_one("SHOW default_toast_compression", &[])
        .await
        .expect("show")
        .get(0);
    assert_eq!(
        compression(&db, "server-default").await.as_deref(),
        Some(default.as_str())
    );
}
