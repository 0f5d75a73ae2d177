//! The `stategraph` command. Everything is in the library: this only parses the command
//! line, runs it and turns the outcome into an exit code.

use std::process::ExitCode;

use clap::Parser;

// Values are decoded on the saver's blocking thread and dropped on this one; glibc's
// allocator spends a third of `history --json` consolidating such frees, mimalloc does not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = stategraph_cli::opt::Cli::parse();
    stategraph_cli::main(cli)
}
