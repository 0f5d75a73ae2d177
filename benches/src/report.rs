//! Reading results: criterion's samples of the Rust benches, the Python driver's JSON
//! lines, and the table that puts them side by side.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value as J;

/// A figure: median with min and max over samples (Rust) or runs (Python).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The median.
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// How many samples or runs.
    pub n: usize,
}

impl Spread {
    /// The spread of `values` (`None` when empty).
    pub fn of(mut values: Vec<f64>) -> Option<Spread> {
        values.retain(|v| v.is_finite());
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: values[0],
            max: values[n - 1],
            n,
        })
    }

    /// Every figure multiplied by `k` (a change of unit).
    pub fn scale(self, k: f64) -> Spread {
        Spread {
            median: self.median * k,
            min: self.min * k,
            max: self.max * k,
            n: self.n,
        }
    }

    /// `**median** (min–max)`, as `PYTHON_BASELINE.md` writes figures.
    pub fn cell(self) -> String {
        format!(
            "**{}** ({}–{})",
            fmt(self.median),
            fmt(self.min),
            fmt(self.max)
        )
    }
}

/// A number with three significant figures or so, `1,234` above 1 000.
pub fn fmt(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        let s = format!("{:.0}", v.abs());
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        if v < 0.0 {
            out.insert(0, '-');
        }
        out
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Nanoseconds per iteration of every sample of every criterion bench under `dir`
/// (criterion's output directory, `target/criterion`), by full bench id (`S2/memory/async`).
pub fn read_criterion(dir: &Path) -> std::io::Result<BTreeMap<String, Spread>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "new") {
                    if let Some((id, spread)) = read_bench(&path) {
                        out.insert(id, spread);
                    }
                } else if path
                    .file_name()
                    .is_none_or(|n| n != "base" && n != "report")
                {
                    stack.push(path);
                }
            }
        }
    }
    Ok(out)
}

/// One bench's `new/` directory: its id and per-iteration times of its samples.
fn read_bench(new_dir: &Path) -> Option<(String, Spread)> {
    let bench: J =
        serde_json::from_slice(&std::fs::read(new_dir.join("benchmark.json")).ok()?).ok()?;
    let sample: J =
        serde_json::from_slice(&std::fs::read(new_dir.join("sample.json")).ok()?).ok()?;
    let id = bench.get("full_id")?.as_str()?.to_owned();
    let iters = sample.get("iters")?.as_array()?;
    let times = sample.get("times")?.as_array()?;
    let per_iter = iters
        .iter()
        .zip(times)
        .filter_map(|(i, t)| Some(t.as_f64()? / i.as_f64()?))
        .collect();
    Some((id, Spread::of(per_iter)?))
}

/// The Python driver's results (`bench_langgraph.py driver --results FILE`): for each
/// `(scenario, variant, cp)`, every successful run's JSON object.
pub fn read_python(path: &Path) -> std::io::Result<BTreeMap<(String, String, String), Vec<J>>> {
    let text = std::fs::read_to_string(path)?;
    let mut out: BTreeMap<_, Vec<J>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(row) = serde_json::from_str::<J>(line) else {
            continue;
        };
        if row.get("error").is_some() {
            continue;
        }
        let key = |k: &str| row.get(k).and_then(J::as_str).unwrap_or("").to_owned();
        let k = (key("scenario"), key("variant"), key("cp"));
        out.entry(k).or_default().push(row);
    }
    Ok(out)
}

/// Reads a figure, in the row's unit, from one Python run.
type PyMetric = fn(&J) -> Option<f64>;

/// One row of the comparison: a Rust bench and the Python figure it is compared with.
struct Row {
    scenario: &'static str,
    unit: &'static str,
    /// The criterion id without the backend, e.g. `S2_chain100/async`; the backend is
    /// inserted after the group (`S2_chain100/memory/async`).
    group: &'static str,
    variant: &'static str,
    /// Nanoseconds per iteration to the unit.
    rust_scale: f64,
    /// Python `(scenario, variant)` and how to get the unit from a run.
    py: (&'static str, &'static str, PyMetric),
    /// Backends for which the row exists (`None`: all).
    only: Option<&'static [&'static str]>,
}

