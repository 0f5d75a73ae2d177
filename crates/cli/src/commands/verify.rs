//! `verify DB`: decodes every stored value of every table, one row at a time.
//!
//! * A row that does not decode is an **error**, and so is a damaged SQLite file (a table
//!   that cannot be read to its end, a problem `PRAGMA quick_check` finds): the report
//!   names the file, the table and the remedy (`sqlite3 FILE .recover`).
//! * An object outside LangGraph's safe types (a dataclass or Enum of the user's own, such
//!   as `__main__.Point`) is a **warning**: Python builds it today (and logs a warning);
//!   only with `LANGGRAPH_STRICT_MSGPACK=true` does it refuse. `--strict` makes them errors,
//!   `--allow module.Class` accepts a class, as Python's `allowed_msgpack_modules`.
//!
//! Exits with 1 if it found errors, 0 otherwise (warnings included).

use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::json;

use crate::db::{is_damage, kind_of, Damage, Db, Kind};
use crate::error::CliError;
use crate::opt::VerifyArgs;
use crate::style::{progress, Style, Table};
use crate::{Ctx, Result};
use stategraph_checkpoint::serde::strict::{check_all, Allowlist, UnsafeObject};

/// How bad a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    /// The data is unreadable (exit 1).
    Error,
    /// Readable, but Python in strict mode would refuse it.
    Warning,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

/// One problem found.
struct Problem {
    level: Level,
    location: String,
    path: String,
    problem: String,
    /// The class, for objects outside the safe types (warnings are grouped by it).
    class: Option<String>,
    /// Whether `--allow` can accept it (not a method call: as in Python, the allowlist
    /// does not widen the safe methods).
    allowable: bool,
}

/// What the pass found.
struct Report {
    rows: u64,
    problems: Vec<Problem>,
    damage: Vec<Damage>,
}

impl Report {
    fn count(&self, level: Level) -> usize {
        self.problems.iter().filter(|p| p.level == level).count()
            + if level == Level::Error {
                self.damage.len()
            } else {
                0
            }
    }
}

