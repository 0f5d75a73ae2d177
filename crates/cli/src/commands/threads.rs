//! `threads DB`: every thread with its namespaces, checkpoint count, latest step, last
//! update, bytes stored ([`Db::thread_sizes`], as `stats` counts them) and
//! whether it waits on an interrupt.

use std::process::ExitCode;

use indexmap::IndexMap;
use serde_json::json;
use stategraph_checkpoint::CheckpointConfig;

use crate::db::{Db, NsRow};
use crate::render::bytes;
use crate::snapshot::paused;
use crate::style::{progress, Table};
use crate::{Ctx, Result};

/// One thread's summary.
struct Summary {
    thread: String,
    namespaces: Vec<NsRow>,
    checkpoints: i64,
    bytes: i64,
    step: Option<i64>,
    updated: Option<String>,
    paused: bool,
}

/// Runs the command.
pub async fn run(ctx: &mut Ctx, name: &str) -> Result<ExitCode> {
    let db = Db::open_read(name).await?;
    let mut by_thread: IndexMap<String, Vec<NsRow>> = IndexMap::new();
    for row in db.thread_rows().await? {
        by_thread
            .entry(row.thread_id.clone())
            .or_default()
            .push(row);
    }
    let sizes = db.thread_sizes().await?;
    let bar = progress(by_thread.len() as u64, "reading threads");
    let mut out = Vec::with_capacity(by_thread.len());
    for (thread, namespaces) in by_thread {
        let root = namespaces
            .iter()
            .find(|r| r.ns.is_empty())
            .unwrap_or(&namespaces[0]);
        let latest = db
            .saver
            .get_tuple(&CheckpointConfig::for_checkpoint(
                thread.as_str(),
                root.ns.as_str(),
                root.latest.as_str(),
            ))
            .await?;
        let (step, updated, is_paused) = match &latest {
            Some(t) => (
                t.metadata.step,
                Some(t.checkpoint.ts.clone()),
                paused(&t.pending_writes),
            ),
            None => (None, None, false),
        };
        out.push(Summary {
            checkpoints: namespaces.iter().map(|r| r.checkpoints).sum(),
            bytes: sizes.get(&thread).copied().unwrap_or(0),
            thread,
            namespaces,
            step,
            updated,
            paused: is_paused,
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    if ctx.json {
        ctx.print_json(&summaries_json(&out))?;
        return Ok(ExitCode::SUCCESS);
    }
    let style = ctx.style;
    let mut table = Table::new(
        &[
            "THREAD",
            "NAMESPACES",
            "CHECKPOINTS",
            "STEP",
            "UPDATED",
            "BYTES",
            "STATUS",
        ],
        &[2, 3, 5],
    );
    for s in &out {
        let ns = s.namespaces.len().to_string();
        table.row(vec![
            s.thread.clone(),
            ns,
            s.checkpoints.to_string(),
            s.step.map(|x| x.to_string()).unwrap_or_default(),
            s.updated.clone().unwrap_or_default(),
            bytes(u64::try_from(s.bytes).unwrap_or(0)),
            if s.paused {
                style.yellow("interrupted")
            } else {
                String::new()
            },
        ]);
    }
    let text = if out.is_empty() {
        format!("no threads in {}\n", db.name)
    } else {
        table.render(&style)
    };
    ctx.print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The summaries as `--json` prints them.
fn summaries_json(out: &[Summary]) -> serde_json::Value {
    let items: Vec<_> = out
        .iter()
        .map(|s| {
            json!({
                "thread_id": s.thread,
                "namespaces": s.namespaces.iter().map(|r| json!({
                    "checkpoint_ns": r.ns,
                    "checkpoints": r.checkpoints,
                    "latest_checkpoint_id": r.latest,
                })).collect::<Vec<_>>(),
                "checkpoints": s.checkpoints,
                "latest_step": s.step,
                "updated_at": s.updated,
                "bytes": s.bytes,
                "interrupted": s.paused,
            })
        })
        .collect();
    serde_json::Value::Array(items)
}
