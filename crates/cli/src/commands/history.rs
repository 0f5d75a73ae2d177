//! `history DB THREAD`: the checkpoints of one namespace of a thread, newest first in
//! JSON (as LangGraph's `get_state_history`), as a tree for people (oldest first; the line
//! to the latest checkpoint, marked `← head`, is the trunk and other branches are forks;
//! each checkpoint's writes named by task, see [`crate::task_names`]).
//!
//! Checkpoints are read a page at a time, so memory stays bounded by the page and, for
//! the tree, by one short line per checkpoint. The tree reads the write rows of each
//! checkpoint that has writes once more, for their task paths (the saver's tuples carry
//! task ids only).

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;

use futures::TryStreamExt;
use stategraph_checkpoint::{CheckpointConfig, CheckpointTuple, ListOptions};

use crate::checkpoint_ref::resolve_opt;
use crate::db::Db;
use crate::opt::HistoryArgs;
use crate::snapshot::{interrupts, next, StateJson};
use crate::style::{progress, Style};
use crate::task_names::{send_targets, task_name};
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
    /// Writes per task, in the saver's order: `(task id, count)`.
    writes: Vec<(String, usize)>,
    /// The checkpoint's pending `Send` targets (what push tasks are named by).
    sends: Vec<Option<String>>,
}

/// Runs the command.
pub async fn run(ctx: &mut Ctx, args: &HistoryArgs) -> Result<ExitCode> {
    let db = Db::open_read(&args.db).await?;
    let before = resolve_opt(&db, &args.thread, &args.ns, args.before.as_ref()).await?;
    let total = db
        .count_checkpoints(&args.thread, &args.ns)
        .await?
        .min(args.limit.map_or(u64::MAX, |l| l as u64));
    let bar = progress(total, "reading history");
    if ctx.json {
        let out = ctx.out();
        out.write_all(b"[")?;
        let mut first = true;
        let mut tuples = stream(&db, &args.thread, &args.ns, args.limit, before);
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
    let latest_shown = before.is_none();
    for_each_page(&db, &args.thread, &args.ns, args.limit, before, |t| {
        bar.inc(1);
        nodes.push(Node {
            id: t.config.checkpoint_id.clone().unwrap_or_default(),
            parent: t
                .parent_config
                .as_ref()
                .and_then(|p| p.checkpoint_id.clone()),
            line: describe(&t, &style),
            writes: writes_per_task(&t),
            sends: send_targets(&t.checkpoint),
        });
        Ok(())
    })
    .await?;
    bar.finish_and_clear();
    if nodes.is_empty() {
        ctx.print(&format!(
            "no checkpoints for thread {:?} (namespace {:?})\n",
            args.thread, args.ns
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    for node in &mut nodes {
        name_writes(&db, &args.thread, &args.ns, node, &style).await?;
    }
    if latest_shown {
        // `list_stream` yields the newest first: the thread's latest checkpoint.
        nodes[0].line.push_str(&style.bold("  ← head"));
    }
    nodes.reverse();
    ctx.print(&tree(&nodes, &style))?;
    Ok(ExitCode::SUCCESS)
}

/// One checkpoint's line: id, step, source, next, interrupts (its writes are added by
/// [`name_writes`]).
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
    line
}

/// How many writes each task stored against the checkpoint, in the saver's order.
fn writes_per_task(t: &CheckpointTuple) -> Vec<(String, usize)> {
    let mut per_task: Vec<(String, usize)> = Vec::new();
    for w in &t.pending_writes {
        match per_task.iter_mut().find(|(task, _)| *task == w.task_id) {
            Some((_, n)) => *n += 1,
            None => per_task.push((w.task_id.clone(), 1)),
        }
    }
    per_task
}

/// Appends `writes: NAME (COUNT), …` to the node's line, each task named by the task path
/// stored with its writes ([`task_name`]).
async fn name_writes(
    db: &Db,
    thread: &str,
    ns: &str,
    node: &mut Node,
    style: &Style,
) -> Result<()> {
    if node.writes.is_empty() {
        return Ok(());
    }
    let paths: HashMap<String, String> = db
        .raw_writes(thread, ns, &node.id)
        .await?
        .into_iter()
        .map(|w| (w.task_id, w.task_path))
        .collect();
    let tasks: Vec<String> = node
        .writes
        .iter()
        .map(|(task, n)| {
            let path = paths.get(task).map_or("", String::as_str);
            format!("{} ({n})", task_name(task, path, &node.sends))
        })
        .collect();
    node.line
        .push_str(&style.dim(&format!("  writes: {}", tasks.join(", "))));
    Ok(())
}

/// The tree, oldest first: each checkpoint under its parent. Where a checkpoint has
/// several children, the one on the line to the newest checkpoint shown (the head, what
/// the user follows now) continues the trunk, and the others are drawn as indented
/// branches (forks); among those, the longest line is drawn last.
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
    // The head's line: the newest node (the last) and its ancestors.
    let mut on_head = vec![false; nodes.len()];
    let mut current = nodes.len().checked_sub(1);
    while let Some(i) = current {
        if on_head[i] {
            break;
        }
        on_head[i] = true;
        current = nodes[i]
            .parent
            .as_deref()
            .and_then(|p| index.get(p).copied());
    }
    for kids in &mut children {
        // The head's line last (it continues the trunk), then the longest; ties: the oldest.
        kids.sort_by_key(|&k| (on_head[k], height[k], std::cmp::Reverse(k)));
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
