//! The billing example.
//!
//! ```text
//! cargo run --example billing                     a demo: starts the server, drives it through
//!                                                 an MCP client over stdio, prints each answer
//! cargo run --example billing -- serve            serve MCP over stdio (for an MCP client)
//! cargo run --example billing -- serve --http 127.0.0.1:8080 [--stateless]
//! cargo run --example billing -- tools            every tool with its schema
//! cargo run --example billing -- call billing_get_invoice '{"id":"inv_2026_9999"}'
//! ```

use std::process::ExitCode;

use examples::billing;
use fusion_runtime::cli::{self, Cli, Parser};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let server = match billing::server() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        None => billing::demo::run().await,
        command => cli::run_command(server, command).await,
    }
}
