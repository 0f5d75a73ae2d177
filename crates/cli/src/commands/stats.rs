//! `stats DB [THREAD]`: where the bytes are. Per thread: its size (the definition
//! `threads` uses, [`Db::thread_sizes`]), bytes per channel (as the database stores them:
//! SQLite repeats every value in every checkpoint row, Postgres stores each `(channel,
//! version)` once), bytes per checkpoint along the thread, and a warning with the remedy
//! when the per-checkpoint size grows with the thread's length, which makes the total
//! grow with its square, and the thread is past [`WARN_BYTES`] (below it the growth
//! costs little).
//!
//! Checkpoints are read a page at a time; a value's encoded size is measured once per
//! `(channel, version)`, so memory stays bounded by a page and a few numbers per
//! checkpoint.

use std::collections::{HashMap, HashSet};
use std::process::ExitCode;

use indexmap::IndexMap;
use serde_json::json;
use stategraph_checkpoint::CheckpointConfig;

use crate::commands::history::for_each_page;
use crate::db::{Db, Kind};
use crate::error::CliError;
use crate::opt::StatsArgs;
use crate::render::bytes;
use crate::sizes;
use crate::style::{progress, Style, Table};
use crate::{Ctx, Result};

/// One channel's storage in a thread.
#[derive(Debug, Default, Clone)]
struct ChannelStats {
    stored: u64,
    latest: u64,
    versions: usize,
    is_list: bool,
}

/// The growth of per-checkpoint bytes along a thread (root namespace, oldest first).
#[derive(Debug, Clone)]
pub struct Growth {
    /// Bytes of the first checkpoint.
    pub first: u64,
    /// Bytes of the latest checkpoint.
    pub last: u64,
    /// Least-squares slope, bytes per checkpoint.
    pub slope: f64,
    /// Correlation of bytes with position (1 = a straight rising line).
    pub r: f64,
    /// Whether the total grows quadratically (see [`growth`]).
    pub quadratic: bool,
}