fn key(k: &'static str) -> impl Fn(&J) -> Option<f64> {
    move |r| r.get(k).and_then(J::as_f64)
}

fn us_per_invoke(r: &J) -> Option<f64> {
    key("invokes_per_s")(r).map(|v| 1e6 / v)
}

fn us_per_step(r: &J) -> Option<f64> {
    key("us_per_step")(r)
}

fn ms_per_invoke(r: &J) -> Option<f64> {
    key("ms_per_invoke")(r)
}

fn p50_us(r: &J) -> Option<f64> {
    key("p50_ms")(r).map(|v| v * 1e3)
}

fn rows() -> Vec<Row> {
    const SAVERS: &[&str] = &["memory", "sqlite", "postgres"];
    let step = 1e-3 / crate::scenarios::CHAIN_LEN as f64;
    vec![
        Row {
            scenario: "S1 seed, new thread_id per invoke",
            unit: "µs/invoke (Python: 1/invokes-per-s)",
            group: "S1_seed",
            variant: "new",
            rust_scale: 1e-3,
            py: ("S1", "new", us_per_invoke),
            only: None,
        },
        Row {
            scenario: "S1 seed, new thread_id per invoke",
            unit: "µs/invoke (Python: p50)",
            group: "S1_seed",
            variant: "new",
            rust_scale: 1e-3,
            py: ("S1", "new", p50_us),
            only: None,
        },
        Row {
            scenario: "S1 seed, same thread_id",
            unit: "µs/invoke (Python: 1/invokes-per-s)",
            group: "S1_seed",
            variant: "same",
            rust_scale: 1e-3,
            py: ("S1", "same", us_per_invoke),
            only: None,
        },
        Row {
            scenario: "S2 chain100, durability=async",
            unit: "µs/super-step",
            group: "S2_chain100",
            variant: "async",
            rust_scale: step,
            py: ("S2", "-", us_per_step),
            only: None,
        },
        Row {
            scenario: "S2 chain100, durability=sync",
            unit: "µs/super-step",
            group: "S2_chain100",
            variant: "sync",
            rust_scale: step,
            py: ("S2", "sync", us_per_step),
            only: Some(SAVERS),
        },
        Row {
            scenario: "S2 chain100, durability=exit",
            unit: "µs/super-step",
            group: "S2_chain100",
            variant: "exit",
            rust_scale: step,
            py: ("S2", "exit", us_per_step),
            only: Some(SAVERS),
        },
        Row {
            scenario: "S2 chain100, typed state (derive), async",
            unit: "µs/super-step (Python: S2 async)",
            group: "S2_chain100",
            variant: "typed_async",
            rust_scale: step,
            py: ("S2", "-", us_per_step),
            only: None,
        },
        Row {
            scenario: "S3 fanout 100 Send",
            unit: "ms/invoke",
            group: "S3_fanout",
            variant: "send100",
            rust_scale: 1e-6,
            py: ("S3", "-", ms_per_invoke),
            only: None,
        },
    ]
}

