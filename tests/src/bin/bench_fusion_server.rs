//! Benches (5) and (6), Fusion side: the bench's `accounts.register` action behind
//! `fusion_runtime::cli::run`, so it runs exactly as users run theirs — the default logging and
//! HTTP options. No arguments: stdio; `serve --http 127.0.0.1:PORT [--stateless]`: streamable
//! HTTP.

#[path = "../../benches/common/mod.rs"]
mod common;

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    fusion_runtime::cli::run(common::fusion_server()).await
}