/// Fits `sizes` (per-checkpoint bytes, oldest first) with a line. Growth is called
/// quadratic when there are at least 8 checkpoints, the sizes rise steadily (r ≥ 0.9) and
/// the last quarter's mean is at least 3 times the first quarter's: then the thread's
/// total is about `slope · n² / 2`.
pub fn growth(sizes: &[u64]) -> Growth {
    let n = sizes.len();
    let first = sizes.first().copied().unwrap_or(0);
    let last = sizes.last().copied().unwrap_or(0);
    if n < 2 {
        return Growth {
            first,
            last,
            slope: 0.0,
            r: 0.0,
            quadratic: false,
        };
    }
    let nf = n as f64;
    let mx = (nf - 1.0) / 2.0;
    let my = sizes.iter().map(|&y| y as f64).sum::<f64>() / nf;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (i, &y) in sizes.iter().enumerate() {
        let (dx, dy) = (i as f64 - mx, y as f64 - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let r = if sxx > 0.0 && syy > 0.0 {
        sxy / (sxx * syy).sqrt()
    } else {
        0.0
    };
    let q = (n / 4).max(1);
    let head = sizes[..q].iter().sum::<u64>() as f64 / q as f64;
    let tail = sizes[n - q..].iter().sum::<u64>() as f64 / q as f64;
    Growth {
        first,
        last,
        slope,
        r,
        quadratic: n >= 8 && r >= 0.9 && tail >= 3.0 * head.max(1.0),
    }
}

/// The size (see [`Db::thread_sizes`]) from which a thread growing quadratically is warned
/// about: 1 MiB. A short thread storing its whole history at every checkpoint costs a
/// few kilobytes; the remedy (a DeltaChannel, a migration) pays off only past this.
pub const WARN_BYTES: u64 = 1024 * 1024;

/// What the channel a warning names holds, for its remedy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holds {
    /// LangChain messages (`MessagesState`, `add_messages`).
    Messages,
    /// Another list.
    List,
    /// Not a list, or no single channel stands out.
    Other,
}

/// One channel value of one checkpoint: channel, version, encoded size.
type Cell = (String, String, u64);

/// One thread's figures.
struct ThreadStats {
    thread: String,
    checkpoints: usize,
    total: u64,
    per_checkpoint: Vec<(String, u64)>,
    channels: IndexMap<String, ChannelStats>,
    growth: Growth,
    /// The channel a warning names and what it holds (set only for a warned thread).
    culprit: Option<(String, Holds)>,
}

/// Runs the command.
pub async fn run(ctx: &mut Ctx, args: &StatsArgs) -> Result<ExitCode> {
    let db = Db::open_read(&args.db).await?;
    let rows = db.thread_rows().await?;
    let mut threads: Vec<String> = Vec::new();
    for r in &rows {
        if !threads.contains(&r.thread_id) {
            threads.push(r.thread_id.clone());
        }
    }
    if let Some(t) = &args.thread {
        if !threads.contains(t) {
            return Err(CliError::NotFound(format!(
                "no thread {t:?} in {}",
                db.name
            )));
        }
        threads = vec![t.clone()];
    }
    let total: i64 = rows
        .iter()
        .filter(|r| threads.contains(&r.thread_id) && r.ns.is_empty())
        .map(|r| r.checkpoints)
        .sum();
    let bar = progress(u64::try_from(total).unwrap_or(0), "measuring");
    let sizes = db.thread_sizes().await?;
    let mut all = Vec::new();
    for t in &threads {
        let mut stats = thread_stats(&db, t, &bar).await?;
        stats.total = sizes.get(t).map_or(0, |b| u64::try_from(*b).unwrap_or(0));
        if stats.growth.quadratic && stats.total >= WARN_BYTES {
            stats.culprit = Some(culprit(&db, &stats).await?);
        }
        all.push(stats);
    }
    bar.finish_and_clear();
    if ctx.json {
        let items: Vec<_> = all
            .iter()
            .map(|s| {
                json!({
                    "thread_id": s.thread,
                    "checkpoints": s.checkpoints,
                    "bytes": s.total,
                    "channels": s.channels.iter().map(|(name, c)| json!({
                        "channel": name, "bytes": c.stored, "latest_bytes": c.latest,
                        "versions": c.versions,
                    })).collect::<Vec<_>>(),
                    "per_checkpoint": s.per_checkpoint.iter().map(|(id, b)| json!({
                        "checkpoint_id": id, "bytes": b,
                    })).collect::<Vec<_>>(),
                    "growth": {
                        "first_bytes": s.growth.first, "last_bytes": s.growth.last,
                        "slope_bytes_per_checkpoint": s.growth.slope, "r": s.growth.r,
                        "quadratic": s.growth.quadratic,
                    },
                    "warning": warning(s, &db.name),
                })
            })
            .collect();
        ctx.print_json(&serde_json::Value::Array(items))?;
    } else {
        let style = ctx.style;
        let text: Vec<String> = all.iter().map(|s| human(s, &db.name, &style)).collect();
        ctx.print(&text.join("\n"))?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn thread_stats(db: &Db, thread: &str, bar: &indicatif::ProgressBar) -> Result<ThreadStats> {
    if let Some(stats) = sqlite_thread_stats(db, thread, bar)? {
        return Ok(stats);
    }
    // Stored bytes of each checkpoint row of the root namespace.
    let mut row_bytes: HashMap<String, u64> = HashMap::new();
    for (ns, id, b) in db.checkpoint_bytes(thread).await? {
        if ns.is_empty() {
            row_bytes.insert(id, u64::try_from(b).unwrap_or(0));
        }
    }
    let per_value_store = db.kind() == Kind::Postgres;
    let serde = db.serde.clone();
    let mut sizes: HashMap<(String, String), u64> = HashMap::new();
    let mut channels: IndexMap<String, ChannelStats> = IndexMap::new();
    // Newest first: (id, [(channel, version key, size)]).
    let mut seen_order: Vec<(String, Vec<Cell>)> = Vec::new();
    let mut parents: HashMap<String, String> = HashMap::new();
    for_each_page(db, thread, "", None, None, |t| {
        let mut cells = Vec::new();
        for (name, value) in &t.checkpoint.channel_values {
            let version = t
                .checkpoint
                .channel_versions
                .get(name)
                .map(|v| format!("{v:?}"))
                .unwrap_or_default();
            let key = (name.clone(), version.clone());
            let size = match sizes.get(&key) {
                Some(s) => *s,
                None => {
                    let s = serde.dumps_typed(value)?.bytes.len() as u64;
                    sizes.insert(key, s);
                    s
                }
            };
            let entry = channels.entry(name.clone()).or_default();
            if entry.latest == 0 && entry.versions == 0 {
                entry.latest = size;
                entry.is_list = value.as_list().is_some();
            }
            cells.push((name.clone(), version, size));
        }
        if let Some(p) = t
            .parent_config
            .as_ref()
            .and_then(|p| p.checkpoint_id.clone())
        {
            parents.insert(t.checkpoint.id.clone(), p);
        }
        seen_order.push((t.checkpoint.id.clone(), cells));
        bar.inc(1);
        Ok(())
    })
    .await?;
    seen_order.reverse();
    let mut stored_versions: HashSet<(String, String)> = HashSet::new();
    let mut per_checkpoint = Vec::with_capacity(seen_order.len());
    for (id, cells) in &seen_order {
        let mut bytes_here = row_bytes.get(id).copied().unwrap_or(0);
        for (name, version, size) in cells {
            let entry = channels.entry(name.clone()).or_default();
            let new = stored_versions.insert((name.clone(), version.clone()));
            if new {
                entry.versions += 1;
            }
            if per_value_store {
                if new {
                    entry.stored += size;
                    bytes_here += size;
                }
            } else {
                entry.stored += size;
            }
        }
        per_checkpoint.push((id.clone(), bytes_here));
    }
    channels.sort_by(|_, a, _, b| b.stored.cmp(&a.stored));
    let line = longest_line(&per_checkpoint, &parents);
    Ok(ThreadStats {
        thread: thread.to_owned(),
        checkpoints: per_checkpoint.len(),
        total: 0,
        growth: growth(&line),
        per_checkpoint,
        channels,
        culprit: None,
    })
}

/// The figures of a SQLite thread read from its rows without decoding values: each
/// channel value is measured where it lies in the encoded checkpoint ([`sizes`]). `None`
/// on Postgres, or when a row is not a plain msgpack checkpoint (an encrypted one, say):
/// the caller then decodes through the saver.
fn sqlite_thread_stats(
    db: &Db,
    thread: &str,
    bar: &indicatif::ProgressBar,
) -> Result<Option<ThreadStats>> {
    let mut per_checkpoint = Vec::new();
    let mut parents: HashMap<String, String> = HashMap::new();
    let mut channels: IndexMap<String, ChannelStats> = IndexMap::new();
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut plain = true;
    let sqlite = db.for_each_sqlite_checkpoint(thread, "", |id, parent, tag, bytes, row| {
        if !plain {
            return Ok(());
        }
        let Some(found) = (tag == "msgpack")
            .then(|| sizes::checkpoint_sizes(bytes))
            .flatten()
        else {
            plain = false;
            return Ok(());
        };
        let versions: HashMap<&str, &str> = found
            .versions
            .iter()
            .map(|(c, v)| (c.as_str(), v.as_str()))
            .collect();
        for (channel, size, is_list) in &found.values {
            let entry = channels.entry(channel.clone()).or_default();
            entry.stored += size;
            entry.latest = *size;
            entry.is_list = *is_list;
            let version = versions.get(channel.as_str()).copied().unwrap_or("");
            if seen.insert((channel.clone(), version.to_owned())) {
                entry.versions += 1;
            }
        }
        if let Some(p) = parent {
            parents.insert(id.clone(), p);
        }
        per_checkpoint.push((id, row));
        bar.inc(1);
        Ok(())
    })?;
    if !sqlite || !plain {
        return Ok(None);
    }
    channels.sort_by(|_, a, _, b| b.stored.cmp(&a.stored));
    let line = longest_line(&per_checkpoint, &parents);
    Ok(Some(ThreadStats {
        thread: thread.to_owned(),
        checkpoints: per_checkpoint.len(),
        total: 0,
        growth: growth(&line),
        per_checkpoint,
        channels,
        culprit: None,
    }))
}

/// The sizes along the thread's longest line of checkpoints (root to the deepest
/// checkpoint, following parents), oldest first: forks do not interleave with it.
fn longest_line(per_checkpoint: &[(String, u64)], parents: &HashMap<String, String>) -> Vec<u64> {
    let size: HashMap<&str, u64> = per_checkpoint
        .iter()
        .map(|(id, b)| (id.as_str(), *b))
        .collect();
    let mut depth: HashMap<&str, usize> = HashMap::new();
    // Oldest first, so a parent's depth is known before its children's.
    for (id, _) in per_checkpoint {
        let d = parents
            .get(id)
            .and_then(|p| depth.get(p.as_str()))
            .map_or(0, |d| d + 1);
        depth.insert(id.as_str(), d);
    }
    let Some((mut at, _)) = per_checkpoint
        .iter()
        .map(|(id, _)| (id.as_str(), depth[id.as_str()]))
        .max_by_key(|(id, d)| (*d, *id))
    else {
        return Vec::new();
    };
    let mut line = vec![size[at]];
    // At most one step per checkpoint: parent links that loop (a corrupt file) end here.
    while let Some(p) = parents.get(at).filter(|p| size.contains_key(p.as_str())) {
        if line.len() >= per_checkpoint.len() {
            break;
        }
        at = p.as_str();
        line.push(size[at]);
    }
    line.reverse();
    line
}

/// The list channel whose latest value is the largest (the one stored again at every
/// checkpoint), and whether it holds messages (read from the thread's latest checkpoint).
async fn culprit(db: &Db, s: &ThreadStats) -> Result<(String, Holds)> {
    let Some(name) = s
        .channels
        .iter()
        .filter(|(_, c)| c.is_list)
        .max_by_key(|(_, c)| c.latest)
        .map(|(n, _)| n.clone())
    else {
        return Ok((String::new(), Holds::Other));
    };
    let latest = db
        .saver
        .get_tuple(&CheckpointConfig::thread(s.thread.as_str()).with_ns(""))
        .await?;
    let messages = latest
        .as_ref()
        .and_then(|t| t.checkpoint.channel_values.get(&name))
        .and_then(|v| v.as_list())
        .is_some_and(|items| items.iter().any(|v| v.as_message().is_some()));
    Ok((
        name,
        if messages {
            Holds::Messages
        } else {
            Holds::List
        },
    ))
}

/// The warning for a quadratically growing thread past [`WARN_BYTES`], with the remedy
/// that fits what the growing channel holds, or `None`.
fn warning(s: &ThreadStats, db: &str) -> Option<String> {
    let (name, holds) = s.culprit.as_ref()?;
    let what = match holds {
        Holds::Other => "every checkpoint stores a growing value again".to_owned(),
        _ => format!("every checkpoint stores the whole `{name}` list again"),
    };
    let remedy = match holds {
        Holds::Messages => format!(
            "keep `{name}` in a DeltaChannel, which stores each message once and the whole \
             list only every N updates: in Rust a `delta` field \
             (`#[state(delta(reducer = add_messages, snapshot_frequency = N))]`), or, for a \
             graph on `MessagesState`, `stategraph::prebuilt::DeltaMessagesState`; in \
             Python `Annotated[list[AnyMessage], DeltaChannel(_messages_delta_reducer, \
             snapshot_frequency=N)]`"
        ),
        Holds::List => format!(
            "keep `{name}` in a DeltaChannel, which stores what each step appended and the \
             whole list only every N updates: in Rust a `delta` field \
             (`#[state(delta(reducer = add, snapshot_frequency = N))]`); in Python \
             `Annotated[list, DeltaChannel(reducer, snapshot_frequency=N)]`"
        ),
        Holds::Other => "keep the growing value in a DeltaChannel (a `delta` field in Rust, \
             `DeltaChannel` in Python)"
            .to_owned(),
    };
    Some(format!(
        "storage of thread {:?} ({}) grows quadratically: {what} ({} at the first \
         checkpoint, {} at the latest, +{}/checkpoint). Remedy: {remedy}; new threads then \
         grow linearly. Or prune old checkpoints: `stategraph prune {db} --keep-latest {}`",
        s.thread,
        bytes(s.total),
        bytes(s.growth.first),
        bytes(s.growth.last),
        bytes(s.growth.slope.max(0.0) as u64),
        s.thread,
    ))
}

fn human(s: &ThreadStats, db: &str, style: &Style) -> String {
    let mut out = format!(
        "{} {}  {} checkpoints (root namespace), {} stored (checkpoints, writes and blobs of every namespace)\n",
        style.bold("thread"),
        s.thread,
        s.checkpoints,
        bytes(s.total)
    );
    let mut table = Table::new(
        &["CHANNEL", "STORED", "LATEST VALUE", "VERSIONS"],
        &[1, 2, 3],
    );
    for (name, c) in &s.channels {
        table.row(vec![
            name.clone(),
            bytes(c.stored),
            bytes(c.latest),
            c.versions.to_string(),
        ]);
    }
    out.push_str(&table.render(style));
    let n = s.per_checkpoint.len();
    if n > 0 {
        let mut at = vec![0usize, n / 4, n / 2, (3 * n) / 4, n - 1];
        at.dedup();
        let marks: Vec<String> = at
            .iter()
            .map(|&i| format!("#{i}: {}", bytes(s.per_checkpoint[i].1)))
            .collect();
        out.push_str(&format!(
            "per checkpoint (root namespace): {}\n",
            marks.join("  ")
        ));
    }
    if let Some(w) = warning(s, db) {
        out.push_str(&style.yellow(&format!("warning: {w}\n")));
    }
    out
}
