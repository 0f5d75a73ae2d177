//! `diff DB THREAD A B`: what changed from checkpoint A to checkpoint B (each named by id,
//! id prefix or `step:N`, see [`crate::checkpoint_ref`]), channel by channel; for lists, the
//! elements appended or removed after their common beginning.
//! DeltaChannel values are rebuilt at both checkpoints ([`crate::state`]); a channel that
//! cannot be rebuilt at either is named (`not_rebuilt`), not reported as a change.

use std::process::ExitCode;

use serde_json::{json, Value as Json};
use stategraph_checkpoint::Value;

use crate::checkpoint_ref::resolve;
use crate::db::Db;
use crate::opt::DiffArgs;
use crate::render::{short, to_json};
use crate::snapshot::is_state_channel;
use crate::state::{self, State};
use crate::{Ctx, Result};

/// How one channel changed.
#[derive(Debug)]
pub enum Change<'a> {
    /// Only B has a value.
    Added(&'a Value),
    /// Only A has a value.
    Removed(&'a Value),
    /// Both are lists: after their common beginning, A's rest went and B's rest came.
    List {
        /// Elements both lists start with.
        common: usize,
        /// A's elements after the common beginning.
        removed: &'a [Value],
        /// B's elements after the common beginning.
        appended: &'a [Value],
    },
    /// Any other difference.
    Changed(&'a Value, &'a Value),
}

/// The change from `a` to `b`, or `None` if they are equal.
pub fn change<'a>(a: Option<&'a Value>, b: Option<&'a Value>) -> Option<Change<'a>> {
    match (a, b) {
        (None, None) => None,
        (None, Some(b)) => Some(Change::Added(b)),
        (Some(a), None) => Some(Change::Removed(a)),
        (Some(a), Some(b)) if a == b => None,
        (Some(a), Some(b)) => match (a.as_list(), b.as_list()) {
            (Some(la), Some(lb)) => {
                let common = la.iter().zip(lb).take_while(|(x, y)| x == y).count();
                Some(Change::List {
                    common,
                    removed: &la[common..],
                    appended: &lb[common..],
                })
            }
            _ => Some(Change::Changed(a, b)),
        },
    }
}

/// The DeltaChannels that could not be rebuilt at `a` or `b`: `(channel, checkpoint id,
/// reason)`, each channel once.
fn not_rebuilt(a: &State, b: &State) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for st in [a, b] {
        for (name, reason) in st.unknown() {
            if !out.iter().any(|(n, _, _)| n == name) {
                out.push((
                    name.to_owned(),
                    st.tuple.checkpoint.id.clone(),
                    reason.to_owned(),
                ));
            }
        }
    }
    out
}

/// One channel's change as JSON.
fn change_json(name: &str, c: &Change<'_>) -> Json {
    match c {
        Change::Added(v) => json!({"channel": name, "change": "added", "value": to_json(v)}),
        Change::Removed(v) => json!({"channel": name, "change": "removed", "value": to_json(v)}),
        Change::List {
            common,
            removed,
            appended,
        } => json!({
            "channel": name, "change": "list", "common": common,
            "removed": removed.iter().map(to_json).collect::<Vec<_>>(),
            "appended": appended.iter().map(to_json).collect::<Vec<_>>(),
        }),
        Change::Changed(x, y) => json!({
            "channel": name, "change": "changed",
            "before": to_json(x), "after": to_json(y),
        }),
    }
}

/// Runs the command.
pub async fn run(ctx: &mut Ctx, args: &DiffArgs) -> Result<ExitCode> {
    let db = Db::open_read(&args.db).await?;
    let id_a = resolve(&db, &args.thread, &args.ns, &args.a).await?;
    let id_b = resolve(&db, &args.thread, &args.ns, &args.b).await?;
    let sa = state::load(&db, &args.thread, &args.ns, Some(&id_a)).await?;
    let sb = state::load(&db, &args.thread, &args.ns, Some(&id_b)).await?;
    sa.warn_unknown();
    sb.warn_unknown();
    let (a, b) = (&sa.tuple, &sb.tuple);
    let (va, vb) = (&a.checkpoint.channel_values, &b.checkpoint.channel_values);
    let unknown = not_rebuilt(&sa, &sb);
    let mut names: Vec<&String> = va.keys().filter(|k| is_state_channel(k)).collect();
    for k in vb.keys().filter(|k| is_state_channel(k)) {
        if !va.contains_key(k) {
            names.push(k);
        }
    }
    let changes: Vec<(&String, Change<'_>)> = names
        .into_iter()
        .filter(|n| !unknown.iter().any(|(u, _, _)| u == *n))
        .filter_map(|n| change(va.get(n), vb.get(n)).map(|c| (n, c)))
        .collect();
    if ctx.json {
        let items: Vec<Json> = changes.iter().map(|(n, c)| change_json(n, c)).collect();
        let not: Vec<Json> = unknown
            .iter()
            .map(|(c, at, reason)| json!({"channel": c, "checkpoint_id": at, "reason": reason}))
            .collect();
        ctx.print_json(&json!({
            "a": id_a, "b": id_b, "channels": items, "not_rebuilt": not,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let s = ctx.style;
    let mut out = format!(
        "{} → {}  (step {} → {})\n",
        s.cyan(&id_a),
        s.cyan(&id_b),
        a.metadata.step.map(|x| x.to_string()).unwrap_or("?".into()),
        b.metadata.step.map(|x| x.to_string()).unwrap_or("?".into()),
    );
    if changes.is_empty() {
        out.push_str("no state channel changed\n");
    }
    for (name, at, reason) in &unknown {
        out.push_str(&s.yellow(&format!(
            "? {name}: not compared: a DeltaChannel not rebuilt at {at} ({reason}: its \
             reducer is the graph's own)\n"
        )));
    }
    for (name, c) in &changes {
        match c {
            Change::Added(v) => out.push_str(&s.green(&format!("+ {name}: {}\n", short(v, 200)))),
            Change::Removed(v) => out.push_str(&s.red(&format!("- {name}: {}\n", short(v, 200)))),
            Change::List {
                common,
                removed,
                appended,
            } => {
                out.push_str(&format!(
                    "~ {name}: {} kept, {} removed, {} appended\n",
                    common,
                    removed.len(),
                    appended.len()
                ));
                for v in *removed {
                    out.push_str(&s.red(&format!("    - {}\n", short(v, 200))));
                }
                for v in *appended {
                    out.push_str(&s.green(&format!("    + {}\n", short(v, 200))));
                }
            }
            Change::Changed(x, y) => {
                out.push_str(&format!("~ {name}\n"));
                out.push_str(&s.red(&format!("    - {}\n", short(x, 200))));
                out.push_str(&s.green(&format!("    + {}\n", short(y, 200))));
            }
        }
    }
    ctx.print(&out)?;
    Ok(ExitCode::SUCCESS)
}
