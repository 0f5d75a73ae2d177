//! `history DB THREAD`: the checkpoints of one namespace of a thread, newest first in
//! JSON (as LangGraph's `get_state_history`), as a tree for people (oldest first, forks
//! as branches).
//!
//! Checkpoints are read a page at a time, so memory stays bounded by the page and, for
//! the tree, by one short line per checkpoint.

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;

use futures::TryStreamExt;
use stategraph_checkpoint::{CheckpointConfig, CheckpointTuple, ListOptions};

use crate::db::Db;
use crate::opt::HistoryArgs;
use crate::snapshot::{interrupts, next, StateJson};
use crate::style::{progress, Style};
use crate::{Ctx, Result};

/// Calls `f` on every checkpoint of `(thread, ns)` older than `before`, newest first, at
/// most `limit`, from the saver's `list_stream` (which reads in bounded pages).
pub async fn for_each_page(
    db: &Db,
    thread: &str,
    ns: &str,
    limit: Option<usize>,
    before: Option<String>,
    mut f: impl FnMut(CheckpointTuple) -> Result<()>,
) -> Result<usize> {
    let mut tuples = stream(db, thread, ns, limit, before);
    let mut seen = 0usize;
    while let Some(t) = tuples.try_next().await? {
        f(t)?;
        seen += 1;
    }
    Ok(seen)
}

/// The checkpoints of `(thread, ns)` older than `before`, newest first, at most `limit`,
/// as the saver's `list_stream` pages them.
fn stream<'a>(
    db: &'a Db,
    thread: &str,
    ns: &str,
    limit: Option<usize>,
    before: Option<String>,
) -> futures::stream::BoxStream<'a, stategraph_checkpoint::Result<CheckpointTuple>> {
    let config = CheckpointConfig::thread(thread).with_ns(ns);
    let mut options = ListOptions {
        limit,
        ..ListOptions::default()
    };
    if let Some(id) = before {
        options = options.before(CheckpointConfig::for_checkpoint(thread, ns, id));
    }
    db.saver.list_stream(Some(config), options)
}

/// What the tree shows of one checkpoint.
struct Node {
    id: String,
    parent: Option<String>,
    line: String,
}

/// Runs the command.
pub async fn run(ctx: &mut Ctx, args: &HistoryArgs) -> Result<ExitCode> {
    let db = Db::open_read(&args.db).await?;
    let total = db
        .count_checkpoints(&args.thread, &args.ns)
        .await?
        .min(args.limit.map_or(u64::MAX, |l| l as u64));
    let bar = progress(total, "reading history");
    if ctx.json {
        let out = ctx.out();
        out.write_all(b"[")?;
        let mut first = true;
        let mut tuples = stream(&db, &args.thread, &args.ns, args.limit, args.before.clone());
        while let Some(t) = tuples.try_next().await? {
            // DeltaChannel values rebuilt, as `show` does.
            let st = crate::state::rebuild(&db, t).await?;
            st.warn_unknown();
            bar.inc(1);
            out.write_all(if first { b"\n" } else { b",\n" })?;
            first = false;
            let json = StateJson {
                tuple: &st.tuple,
                delta: &st.delta,
            };
            serde_json::to_writer(&mut *out, &json).map_err(std::io::Error::from)?;
        }
        out.write_all(b"\n]\n")?;
        bar.finish_and_clear();
        return Ok(ExitCode::SUCCESS);
    }
    let style = ctx.style;
    let mut nodes = Vec::new();
    for_each_page(
        &db,
        &args.thread,
        &args.ns,
        args.limit,
        args.before.clone(),
        |t| {
            bar.inc(1);
            nodes.push(Node {
                id: t.config.checkpoint_id.clone().unwrap_or_default(),
                parent: t
                    .parent_config
                    .as_ref()
                    .and_then(|p| p.checkpoint_id.clone()),
                line: describe(&t, &style),
            });
            Ok(())
        },
    )
    .await?;
    bar.finish_and_clear();
    if nodes.is_empty() {
        ctx.print(&format!(
            "no checkpoints for thread {:?} (namespace {:?})\n",
            args.thread, args.ns
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    nodes.reverse();
    ctx.print(&tree(&nodes, &style))?;
    Ok(ExitCode::SUCCESS)
}

/// One checkpoint's line: id, step, source, next, interrupts, writes per task.
fn describe(t: &CheckpointTuple, style: &Style) -> String {
    let id = t.config.checkpoint_id.clone().unwrap_or_default();
    let mut line = format!(
        "{}  step {}  {}",
        style.cyan(&id),
        t.metadata.step.map(|s| s.to_string()).unwrap_or("?".into()),
        t.metadata
            .source
            .as_ref()
            .map(|s| s.as_str().to_owned())
            .unwrap_or_default()
    );
    let next = next(&t.checkpoint);
    if !next.is_empty() {
        line.push_str(&format!("  next: {}", next.join(", ")));
    }
    let interrupts = interrupts(&t.pending_writes);
    if !interrupts.is_empty() {
        line.push_str(&style.yellow(&format!("  interrupts: {}", interrupts.len())));
    }
    let mut per_task: Vec<(&str, usize)> = Vec::new();
    for w in &t.pending_writes {
        match per_task.iter_mut().find(|(task, _)| *task == w.task_id) {
            Some((_, n)) => *n += 1,
            None => per_task.push((&w.task_id, 1)),
        }
    }
    if !per_task.is_empty() {
        let tasks: Vec<String> = per_task
            .iter()
            .map(|(task, n)| format!("{}…={n}", task.chars().take(8).collect::<String>()))
            .collect();
        line.push_str(&style.dim(&format!("  writes: {}", tasks.join(" "))));
    }
    line
}

/// The tree, oldest first: each checkpoint under its parent; where a checkpoint has
/// several children, the one starting the longest line continues the line and the others
/// are drawn as indented branches (forks).
fn tree(nodes: &[Node], style: &Style) -> String {
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        match n.parent.as_deref().and_then(|p| index.get(p)) {
            Some(&p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    // Height of each subtree (nodes are oldest first, so children come after parents).
    let mut height = vec![0usize; nodes.len()];
    for i in (0..nodes.len()).rev() {
        height[i] = children[i]
            .iter()
            .map(|&c| height[c] + 1)
            .max()
            .unwrap_or(0);
    }
    for kids in &mut children {
        // The longest line last (it continues the line); ties: the oldest.
        kids.sort_by_key(|&k| (height[k], std::cmp::Reverse(k)));
    }
    let mut out = String::new();
    for (r, &root) in roots.iter().enumerate() {
        if r > 0 {
            out.push('\n');
        }
        walk(root, "", nodes, &children, style, &mut out);
    }
    out
}

fn walk(
    start: usize,
    prefix: &str,
    nodes: &[Node],
    children: &[Vec<usize>],
    style: &Style,
    out: &mut String,
) {
    let mut current = Some(start);
    while let Some(i) = current {
        out.push_str(&format!("{prefix}● {}\n", nodes[i].line));
        let kids = &children[i];
        if let Some((last, forks)) = kids.split_last() {
            for &fork in forks {
                out.push_str(&format!("{prefix}├─╮ {}\n", style.dim("fork")));
                walk(fork, &format!("{prefix}│ "), nodes, children, style, out);
            }
            current = Some(*last);
        } else {
            current = None;
        }
    }
}
