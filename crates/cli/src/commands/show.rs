//! `show DB THREAD [CHECKPOINT]`: the state at a checkpoint (the latest by default; named
//! by id, id prefix or `step:N`, see [`crate::checkpoint_ref`]):
//! values decoded and shown readably, what runs next, interrupts, pending writes and
//! metadata; `--channel NAME` shows one channel's value. DeltaChannel values are rebuilt
//! from their history ([`crate::state`]); one whose reducer the stored rows do not reveal
//! is shown as its stored value and writes, with a warning.

use std::process::ExitCode;

use indexmap::IndexMap;
use serde_json::json;
use stategraph_checkpoint::{DeltaValue, Value};

use crate::checkpoint_ref::resolve_opt;
use crate::db::Db;
use crate::error::CliError;
use crate::opt::ShowArgs;
use crate::render::{message_line, repr_full, short, to_json};
use crate::snapshot::{delta_json, interrupts, is_state_channel, next, state_json};
use crate::state::{self, State};
use crate::style::{Style, Table};
use crate::{Ctx, Result};

/// Runs the command.
pub async fn run(ctx: &mut Ctx, args: &ShowArgs) -> Result<ExitCode> {
    let db = Db::open_read(&args.db).await?;
    let id = resolve_opt(&db, &args.thread, &args.ns, args.checkpoint.as_ref()).await?;
    let st = state::load(&db, &args.thread, &args.ns, id.as_deref()).await?;
    st.warn_unknown();
    let t = &st.tuple;
    if let Some(channel) = &args.channel {
        let Some(value) = t.checkpoint.channel_values.get(channel) else {
            if let Some(d @ DeltaValue::Unknown { .. }) = st.delta.get(channel) {
                if ctx.json {
                    let mut one = IndexMap::new();
                    one.insert(channel.clone(), d.clone());
                    ctx.print_json(&json!({
                        "channel": channel, "value": null,
                        "delta_channel": delta_json(&one)[channel.as_str()],
                    }))?;
                } else {
                    let note = state::note(Some(d), 400).unwrap_or_default();
                    ctx.print(&format!("{note}\n"))?;
                }
                return Ok(ExitCode::FAILURE);
            }
            return Err(CliError::NotFound(format!(
                "channel {channel:?} has no value at checkpoint {}",
                t.checkpoint.id
            )));
        };
        if ctx.json {
            ctx.print_json(&json!({"channel": channel, "value": to_json(value)}))?;
        } else {
            ctx.print(&format!("{}\n", value_block(value, "")))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if ctx.json {
        ctx.print_json(&state_json(t, &st.delta))?;
    } else {
        let text = human(&st, &ctx.style);
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

fn human(st: &State, style: &Style) -> String {
    let mut out = String::new();
    let t = &st.tuple;
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
    values_text(st, style, &mut out);
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

/// The `values:` section: each state value, DeltaChannels with how they were obtained.
fn values_text(st: &State, style: &Style, out: &mut String) {
    let cp = &st.tuple.checkpoint;
    out.push_str(&format!("\n{}\n", style.bold("values:")));
    let mut any = false;
    for (name, value) in &cp.channel_values {
        if !is_state_channel(name) {
            continue;
        }
        any = true;
        let note = state::note(st.delta.get(name), 200)
            .map(|n| format!("  {}", style.dim(&format!("[{n}]"))))
            .unwrap_or_default();
        match value.as_list() {
            Some(items) if items.iter().any(|v| message_line(v).is_some()) => {
                out.push_str(&format!(
                    "  {} ({} items):{note}\n",
                    style.green(name),
                    items.len()
                ));
                out.push_str(&value_block(value, "    "));
                out.push('\n');
            }
            _ => out.push_str(&format!(
                "  {}: {}{note}\n",
                style.green(name),
                repr_full(value)
            )),
        }
    }
    for (name, d) in &st.delta {
        if let Some(note) =
            state::note(Some(d), 200).filter(|_| !cp.channel_values.contains_key(name))
        {
            any = true;
            let note = note.replace('\n', "\n    ");
            out.push_str(&format!(
                "  {}: {}\n",
                style.green(name),
                style.yellow(&note)
            ));
        }
    }
    if !any {
        out.push_str("  (none)\n");
    }
}
