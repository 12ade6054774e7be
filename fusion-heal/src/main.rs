//! `fusion-heal`: see the crate's documentation (`src/lib.rs`) or `fusion-heal --help`.

use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    let args = fusion_heal::Args::parse();
    let outcome = fusion_heal::run(&args).await;
    match outcome.code {
        2 => eprint!("{}", outcome.output),
        _ => print!("{}", outcome.output),
    }
    outcome.exit_code()
}
