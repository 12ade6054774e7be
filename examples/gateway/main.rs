//! The gateway example: a triage server that mounts the billing example as the `finance`
//! upstream over stdio.
//!
//! ```text
//! cargo build --examples
//! cargo run --example gateway -- serve            serve MCP over stdio (for an MCP client)
//! cargo run --example gateway -- serve --http 127.0.0.1:8080
//! cargo run --example gateway -- call triage_route '{"question":"why was I charged twice?"}'
//! cargo run --example gateway -- call finance_billing_get_invoice '{"id":"inv_2026_0001"}'
//! ```
//!
//! The billing server is the `billing` example next to this one
//! (`target/debug/examples/billing`), or the program in `FUSION_BILLING_BIN`. Its tools are
//! listed as `finance_billing_…`; when it is down, calls of them are answered
//! `HANDOFF_CONNECTING` or `HANDOFF_UPSTREAM_UNAVAILABLE` envelopes.

use std::path::PathBuf;
use std::process::ExitCode;

use fusion_runtime::cli::{self, Cli, Parser};
use fusion_runtime::gateway::Upstream;
use fusion_runtime::{Server, ToolError, ToolInput, tool_action};
use serde::Deserialize;
use serde_json::{Value, json};

/// What the user asked.
#[derive(Deserialize, ToolInput)]
struct Question {
    /// The user's question, as they wrote it.
    #[fusion(length(min = 1, max = 2000))]
    question: String,
}

/// Says which service answers a question, and which of its tools to call first.
#[tool_action(name = "triage.route", read_only, idempotent)]
async fn route(input: Question) -> Result<Value, ToolError> {
    let q = input.question.to_lowercase();
    let billing = ["invoice", "charge", "refund", "bill", "pay"];
    Ok(if billing.iter().any(|w| q.contains(w)) {
        json!({"service": "finance", "start_with": "finance_billing_list_invoices"})
    } else {
        json!({"service": "triage", "start_with": null})
    })
}

fn billing_program() -> PathBuf {
    if let Some(p) = std::env::var_os("FUSION_BILLING_BIN") {
        return PathBuf::from(p);
    }
    let mut p = std::env::current_exe().unwrap_or_default();
    p.set_file_name("billing");
    p
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut billing = tokio::process::Command::new(billing_program());
    billing.arg("serve").env("RUST_LOG", "off");
    let server = Server::builder()
        .name("triage")
        .instructions("Route the user's question with triage_route; billing questions go to the finance_ tools.")
        .action::<RouteAction>()
        .mount("finance", Upstream::stdio(billing))
        .build();
    match server {
        Ok(server) => cli::run_command(server, cli.command).await,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
