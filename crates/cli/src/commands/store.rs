//! `store namespaces|get|search DB ...`: reads the long-term store that LangGraph's
//! `SqliteStore` or `PostgresStore` (or stategraph's stores, on the same tables) wrote.
//!
//! Reading goes through the store crates' read API ([`BaseStore`]), never a second reader
//! of the rows. Reading never changes the database: a SQLite file is opened read-only (no
//! migration, no WAL switch, a deferred transaction) and Postgres connections run with
//! `default_transaction_read_only = on`; no TTL is refreshed by a read.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;
use stategraph_checkpoint_sqlite::read_only;
use stategraph_store::{BaseStore, Item, ListNamespacesOp, Namespace, SearchOp};
use stategraph_store_postgres::PostgresStore;
use stategraph_store_sqlite::SqliteStore;

use crate::db::{kind_of, pg_pool, Kind};
use crate::error::CliError;
use crate::opt::{StoreCommand, StoreGetArgs, StoreNamespacesArgs, StoreSearchArgs};
use crate::style::Table;
use crate::{Ctx, Result};

/// Runs a `store` subcommand.
pub async fn run(ctx: &mut Ctx, command: &StoreCommand) -> Result<ExitCode> {
    match command {
        StoreCommand::Namespaces(a) => namespaces(ctx, a).await,
        StoreCommand::Get(a) => get(ctx, a).await,
        StoreCommand::Search(a) => search(ctx, a).await,
    }
}

/// Opens the store of `name` for reading only.
pub async fn open_read(name: &str) -> Result<Arc<dyn BaseStore>> {
    match kind_of(name) {
        Kind::Sqlite => {
            let conn = read_only::open_file(Path::new(name))?;
            let store = SqliteStore::read_only(conn)
                .map_err(|e| CliError::Database(format!("{name}: {e}")))?;
            Ok(Arc::new(store))
        }
        Kind::Postgres => {
            let pool = pg_pool(name, true).await?;
            let client = pool
                .get()
                .await
                .map_err(|e| CliError::Database(format!("cannot connect: {e}")))?;
            let has_store = stategraph_store_postgres::inspect::has_store_table(&client)
                .await
                .map_err(|e| CliError::Database(e.to_string()))?;
            drop(client);
            if !has_store {
                return Err(CliError::Database(
                    "this database holds no store (no `store` table)".to_owned(),
                ));
            }
            Ok(Arc::new(PostgresStore::from_pool(pool)))
        }
    }
}

/// A namespace as written on the command line: labels joined by `.`; empty is the root.
pub fn parse_namespace(text: &str) -> Namespace {
    if text.is_empty() {
        Namespace(Vec::new())
    } else {
        Namespace::from_text(text)
    }
}

async fn namespaces(ctx: &mut Ctx, a: &StoreNamespacesArgs) -> Result<ExitCode> {
    let store = open_read(&a.db).await?;
    let mut op = ListNamespacesOp::default().limit(a.limit).offset(a.offset);
    if let Some(p) = &a.prefix {
        op = op.prefix(parse_namespace(p));
    }
    if let Some(s) = &a.suffix {
        op = op.suffix(parse_namespace(s));
    }
    if let Some(d) = a.max_depth {
        op = op.max_depth(d);
    }
    let found = store.list_namespaces(op).await?;
    if ctx.json {
        let list: Vec<_> = found.iter().map(|ns| json!(ns.labels())).collect();
        ctx.print_json(&json!(list))?;
    } else if found.is_empty() {
        ctx.print("no namespaces\n")?;
    } else {
        let mut text = String::new();
        for ns in &found {
            text.push_str(&ns.to_text());
            text.push('\n');
        }
        ctx.print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn get(ctx: &mut Ctx, a: &StoreGetArgs) -> Result<ExitCode> {
    let store = open_read(&a.db).await?;
    let namespace = parse_namespace(&a.namespace);
    let Some(item) = store.get(namespace, &a.key).await? else {
        return Err(CliError::NotFound(format!(
            "no item {:?} in namespace {:?}",
            a.key, a.namespace
        )));
    };
    if ctx.json {
        ctx.print_json(&item.to_json())?;
    } else {
        let text = describe(ctx, &item)?;
        ctx.print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn search(ctx: &mut Ctx, a: &StoreSearchArgs) -> Result<ExitCode> {
    let store = open_read(&a.db).await?;
    let mut op = SearchOp::new(parse_namespace(&a.prefix))
        .limit(a.limit)
        .offset(a.offset);
    if let Some(f) = &a.filter {
        let filter: serde_json::Value = serde_json::from_str(f)
            .map_err(|e| CliError::Refused(format!("--filter is not JSON: {e}")))?;
        if !filter.is_object() {
            return Err(CliError::Refused(
                "--filter must be a JSON object".to_owned(),
            ));
        }
        op = op.filter(filter);
    }
    let hits = store.search(op).await?;
    if ctx.json {
        let list: Vec<_> = hits.iter().map(|h| h.to_json()).collect();
        ctx.print_json(&json!(list))?;
    } else if hits.is_empty() {
        ctx.print("no items\n")?;
    } else {
        let mut table = Table::new(&["namespace", "key", "updated", "value"], &[]);
        for h in &hits {
            let value = serde_json::to_string(&h.item.value).map_err(std::io::Error::from)?;
            table.row(vec![
                h.item.namespace.to_text(),
                h.item.key.clone(),
                h.item.updated_at.to_iso(),
                shorten(&value, 60),
            ]);
        }
        ctx.print(&table.render(&ctx.style))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One item, for people: where it is, when it changed, its value as indented JSON.
fn describe(ctx: &Ctx, item: &Item) -> Result<String> {
    let value = serde_json::to_string_pretty(&item.value).map_err(std::io::Error::from)?;
    Ok(format!(
        "{} {}\n{} {}\n{} {}\n{} {}\n{}\n{value}\n",
        ctx.style.bold("namespace"),
        item.namespace.to_text(),
        ctx.style.bold("key"),
        item.key,
        ctx.style.bold("created"),
        item.created_at.to_iso(),
        ctx.style.bold("updated"),
        item.updated_at.to_iso(),
        ctx.style.bold("value"),
    ))
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}
