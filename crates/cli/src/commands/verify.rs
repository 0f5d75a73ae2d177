//! `verify DB`: decodes every stored value of every table, one row at a time, and reports
//! each row that does not decode and each object outside LangGraph's safe types (with
//! its path inside the value). Exits with 1 if it found any.

use std::process::ExitCode;

use serde_json::json;

use crate::db::Db;
use crate::safe_types::unsafe_objects;
use crate::style::{progress, Table};
use crate::{Ctx, Result};

/// One problem found.
struct Problem {
    location: String,
    path: String,
    problem: String,
}

/// Runs the command.
pub async fn run(ctx: &mut Ctx, name: &str) -> Result<ExitCode> {
    let db = Db::open_read(name).await?;
    let serde = db.serde.clone();
    let mut problems = Vec::new();
    let mut rows = 0u64;
    let bar = std::cell::OnceCell::new();
    db.for_each_raw_value(
        |total| {
            let _ = bar.set(progress(total, "verifying"));
        },
        |raw| {
            rows += 1;
            if let Some(bar) = bar.get() {
                bar.inc(1);
            }
            if raw.tag == "json" {
                if let Err(e) = serde_json::from_slice::<serde_json::Value>(&raw.bytes) {
                    problems.push(Problem {
                        location: raw.location,
                        path: "$".into(),
                        problem: format!("not JSON: {e}"),
                    });
                }
                return;
            }
            match serde.loads_typed(&raw.tag, &raw.bytes) {
                Ok(value) => {
                    for (path, problem) in unsafe_objects(&value, "$") {
                        problems.push(Problem {
                            location: raw.location.clone(),
                            path,
                            problem,
                        });
                    }
                }
                Err(e) => problems.push(Problem {
                    location: raw.location,
                    path: "$".into(),
                    problem: format!("does not decode: {e}"),
                }),
            }
        },
    )
    .await?;
    if let Some(bar) = bar.get() {
        bar.finish_and_clear();
    }
    if ctx.json {
        ctx.print_json(&json!({
            "values": rows,
            "ok": problems.is_empty(),
            "problems": problems.iter().map(|p| json!({
                "row": p.location, "path": p.path, "problem": p.problem,
            })).collect::<Vec<_>>(),
        }))?;
    } else if problems.is_empty() {
        let s = ctx.style;
        ctx.print(&format!(
            "{} {rows} stored values decode and hold only LangGraph's safe types\n",
            s.green("ok:")
        ))?;
    } else {
        let s = ctx.style;
        let mut table = Table::new(&["ROW", "PATH", "PROBLEM"], &[]);
        for p in &problems {
            table.row(vec![p.location.clone(), p.path.clone(), p.problem.clone()]);
        }
        let text = format!(
            "{}{} {} problems in {rows} stored values\n",
            table.render(&s),
            s.red("error:"),
            problems.len()
        );
        ctx.print(&text)?;
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
