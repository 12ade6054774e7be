//! Bench (5), Fusion side: the bench's `accounts.register` action served over stdio.

#[path = "../../benches/common/mod.rs"]
mod common;

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match fusion_runtime::mcp::serve_stdio(common::fusion_server()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