/// Runs the command.
pub async fn run(ctx: &mut Ctx, args: &VerifyArgs) -> Result<ExitCode> {
    let db = match Db::open_read(&args.db).await {
        Ok(db) => db,
        Err(e) if kind_of(&args.db) == Kind::Sqlite && is_damage(&e) => {
            let damage = [Damage {
                table: Some("sqlite_master".into()),
                index: None,
                reason: e.to_string(),
            }];
            return Err(CliError::Damaged(format!(
                "{}: the file is damaged where SQLite keeps its schema (table `sqlite_master`): \
                 {e}\nremedy: {}",
                args.db,
                remedy(&args.db, &damage).unwrap_or_default()
            )));
        }
        Err(e) => return Err(e),
    };
    let allowlist: Allowlist = args.allow.iter().cloned().collect();
    let unsafe_level = if args.strict {
        Level::Error
    } else {
        Level::Warning
    };
    let report = check(&db, &allowlist, unsafe_level).await?;
    let remedy = remedy(&args.db, &report.damage);
    if ctx.json {
        print_json(ctx, &report, remedy.as_deref())?;
    } else {
        let text = human(&report, &args.db, remedy.as_deref(), &ctx.style);
        ctx.print(&text)?;
    }
    Ok(if report.count(Level::Error) == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Decodes every value; objects outside the safe types get `unsafe_level`.
async fn check(db: &Db, allowlist: &Allowlist, unsafe_level: Level) -> Result<Report> {
    let serde = db.serde.clone();
    let mut problems = Vec::new();
    let mut rows = 0u64;
    let bar = std::cell::OnceCell::new();
    let damage = db
        .for_each_raw_value(
            |total| {
                let _ = bar.set(progress(total, "verifying"));
            },
            |raw| {
                rows += 1;
                if let Some(bar) = bar.get() {
                    bar.inc(1);
                }
                let error = |problem: String| Problem {
                    level: Level::Error,
                    location: raw.location.clone(),
                    path: "$".into(),
                    problem,
                    class: None,
                    allowable: false,
                };
                if raw.tag == "json" {
                    if let Err(e) = serde_json::from_slice::<serde_json::Value>(&raw.bytes) {
                        problems.push(error(format!("not JSON: {e}")));
                    }
                    return;
                }
                match serde.loads_typed(&raw.tag, &raw.bytes) {
                    Ok(value) => {
                        for found in check_all(&value, allowlist) {
                            problems.push(outside(found, &raw.location, unsafe_level));
                        }
                    }
                    Err(e) => problems.push(error(format!("does not decode: {e}"))),
                }
            },
        )
        .await?;
    if let Some(bar) = bar.get() {
        bar.finish_and_clear();
    }
    Ok(Report {
        rows,
        problems,
        damage,
    })
}

fn outside(found: UnsafeObject, location: &str, level: Level) -> Problem {
    let method = found
        .method
        .as_deref()
        .map(|m| format!(".{m}"))
        .unwrap_or_default();
    Problem {
        level,
        location: location.to_owned(),
        problem: found.reason(),
        class: Some(format!("{}.{}{method}", found.module, found.class)),
        allowable: found.method.is_none(),
        path: found.path,
    }
}

/// How to get the readable rows out of a damaged SQLite file. `.recover` (sqlite3 3.29+)
/// reads past damaged pages; some builds lack it (Debian's 3.40 answers "SQL logic
/// error"), and `.dump` then gets the rows it can read but ends in a `ROLLBACK`, which the
/// `sed` turns into a `COMMIT`.
fn remedy(db: &str, damage: &[Damage]) -> Option<String> {
    if damage.is_empty() || kind_of(db) != Kind::Sqlite {
        return None;
    }
    let db = shell_quote(db);
    Some(format!(
        "keep the damaged file and copy what is readable into a new one: \
         `sqlite3 {db} .recover | sqlite3 recovered.db` (where that sqlite3's `.recover` fails: \
         `sqlite3 {db} .dump | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 recovered.db`), \
         then `stategraph verify recovered.db`"
    ))
}

/// `s` quoted for a POSIX shell when it needs it.
fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn print_json(ctx: &mut Ctx, report: &Report, remedy: Option<&str>) -> Result<()> {
    let mut problems: Vec<serde_json::Value> = report
        .damage
        .iter()
        .map(|d| {
            json!({
                "level": "error", "row": damaged_part(d), "path": "",
                "problem": format!("the file is damaged: {}", d.reason),
            })
        })
        .collect();
    problems.extend(report.problems.iter().map(|p| {
        json!({
            "level": p.level.as_str(), "row": p.location, "path": p.path, "problem": p.problem,
        })
    }));
    let errors = report.count(Level::Error);
    ctx.print_json(&json!({
        "values": report.rows,
        "ok": errors == 0,
        "errors": errors,
        "warnings": report.count(Level::Warning),
        "damaged_tables": report.damage.iter().filter_map(|d| d.table.as_ref()).collect::<Vec<_>>(),
        "remedy": remedy,
        "problems": problems,
    }))
}

/// `1 row`, `2 rows`.
fn counted(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// ``table `writes` ``, ``index `i` of table `writes` ``, or `the file` when SQLite does
/// not say which part.
fn damaged_part(d: &Damage) -> String {
    match (&d.table, &d.index) {
        (Some(t), Some(i)) => format!("index `{i}` of table `{t}`"),
        (Some(t), None) => format!("table `{t}`"),
        _ => "the file".to_owned(),
    }
}

/// The report for people: errors in a table, warnings one line per class, a summary.
fn human(report: &Report, db: &str, remedy: Option<&str>, s: &Style) -> String {
    let mut out = String::new();
    let errors: Vec<&Problem> = report
        .problems
        .iter()
        .filter(|p| p.level == Level::Error)
        .collect();
    if !errors.is_empty() {
        let mut table = Table::new(&["ROW", "PATH", "PROBLEM"], &[]);
        for p in &errors {
            table.row(vec![p.location.clone(), p.path.clone(), p.problem.clone()]);
        }
        out.push_str(&table.render(s));
    }
    out.push_str(&warnings(report, s));
    for d in &report.damage {
        out.push_str(&format!(
            "{} {db}: {} is damaged: {}\n",
            s.red("error:"),
            damaged_part(d),
            d.reason
        ));
    }
    if let Some(remedy) = remedy {
        out.push_str(&format!("remedy: {remedy}\n"));
    }
    let (n_errors, n_warnings) = (report.count(Level::Error), report.count(Level::Warning));
    let rows = report.rows;
    if n_errors > 0 {
        out.push_str(&format!(
            "{} {} in {rows} stored values{}\n",
            s.red("error:"),
            counted(n_errors, "problem"),
            if n_warnings > 0 {
                format!(" (and {n_warnings} warnings)")
            } else {
                String::new()
            }
        ));
    } else if n_warnings > 0 {
        out.push_str(&format!(
            "{} {rows} stored values decode; {} outside LangGraph's safe types (warnings)\n",
            s.green("ok:"),
            counted(n_warnings, "object")
        ));
    } else {
        out.push_str(&format!(
            "{} {rows} stored values decode and hold only LangGraph's safe types\n",
            s.green("ok:")
        ));
    }
    out
}

/// One line per class outside the safe types, with how often and where first, and what
/// to do about it.
fn warnings(report: &Report, s: &Style) -> String {
    let mut by_class: BTreeMap<&str, (usize, std::collections::BTreeSet<&str>, &Problem)> =
        BTreeMap::new();
    for p in report.problems.iter().filter(|p| p.level == Level::Warning) {
        let class = p.class.as_deref().unwrap_or("?");
        let entry = by_class
            .entry(class)
            .or_insert_with(|| (0, Default::default(), p));
        entry.0 += 1;
        entry.1.insert(&p.location);
    }
    let mut out = String::new();
    for (class, (objects, rows, first)) in &by_class {
        out.push_str(&format!(
            "{} {class} is outside LangGraph's safe types: {} in {} (first: {} at {})\n",
            s.yellow("warning:"),
            counted(*objects, "object"),
            counted(rows.len(), "row"),
            first.location,
            first.path
        ));
    }
    if !by_class.is_empty() {
        let allow: Vec<String> = by_class
            .iter()
            .filter(|(_, (_, _, first))| first.allowable)
            .map(|(c, _)| format!("--allow {c}"))
            .collect();
        let accept = if allow.is_empty() {
            String::new()
        } else {
            format!("accept them with `{}`, or ", allow.join(" "))
        };
        out.push_str(&format!(
            "  Python reads them (with a warning) unless LANGGRAPH_STRICT_MSGPACK=true; \
             {accept}fail on them with --strict\n"
        ));
    }
    out
}
