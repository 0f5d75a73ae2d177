//! The S4–S7 tables: Rust and Python runs (both in the driver's JSON-lines form) side by
//! side, for time and for storage per checkpoint.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value as J;

use crate::report::{fmt, Spread};

/// Runs by `(scenario, variant, cp)`, as [`crate::report::read_python`] reads them.
pub type Runs = BTreeMap<(String, String, String), Vec<J>>;

/// Which side a figure favours when larger.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Better {
    /// Times and bytes: the ratio is Python / Rust.
    Lower,
    /// Throughput: the ratio is Rust / Python.
    Higher,
}

/// One row: a scenario's figure, its unit and which way is better.
struct Row {
    label: &'static str,
    scenario: &'static str,
    variant: &'static str,
    key: &'static str,
    unit: &'static str,
    better: Better,
}

const fn row(
    label: &'static str,
    scenario: &'static str,
    variant: &'static str,
    key: &'static str,
    unit: &'static str,
    better: Better,
) -> Row {
    Row {
        label,
        scenario,
        variant,
        key,
        unit,
        better,
    }
}

/// The time rows.
const TIME_ROWS: &[Row] = &[
    row(
        "S4 chat, first 100 turns",
        "S4",
        "-",
        "turn_first100_ms",
        "ms/turn (median)",
        Better::Lower,
    ),
    row(
        "S4 chat, last 100 turns",
        "S4",
        "-",
        "turn_last100_ms",
        "ms/turn (median)",
        Better::Lower,
    ),
    row(
        "S4 chat, all turns",
        "S4",
        "-",
        "total_s",
        "s",
        Better::Lower,
    ),
    row(
        "S6 whole history",
        "S4",
        "-",
        "s6_history_s",
        "s",
        Better::Lower,
    ),
    row(
        "S6 whole history",
        "S4",
        "-",
        "s6_history_us_per_ckpt",
        "µs/checkpoint",
        Better::Lower,
    ),
    row(
        "S6 whole history, its peak memory",
        "S4",
        "-",
        "s6_history_peak_mb",
        "MiB above RSS before",
        Better::Lower,
    ),
    row(
        "S6 peak RSS of the process",
        "S4",
        "-",
        "peak_rss_after_s6_mb",
        "MiB",
        Better::Lower,
    ),
    row(
        "S6 get_state, middle",
        "S4",
        "-",
        "s6_get_state_mid_ms",
        "ms",
        Better::Lower,
    ),
    row(
        "S6 get_state, latest",
        "S4",
        "-",
        "s6_get_state_latest_ms",
        "ms",
        Better::Lower,
    ),
    row(
        "S4′ delta chat, first 100 turns",
        "S4",
        "delta",
        "turn_first100_ms",
        "ms/turn (median)",
        Better::Lower,
    ),
    row(
        "S4′ delta chat, last 100 turns",
        "S4",
        "delta",
        "turn_last100_ms",
        "ms/turn (median)",
        Better::Lower,
    ),
    row(
        "S4′ delta chat, all turns",
        "S4",
        "delta",
        "total_s",
        "s",
        Better::Lower,
    ),
    row(
        "S6′ delta get_state, latest",
        "S4",
        "delta",
        "s6_get_state_latest_ms",
        "ms",
        Better::Lower,
    ),
    row(
        "S5 bigstate, 1 MiB str",
        "S5",
        "str",
        "ms_per_step",
        "ms/step",
        Better::Lower,
    ),
    row(
        "S5′ bigobj, 1 MiB in a map",
        "S5",
        "obj",
        "ms_per_step",
        "ms/step",
        Better::Lower,
    ),
    row(
        "S7 2 processes × 1",
        "S7",
        "2x1",
        "invokes_per_s",
        "invokes/s",
        Better::Higher,
    ),
    row(
        "S7 2 processes × 2",
        "S7",
        "2x2",
        "invokes_per_s",
        "invokes/s",
        Better::Higher,
    ),
    row(
        "S7 2 processes × 4",
        "S7",
        "2x4",
        "invokes_per_s",
        "invokes/s",
        Better::Higher,
    ),
    row(
        "S7 2 processes × 8",
        "S7",
        "2x8",
        "invokes_per_s",
        "invokes/s",
        Better::Higher,
    ),
    row(
        "S7 2 processes × 1",
        "S7",
        "2x1",
        "p50_ms",
        "p50 ms",
        Better::Lower,
    ),
    row(
        "S7 2 processes × 2",
        "S7",
        "2x2",
        "p50_ms",
        "p50 ms",
        Better::Lower,
    ),
    row(
        "S7 2 processes × 4",
        "S7",
        "2x4",
        "p50_ms",
        "p50 ms",
        Better::Lower,
    ),
    row(
        "S7 2 processes × 8",
        "S7",
        "2x8",
        "p50_ms",
        "p50 ms",
        Better::Lower,
    ),
    row(
        "S7 2 processes × 1",
        "S7",
        "2x1",
        "p99_ms",
        "p99 ms",
        Better::Lower,
    ),
    row(
        "S7 2 processes × 2",
        "S7",
        "2x2",
        "p99_ms",
        "p99 ms",
        Better::Lower,
    ),
    row(
        "S7 2 processes × 4",
        "S7",
        "2x4",
        "p99_ms",
        "p99 ms",
        Better::Lower,
    ),
    row(
        "S7 2 processes × 8",
        "S7",
        "2x8",
        "p99_ms",
        "p99 ms",
        Better::Lower,
    ),
];

