//! `prune`, `delete-thread` and `copy-thread`: the savers' maintenance operations
//! (`prune`, `delete_thread`, `copy_thread`), each with `--dry-run` showing what would go
//! without opening the database for writing.

use std::process::ExitCode;

use serde_json::json;
use stategraph_checkpoint::PruneStrategy;

use crate::commands::copy::thread_exists;
use crate::db::{Db, NsRow};
use crate::error::CliError;
use crate::opt::{CopyThreadArgs, DeleteArgs, PruneArgs};
use crate::{Ctx, Result};

/// What an operation removes from one thread: checkpoints, by namespace.
fn plan(rows: &[NsRow], thread: &str, keep_latest: bool) -> (i64, i64) {
    let mine: Vec<&NsRow> = rows.iter().filter(|r| r.thread_id == thread).collect();
    let total: i64 = mine.iter().map(|r| r.checkpoints).sum();
    let removed = if keep_latest {
        total - mine.len() as i64
    } else {
        total
    };
    (total, removed)
}

async fn report(
    ctx: &mut Ctx,
    name: &str,
    threads: &[String],
    keep_latest: bool,
    dry_run: bool,
    verb: &str,
) -> Result<Vec<(String, i64, i64)>> {
    let db = Db::open_read(name).await?;
    let rows = db.thread_rows().await?;
    let plans: Vec<(String, i64, i64)> = threads
        .iter()
        .map(|t| {
            let (total, removed) = plan(&rows, t, keep_latest);
            (t.clone(), total, removed)
        })
        .collect();
    drop(db);
    let prefix = if dry_run { "would " } else { "" };
    if ctx.json {
        ctx.print_json(&json!({
            "dry_run": dry_run,
            "threads": plans.iter().map(|(t, total, removed)| json!({
                "thread_id": t, "checkpoints": total, "removed": removed,
            })).collect::<Vec<_>>(),
        }))?;
    } else {
        let mut out = String::new();
        for (t, total, removed) in &plans {
            if *total == 0 {
                out.push_str(&format!("thread {t:?}: not found, nothing to {verb}\n"));
            } else {
                out.push_str(&format!(
                    "thread {t:?}: {prefix}remove {removed} of {total} checkpoints\n"
                ));
            }
        }
        if dry_run {
            out.push_str("dry run: nothing changed\n");
        }
        ctx.print(&out)?;
    }
    Ok(plans)
}

/// `prune DB --keep-latest|--delete THREADS…`.
pub async fn prune(ctx: &mut Ctx, args: &PruneArgs) -> Result<ExitCode> {
    let keep = args.keep_latest;
    if args.dry_run {
        report(ctx, &args.db, &args.threads, keep, true, "prune").await?;
        return Ok(ExitCode::SUCCESS);
    }
    let db = Db::open_write(&args.db).await?;
    let strategy = if keep {
        PruneStrategy::KeepLatest
    } else {
        PruneStrategy::Delete
    };
    // Count first (what goes), then prune.
    report_quiet_then(ctx, &args.db, &args.threads, keep, "prune", || async {
        db.saver.prune(&args.threads, strategy).await
    })
    .await
}

/// `delete-thread DB THREADS…`.
pub async fn delete(ctx: &mut Ctx, args: &DeleteArgs) -> Result<ExitCode> {
    if args.dry_run {
        report(ctx, &args.db, &args.threads, false, true, "delete").await?;
        return Ok(ExitCode::SUCCESS);
    }
    let db = Db::open_write(&args.db).await?;
    report_quiet_then(ctx, &args.db, &args.threads, false, "delete", || async {
        for t in &args.threads {
            db.saver.delete_thread(t).await?;
        }
        Ok(())
    })
    .await
}

/// Applies `op`, then reports what it removed (counted before it ran).
async fn report_quiet_then<F, Fut>(
    ctx: &mut Ctx,
    name: &str,
    threads: &[String],
    keep_latest: bool,
    verb: &str,
    op: F,
) -> Result<ExitCode>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = stategraph_checkpoint::Result<()>>,
{
    let rows = Db::open_read(name).await?.thread_rows().await?;
    op().await?;
    let plans: Vec<(String, i64, i64)> = threads
        .iter()
        .map(|t| {
            let (total, removed) = plan(&rows, t, keep_latest);
            (t.clone(), total, removed)
        })
        .collect();
    if ctx.json {
        ctx.print_json(&json!({
            "dry_run": false,
            "threads": plans.iter().map(|(t, total, removed)| json!({
                "thread_id": t, "checkpoints": total, "removed": removed,
            })).collect::<Vec<_>>(),
        }))?;
    } else {
        let mut out = String::new();
        for (t, total, removed) in &plans {
            if *total == 0 {
                out.push_str(&format!("thread {t:?}: not found, nothing to {verb}\n"));
            } else {
                out.push_str(&format!(
                    "thread {t:?}: removed {removed} of {total} checkpoints\n"
                ));
            }
        }
        ctx.print(&out)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `copy-thread DB SOURCE TARGET`.
pub async fn copy_thread(ctx: &mut Ctx, args: &CopyThreadArgs) -> Result<ExitCode> {
    let db = if args.dry_run {
        Db::open_read(&args.db).await?
    } else {
        Db::open_write(&args.db).await?
    };
    if !thread_exists(db.saver.as_ref(), &args.source).await? {
        return Err(CliError::NotFound(format!(
            "no thread {:?} in {}",
            args.source, args.db
        )));
    }
    let exists = thread_exists(db.saver.as_ref(), &args.target).await?;
    if exists && !args.overwrite {
        return Err(CliError::Refused(format!(
            "thread {:?} already exists; pass --overwrite to replace it",
            args.target
        )));
    }
    let rows = db.thread_rows().await?;
    let (total, _) = plan(&rows, &args.source, false);
    if !args.dry_run {
        if exists {
            db.saver.delete_thread(&args.target).await?;
        }
        db.saver.copy_thread(&args.source, &args.target).await?;
    }
    if ctx.json {
        ctx.print_json(&json!({
            "dry_run": args.dry_run, "source": args.source, "target": args.target,
            "checkpoints": total, "replaced": exists,
        }))?;
    } else {
        let verb = if args.dry_run { "would copy" } else { "copied" };
        ctx.print(&format!(
            "{verb} thread {:?} to {:?} ({total} checkpoints){}\n",
            args.source,
            args.target,
            if exists { ", replacing it" } else { "" }
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