/// The markdown table: per scenario and backend, Rust and Python figures and how many
/// times faster Rust is (Python median / Rust median). `backends` orders the columns'
/// rows (`none`, `memory`, ...); a cell with no figure on one side reads `n/a`.
pub fn table(
    rust: &BTreeMap<String, Spread>,
    python: &BTreeMap<(String, String, String), Vec<J>>,
    backends: &[&str],
) -> String {
    let mut s = String::new();
    s.push_str("| scenario | saver | unit | Rust median (min–max) | Python median (min–max) | Python / Rust |\n");
    s.push_str("|---|---|---|---|---|---|\n");
    for row in rows() {
        for &b in backends {
            if row.only.is_some_and(|o| !o.contains(&b)) {
                continue;
            }
            let id = format!("{}/{}/{}", row.group, b, row.variant);
            let r = rust.get(&id).map(|x| x.scale(row.rust_scale));
            let (sc, va, metric) = row.py;
            let p = python
                .get(&(sc.to_owned(), va.to_owned(), b.to_owned()))
                .and_then(|runs| Spread::of(runs.iter().filter_map(metric).collect()));
            if r.is_none() && p.is_none() {
                continue;
            }
            let ratio = match (r, p) {
                (Some(r), Some(p)) if r.median > 0.0 => {
                    format!("**{}×**", fmt(p.median / r.median))
                }
                _ => "n/a".to_owned(),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                row.scenario,
                b,
                row.unit,
                r.map_or("n/a".to_owned(), Spread::cell),
                p.map_or("n/a".to_owned(), Spread::cell),
                ratio
            );
        }
    }
    let calib: Vec<f64> = python
        .values()
        .flatten()
        .filter_map(|r| key("calib_ms")(r))
        .collect();
    if let Some(c) = Spread::of(calib) {
        let runs: usize = python.values().map(Vec::len).sum();
        let _ = writeln!(
            s,
            "\nPython runs: {runs}; host speed index (bench_langgraph.py `calib_ms`, lower is faster): median {}, min {}, max {}",
            fmt(c.median),
            fmt(c.min),
            fmt(c.max)
        );
    }
    s
}

/// The Rust-only table of the benches whose id starts with one of `groups` (the saver
/// operations): microseconds per operation.
pub fn rust_only_table(rust: &BTreeMap<String, Spread>, groups: &[&str]) -> String {
    let mut s = String::new();
    s.push_str("| bench (operation/saver/case) | µs per operation, median (min–max) |\n");
    s.push_str("|---|---|\n");
    for g in groups {
        for (id, spread) in rust.range(format!("{g}/")..) {
            if !id.starts_with(&format!("{g}/")) {
                break;
            }
            let _ = writeln!(s, "| `{id}` | {} |", spread.scale(1e-3).cell());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_takes_the_middle_of_an_even_count() {
        let s = Spread::of(vec![4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.5, 1.0, 4.0, 4));
        assert!(Spread::of(vec![]).is_none());
    }

    #[test]
    fn fmt_groups_thousands_and_keeps_three_figures() {
        assert_eq!(fmt(1234.4), "1,234");
        assert_eq!(fmt(305.2), "305");
        assert_eq!(fmt(28.84), "28.8");
        assert_eq!(fmt(2.394), "2.39");
        assert_eq!(fmt(0.7391), "0.739");
    }

    #[test]
    fn table_pairs_rust_and_python_by_backend() {
        let mut rust = BTreeMap::new();
        rust.insert(
            "S2_chain100/memory/async".to_owned(),
            Spread::of(vec![200_000.0, 300_000.0, 250_000.0]).unwrap(),
        );
        let mut python = BTreeMap::new();
        python.insert(
            ("S2".to_owned(), "-".to_owned(), "memory".to_owned()),
            vec![serde_json::json!({"us_per_step": 500.0, "calib_ms": 40.0})],
        );
        let t = table(&rust, &python, &["none", "memory"]);
        // 250 µs per invoke of 100 steps = 2.5 µs per step; Python 500 µs: 200x.
        assert!(
            t.contains("| S2 chain100, durability=async | memory | µs/super-step | **2.50** (2.00–3.00) | **500** (500–500) | **200×** |"),
            "{t}"
        );
        assert!(
            !t.contains("| none |"),
            "a row with no figure on either side is left out: {t}"
        );
        assert!(t.contains("host speed index"));
    }

    #[test]
    fn rust_only_table_lists_a_group_and_nothing_else() {
        let one = Spread::of(vec![1500.0]).unwrap();
        let mut rust = BTreeMap::new();
        for id in [
            "put/memory/small",
            "put_writes/memory/3_writes",
            "list/memory/all_of_100",
        ] {
            rust.insert(id.to_owned(), one);
        }
        let t = rust_only_table(&rust, &["put"]);
        assert!(
            t.contains("| `put/memory/small` | **1.50** (1.50–1.50) |"),
            "{t}"
        );
        assert!(!t.contains("put_writes"), "{t}");
        assert!(!t.contains("list/"), "{t}");
    }
}
