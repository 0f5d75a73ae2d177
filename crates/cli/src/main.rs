//! The `stategraph` command. Everything is in the library: this only parses the command
//! line, runs it and turns the outcome into an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = stategraph_cli::opt::Cli::parse();
    stategraph_cli::main(cli)
}
