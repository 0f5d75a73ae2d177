//! `PostgresOptions::read_only`: every connection of the pool refuses writes, and the
//! URL's own `options` still apply.

use stategraph_checkpoint_postgres::{build_pool, PostgresOptions};

use crate::support::{base_url, connect_raw, required, url_in_schema};

#[tokio::test]
async fn a_read_only_pool_refuses_writes_and_keeps_the_urls_options() {
    let base = base_url();
    if connect_raw(&base).await.is_err() && !required() {
        println!("note: Postgres at {base} is unreachable; test not run");
        return;
    }
    // The URL already sends `options` (a search_path); read-only is added to them.
    let url = url_in_schema(&base, "sg_read_only_probe");
    let options = PostgresOptions::default()
        .with_pool_size(2)
        .with_read_only(true);
    let pool = build_pool(&url, &options).expect("a pool");
    let client = pool.get().await.expect("a connection");
    let show = |name: &'static str| {
        let client = &client;
        async move {
            let row = client.query_one(&format!("SHOW {name}"), &[]).await;
            row.expect("SHOW").get::<_, String>(0)
        }
    };
    assert_eq!(show("default_transaction_read_only").await, "on");
    assert_eq!(show("search_path").await, "sg_read_only_probe");
    let err = client
        .batch_execute("CREATE TEMP TABLE sg_read_only_probe (x int)")
        .await
        .expect_err("a read-only transaction refuses to create a table");
    let code = err.as_db_error().map(|db| db.code().code().to_owned());
    assert_eq!(code.as_deref(), Some("25006"), "{err}");

    // The default pool writes.
    let pool = build_pool(&base, &PostgresOptions::default()).expect("a pool");
    let client = pool.get().await.expect("a connection");
    let row = client
        .query_one("SHOW default_transaction_read_only", &[])
        .await
        .expect("SHOW");
    assert_eq!(row.get::<_, String>(0), "off");
}
