//! `copy DB_FROM DB_TO [--thread T]…`: moves threads between databases (SQLite and
//! Postgres, either way, either side written by Python or by stategraph) through the
//! savers: every checkpoint, write and value, so that the target reads equal to the
//! source. A thread that already exists in the target is refused unless `--overwrite`
//! (then it is deleted first); the check covers every thread before anything is written.

use std::process::ExitCode;

use serde_json::json;
use stategraph_checkpoint::{CheckpointConfig, CheckpointSaver, ListOptions};

use crate::db::{Db, NsRow};
use crate::error::CliError;
use crate::opt::CopyArgs;
use crate::style::progress;
use crate::{replay, Ctx, Result};

/// Whether `saver` holds any checkpoint of `thread`, in any namespace.
pub async fn thread_exists(saver: &dyn CheckpointSaver, thread: &str) -> Result<bool> {
    let found = saver
        .list(
            Some(&CheckpointConfig::thread(thread)),
            &ListOptions::default().limit(1),
        )
        .await?;
    Ok(!found.is_empty())
}

/// Runs the command.
pub async fn run(ctx: &mut Ctx, args: &CopyArgs) -> Result<ExitCode> {
    let source = Db::open_read(&args.from).await?;
    let rows = source.thread_rows().await?;
    let threads = selected(&source, &rows, &args.threads)?;
    let target = if args.dry_run {
        // A dry run must not create the target: look only if it already exists.
        Db::open_read(&args.to).await.ok()
    } else {
        Some(Db::open_write(&args.to).await?)
    };
    let mut existing = Vec::new();
    if let Some(target) = &target {
        for t in &threads {
            if thread_exists(target.saver.as_ref(), t).await? {
                existing.push(t.clone());
            }
        }
    }
    if !existing.is_empty() && !args.overwrite {
        return Err(CliError::Refused(format!(
            "{} already has thread(s) {}; pass --overwrite to replace them",
            args.to,
            existing
                .iter()
                .map(|t| format!("{t:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if args.dry_run {
        print_dry_run(ctx, &rows, &threads, &existing)?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(target) = target else {
        return Err(CliError::Refused("no target database".into()));
    };
    let total: i64 = threads.iter().map(|t| checkpoints(&rows, t)).sum();
    let bar = progress(u64::try_from(total).unwrap_or(0), "copying");
    let mut copied = Vec::new();
    for t in &threads {
        if existing.contains(t) {
            target.saver.delete_thread(t).await?;
        }
        let (checkpoints, writes) =
            replay::thread(&source, target.saver.as_ref(), t, t, Some(&bar)).await?;
        copied.push((t.clone(), checkpoints, writes));
    }
    bar.finish_and_clear();
    print_copied(ctx, &copied)?;
    Ok(ExitCode::SUCCESS)
}

/// The source's threads, in the order of its rows; only `wanted` ones when any are named
/// (each must exist).
fn selected(source: &Db, rows: &[NsRow], wanted: &[String]) -> Result<Vec<String>> {
    let mut threads: Vec<String> = Vec::new();
    for r in rows {
        if !threads.contains(&r.thread_id) {
            threads.push(r.thread_id.clone());
        }
    }
    if !wanted.is_empty() {
        for t in wanted {
            if !threads.contains(t) {
                return Err(CliError::NotFound(format!(
                    "no thread {t:?} in {}",
                    source.name
                )));
            }
        }
        threads.retain(|t| wanted.contains(t));
    }
    Ok(threads)
}

/// The checkpoints of `thread` in the source, over all its namespaces.
fn checkpoints(rows: &[NsRow], thread: &str) -> i64 {
    rows.iter()
        .filter(|r| r.thread_id == thread)
        .map(|r| r.checkpoints)
        .sum()
}

/// What a dry run would copy (and replace).
fn print_dry_run(
    ctx: &mut Ctx,
    rows: &[NsRow],
    threads: &[String],
    existing: &[String],
) -> Result<()> {
    let count = |t: &str| checkpoints(rows, t);
    if ctx.json {
        return ctx.print_json(&json!({
            "dry_run": true,
            "threads": threads.iter().map(|t| json!({
                "thread_id": t, "checkpoints": count(t), "replaces": existing.contains(t),
            })).collect::<Vec<_>>(),
        }));
    }
    let total: i64 = threads.iter().map(|t| count(t)).sum();
    let mut out = String::new();
    for t in threads {
        out.push_str(&format!(
            "would copy thread {t:?} ({} checkpoints){}\n",
            count(t),
            if existing.contains(t) {
                ", replacing the target's"
            } else {
                ""
            }
        ));
    }
    out.push_str(&format!(
        "dry run: nothing written ({} threads, {total} checkpoints)\n",
        threads.len()
    ));
    ctx.print(&out)
}

/// What was copied: per thread, its checkpoints and writes.
fn print_copied(ctx: &mut Ctx, copied: &[(String, usize, usize)]) -> Result<()> {
    if ctx.json {
        return ctx.print_json(&json!({
            "threads": copied.iter().map(|(t, c, w)| json!({
                "thread_id": t, "checkpoints": c, "writes": w,
            })).collect::<Vec<_>>(),
        }));
    }
    let mut out = String::new();
    for (t, c, w) in copied {
        out.push_str(&format!(
            "copied thread {t:?}: {c} checkpoints, {w} writes\n"
        ));
    }
    ctx.print(&out)
}
