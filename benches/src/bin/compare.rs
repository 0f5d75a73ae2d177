//! Prints the Rust / Python comparison table from criterion's output and the Python
//! driver's results.
//!
//! Usage: `compare CRITERION_DIR PYTHON_RESULTS_JSONL [BACKEND,...]` (backends default to
//! `none,memory,sqlite,postgres`).

use std::path::PathBuf;
use std::process::ExitCode;

use stategraph_benches::report;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(criterion), Some(python)) = (args.first(), args.get(1)) else {
        eprintln!("usage: compare CRITERION_DIR PYTHON_RESULTS_JSONL [BACKEND,...]");
        return ExitCode::from(2);
    };
    let backends_arg = args
        .get(2)
        .cloned()
        .unwrap_or_else(|| "none,memory,sqlite,postgres".to_owned());
    let backends: Vec<&str> = backends_arg.split(',').collect();
    let rust = match report::read_criterion(&PathBuf::from(criterion)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot read criterion results in {criterion}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let py = match report::read_python(&PathBuf::from(python)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cannot read Python results {python}: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", report::table(&rust, &py, &backends));
    let savers = ["put", "put_writes", "get_tuple", "list"];
    if rust
        .keys()
        .any(|id| savers.iter().any(|g| id.starts_with(&format!("{g}/"))))
    {
        println!("\nSaver operations (Rust only):\n");
        print!("{}", report::rust_only_table(&rust, &savers));
    }
    ExitCode::SUCCESS
}
