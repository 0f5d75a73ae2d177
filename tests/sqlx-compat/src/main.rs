//! sqlx 0.8 and stategraph's SQLite saver in one program, on one database file.
//!
//! Both link the same SQLite (one `libsqlite3-sys`, the one sqlx asks for): sqlx creates a
//! table of the service and writes a row, the saver stores a checkpoint in the same file,
//! and each then reads what the other wrote. Exits non-zero on any mismatch.

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::Row;
use stategraph::checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSaver, CheckpointSource,
};
use stategraph::sqlite::SqliteSaver;

type Failure = Box<dyn std::error::Error>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Failure> {
    let dir = std::env::temp_dir().join(format!("sqlx-compat-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("service.db");
    let outcome = run(&path).await;
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

async fn run(path: &std::path::Path) -> Result<(), Failure> {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await?;
    sqlx::query("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL)")
        .execute(&pool)
        .await?;
    sqlx::query("INSERT INTO orders (item) VALUES (?)")
        .bind("tea")
        .execute(&pool)
        .await?;

    let saver = SqliteSaver::open(path)?;
    let checkpoint = Checkpoint::empty(
        "1f0a0000-0000-6000-8000-000000000001",
        "2026-12-03T00:00:00+00:00",
    );
    let metadata = CheckpointMetadata::new(CheckpointSource::Input, -1).with("order", "tea");
    let stored = saver
        .put(
            &CheckpointConfig::thread("order-1"),
            &checkpoint,
            &metadata,
            &Default::default(),
        )
        .await?;
    let read = saver
        .get_tuple(&stored)
        .await?
        .ok_or("the saver lost its checkpoint")?;
    if read.checkpoint.id != checkpoint.id || read.metadata.get("order") != Some("tea".into()) {
        return Err(format!("the saver read back {read:?}").into());
    }

    // sqlx sees the saver's row, the saver's file still holds sqlx's.
    let row = sqlx::query(
        "SELECT checkpoint_id, CAST(metadata AS TEXT) AS md FROM checkpoints WHERE thread_id = ?",
    )
    .bind("order-1")
    .fetch_one(&pool)
    .await?;
    let (id, md): (String, String) = (row.try_get("checkpoint_id")?, row.try_get("md")?);
    if id != checkpoint.id || !md.contains("\"order\": \"tea\"") {
        return Err(format!("sqlx read checkpoint {id} with metadata {md}").into());
    }
    let items: i64 = sqlx::query("SELECT count(*) FROM orders")
        .fetch_one(&pool)
        .await?
        .try_get(0)?;
    if items != 1 {
        return Err(format!("{items} orders after the saver wrote").into());
    }
    let version: String = sqlx::query("SELECT sqlite_version()")
        .fetch_one(&pool)
        .await?
        .try_get(0)?;
    println!(
        "sqlx and stategraph share SQLite {version} (rusqlite's {}): checkpoint {id} and the \
         orders table in one file",
        stategraph::sqlite::rusqlite::version()
    );
    drop(saver);
    pool.close().await;
    Ok(())
}