/// The storage rows (bytes per checkpoint).
const STORAGE_ROWS: &[Row] = &[
    row(
        "S4 chat, end of the thread",
        "S4",
        "-",
        "bytes_per_ckpt",
        "bytes/checkpoint",
        Better::Lower,
    ),
    row(
        "S4′ delta chat, end of the thread",
        "S4",
        "delta",
        "bytes_per_ckpt",
        "bytes/checkpoint",
        Better::Lower,
    ),
    row(
        "S5 bigstate, 1 MiB str",
        "S5",
        "str",
        "storage_per_ckpt_bytes",
        "bytes/checkpoint",
        Better::Lower,
    ),
    row(
        "S5′ bigobj, 1 MiB in a map",
        "S5",
        "obj",
        "storage_per_ckpt_bytes",
        "bytes/checkpoint",
        Better::Lower,
    ),
];

/// The spread of one figure over the runs of a cell.
fn spread(runs: &Runs, scenario: &str, variant: &str, cp: &str, key: &str) -> Option<Spread> {
    let cell = runs.get(&(scenario.to_owned(), variant.to_owned(), cp.to_owned()))?;
    Spread::of(cell.iter().filter_map(|r| r.get(key)?.as_f64()).collect())
}

/// The ratio cell: how many times better Rust is.
fn ratio(r: Option<Spread>, p: Option<Spread>, better: Better) -> String {
    match (r, p) {
        (Some(r), Some(p)) if r.median > 0.0 && p.median > 0.0 => {
            let x = match better {
                Better::Lower => p.median / r.median,
                Better::Higher => r.median / p.median,
            };
            format!("**{}×**", fmt(x))
        }
        _ => "n/a".to_owned(),
    }
}

fn table(rows: &[Row], rust: &Runs, python: &Runs, cps: &[&str], out: &mut String) {
    out.push_str("| scenario | saver | unit | Rust median (min–max) | Python median (min–max) | advantage |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for row in rows {
        for &cp in cps {
            let r = spread(rust, row.scenario, row.variant, cp, row.key);
            let p = spread(python, row.scenario, row.variant, cp, row.key);
            if r.is_none() && p.is_none() {
                continue;
            }
            let _ = writeln!(
                out,
                "| {} | {cp} | {} | {} | {} | {} |",
                row.label,
                row.unit,
                r.map_or("n/a".to_owned(), Spread::cell),
                p.map_or("n/a".to_owned(), Spread::cell),
                ratio(r, p, row.better)
            );
        }
    }
}

/// Bytes per checkpoint at each storage sample of S4 (the `growth` list of a run), median
/// over runs, by turn.
fn growth(runs: &Runs, cp: &str, variant: &str) -> BTreeMap<u64, Spread> {
    let mut by_turn: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let key = ("S4".to_owned(), variant.to_owned(), cp.to_owned());
    for run in runs.get(&key).into_iter().flatten() {
        for point in run
            .get("growth")
            .and_then(J::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(turn), Some(b)) =
                (point["turn"].as_u64(), point["bytes_per_ckpt"].as_f64())
            {
                by_turn.entry(turn).or_default().push(b);
            }
        }
    }
    by_turn
        .into_iter()
        .filter_map(|(t, v)| Some((t, Spread::of(v)?)))
        .collect()
}

/// The markdown of the section's tables: times, storage per checkpoint, and storage as
/// the S4 thread grows.
pub fn tables(rust: &Runs, python: &Runs, cps: &[&str]) -> String {
    let mut out = String::new();
    out.push_str("Time (advantage: Python / Rust for times, Rust / Python for invokes/s):\n\n");
    table(TIME_ROWS, rust, python, cps, &mut out);
    out.push_str("\nStorage per checkpoint (advantage: Python / Rust):\n\n");
    table(STORAGE_ROWS, rust, python, cps, &mut out);
    out.push_str(
        "\nS4 storage per checkpoint as the thread grows (bytes/checkpoint, median over runs):\n\n",
    );
    out.push_str("| saver | after turn | Rust | Python | Python / Rust |\n|---|---|---|---|---|\n");
    for (variant, cp) in ["-", "delta"]
        .iter()
        .flat_map(|v| cps.iter().map(move |cp| (*v, *cp)))
    {
        let (r, p) = (growth(rust, cp, variant), growth(python, cp, variant));
        let cp = if variant == "delta" {
            format!("{cp} (S4′ delta)")
        } else {
            cp.to_owned()
        };
        let turns: std::collections::BTreeSet<u64> = r.keys().chain(p.keys()).copied().collect();
        for turn in turns {
            let (r, p) = (r.get(&turn).copied(), p.get(&turn).copied());
            let cell = |s: Option<Spread>| s.map_or("n/a".to_owned(), |s| fmt(s.median));
            let _ = writeln!(
                out,
                "| {cp} | {turn} | {} | {} | {} |",
                cell(r),
                cell(p),
                ratio(r, p, Better::Lower)
            );
        }
    }
    out
}
