//! What a failed connect says: the server's `host:port`, the database, the cause once,
//! and never the password.

use stategraph_checkpoint::Error;
use stategraph_checkpoint_postgres::PostgresSaver;

use crate::support::{base_url, connect_raw, required};

/// Every message in the error's `source()` chain, the error's own first.
fn chain(e: &Error) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push(s.to_string());
        source = s.source();
    }
    out
}

/// A local port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let port = listener.local_addr().expect("its address").port();
    drop(listener);
    port
}

#[tokio::test]
async fn a_refused_connect_names_host_port_database_and_cause_but_not_the_password() {
    let port = closed_port();
    for url in [
        format!("postgresql://ann:s3cret-pw@127.0.0.1:{port}/appdb"),
        format!("host=127.0.0.1 port={port} user=ann password=s3cret-pw dbname=appdb"),
    ] {
        let err = PostgresSaver::connect(&url).await.expect_err("refused");
        assert_eq!(
            chain(&err),
            [format!(
                "backend error: postgres 127.0.0.1:{port}/appdb, connect: error connecting to \
                 server: Connection refused (os error 111)"
            )],
            "one message, no repeated source"
        );
        assert!(!err.to_string().contains("s3cret"));
    }
    // Without a database name libpq connects to the user's database.
    let err = PostgresSaver::connect(&format!("postgresql://ann@127.0.0.1:{port}"))
        .await
        .expect_err("refused");
    assert!(
        err.to_string().starts_with(&format!(
            "backend error: postgres 127.0.0.1:{port}/ann, connect: "
        )),
        "{err}"
    );
}

#[tokio::test]
async fn a_missing_database_names_it_once_with_the_servers_reason() {
    let base = base_url();
    if connect_raw(&base).await.is_err() && !required() {
        println!("note: Postgres at {base} is unreachable; test not run");
        return;
    }
    let config: tokio_postgres::Config = base.parse().expect("the test url");
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "127.0.0.1".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("postgres");
    let url = format!("postgresql://{user}:s3cret-pw@{host}:{port}/no_such_db_sg");
    let err = PostgresSaver::connect(&url).await.expect_err("no database");
    let messages = chain(&err);
    assert_eq!(
        messages,
        [format!(
            "backend error: postgres {host}:{port}/no_such_db_sg, connect: SQLSTATE 3D000 \
             (FATAL): database \"no_such_db_sg\" does not exist"
        )]
    );
    assert!(!messages[0].contains("s3cret"));
    // `main` returning the error with `?` prints its Debug: the same sentence, not the
    // driver's `DbError { severity, file: Some("postinit.c"), .. }` (issue 21).
    let debug = format!("{err:?}");
    assert_eq!(debug, messages[0]);
    assert!(!debug.contains("DbError"), "{debug}");
}
