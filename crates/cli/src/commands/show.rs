//! `show DB THREAD [CHECKPOINT]`: the state at a checkpoint (the latest by default; named
//! by id, id prefix or `step:N`, see [`crate::checkpoint_ref`]):
//! values decoded and shown readably, what runs next, interrupts, pending writes and
//! metadata; `--channel NAME` shows one channel's value.

use std::process::ExitCode;

use serde_json::json;
use stategraph_checkpoint::{CheckpointConfig, CheckpointTuple, Value};

use crate::checkpoint_ref::resolve_opt;
use crate::db::Db;
use crate::error::CliError;
use crate::opt::ShowArgs;
use crate::render::{message_line, repr_full, short, to_json};
use crate::snapshot::{interrupts, is_state_channel, next, snapshot_json};
use crate::style::{Style, Table};
use crate::{Ctx, Result};

/// Reads the checkpoint `id` (the latest if `None`) of `(thread, ns)`, or says which is
/// missing.
pub async fn load(db: &Db, thread: &str, ns: &str, id: Option<&str>) -> Result<CheckpointTuple> {
    let mut config = CheckpointConfig::thread(thread).with_ns(ns);
    if let Some(id) = id {
        config = config.with_checkpoint_id(id);
    }
    db.saver.get_tuple(&config).await?.ok_or_else(|| {
        CliError::NotFound(match id {
            Some(id) => format!("no checkpoint {id} in thread {thread:?} (namespace {ns:?})"),
            None => format!("no checkpoints for thread {thread:?} (namespace {ns:?})"),
        })
    })
}

/// Runs the command.
pub async fn run(ctx: &mut Ctx, args: &ShowArgs) -> Result<ExitCode> {
    let db = Db::open_read(&args.db).await?;
    let id = resolve_opt(&db, &args.thread, &args.ns, args.checkpoint.as_ref()).await?;
    let t = load(&db, &args.thread, &args.ns, id.as_deref()).await?;
    if let Some(channel) = &args.channel {
        let value = t.checkpoint.channel_values.get(channel).ok_or_else(|| {
            CliError::NotFound(format!(
                "channel {channel:?} has no value at checkpoint {}",
                t.checkpoint.id
            ))
        })?;
        if ctx.json {
            ctx.print_json(&json!({"channel": channel, "value": to_json(value)}))?;
        } else {
            ctx.print(&format!("{}\n", value_block(value, "")))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if ctx.json {
        ctx.print_json(&snapshot_json(&t))?;
    } else {
        let text = human(&t, &ctx.style);
        ctx.print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A value over several lines: a list of messages one message a line, other lists one
/// item a line, anything else as its full `repr`.
fn value_block(value: &Value, indent: &str) -> String {
    if let Some(items) = value.as_list() {
        if !items.is_empty() && items.iter().any(|v| message_line(v).is_some()) {
            return items
                .iter()
                .map(|v| format!("{indent}{}", short(v, 400)))
                .collect::<Vec<_>>()
                .join("\n");
        }
    }
    format!("{indent}{}", repr_full(value))
}

fn human(t: &CheckpointTuple, style: &Style) -> String {
    let mut out = String::new();
    let cp = &t.checkpoint;
    out.push_str(&format!(
        "{} {}  {} {}\n",
        style.bold("thread"),
        t.config.thread_id,
        style.bold("checkpoint"),
        style.cyan(&cp.id)
    ));
    if !t.config.ns().is_empty() {
        out.push_str(&format!("namespace {:?}\n", t.config.ns()));
    }
    out.push_str(&format!(
        "step {}  source {}  created {}\n",
        t.metadata.step.map(|s| s.to_string()).unwrap_or("?".into()),
        t.metadata
            .source
            .as_ref()
            .map(|s| s.as_str().to_owned())
            .unwrap_or("?".into()),
        cp.ts
    ));
    if let Some(parent) = t
        .parent_config
        .as_ref()
        .and_then(|p| p.checkpoint_id.as_ref())
    {
        out.push_str(&format!("parent {parent}\n"));
    }
    let next = next(cp);
    out.push_str(&format!(
        "next: {}\n",
        if next.is_empty() {
            "(nothing: the run is over)".to_owned()
        } else {
            next.join(", ")
        }
    ));
    let ints = interrupts(&t.pending_writes);
    if !ints.is_empty() {
        out.push_str(&style.yellow(&format!("interrupts ({}):\n", ints.len())));
        for (value, id) in ints {
            out.push_str(&format!("  {id}: {}\n", short(value, 300)));
        }
    }
    out.push_str(&format!("\n{}\n", style.bold("values:")));
    let mut any = false;
    for (name, value) in &cp.channel_values {
        if !is_state_channel(name) {
            continue;
        }
        any = true;
        match value.as_list() {
            Some(items) if items.iter().any(|v| message_line(v).is_some()) => {
                out.push_str(&format!(
                    "  {} ({} items):\n",
                    style.green(name),
                    items.len()
                ));
                out.push_str(&value_block(value, "    "));
                out.push('\n');
            }
            _ => out.push_str(&format!("  {}: {}\n", style.green(name), repr_full(value))),
        }
    }
    if !any {
        out.push_str("  (none)\n");
    }
    if !t.pending_writes.is_empty() {
        out.push_str(&format!("\n{}\n", style.bold("pending writes:")));
        let mut table = Table::new(&["TASK", "CHANNEL", "VALUE"], &[]);
        for w in &t.pending_writes {
            table.row(vec![
                w.task_id.clone(),
                w.channel.clone(),
                short(&w.value, 120),
            ]);
        }
        for line in table.render(&Style::plain()).lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out.push_str(&format!(
        "\n{}\n  {}\n",
        style.bold("metadata:"),
        repr_full(&t.metadata.to_value())
    ));
    out
}
