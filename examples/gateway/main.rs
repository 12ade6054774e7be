//! The gateway example: a triage server that hands billing questions off to the billing
//! example, mounted as the `finance` domain over stdio, and takes them back.
//!
//! ```text
//! cargo build --examples
//! cargo run --example gateway -- serve            serve MCP over stdio (for an MCP client)
//! cargo run --example gateway -- serve --http 127.0.0.1:8080
//! ```
//!
//! `triage_route` hands a billing question off to `finance`: a 2025 session then lists the
//! billing tools (`finance_billing_…`) and `gateway_return_to_triage`, and is sent
//! `tools/list_changed`; a 2026-07-28 client gets a handle to pass as `handoff` to the
//! `finance_…` tools, which every client sees. Charging is rate limited per client by the
//! gateway itself (`RATE_LIMITED`, as for an action). The billing server is the `billing` example
//! next to this one (`target/debug/examples/billing`), or the program in
//! `FUSION_BILLING_BIN`; when it is down, its tools answer `HANDOFF_CONNECTING` or
//! `HANDOFF_UPSTREAM_UNAVAILABLE` envelopes.

use std::path::PathBuf;
use std::process::ExitCode;

use fusion_runtime::cli::{self, Cli, Parser};
use fusion_runtime::envelope::ToolResponse;
use fusion_runtime::gateway::Upstream;
use fusion_runtime::guard::RateLimit;
use fusion_runtime::{Context, Server, ToolError, ToolInput, tool_action};
use serde::Deserialize;
use serde_json::json;

/// What the user asked.
#[derive(Deserialize, ToolInput)]
struct Question {
    /// The user's question, as they wrote it.
    #[fusion(length(min = 1, max = 2000))]
    question: String,
}

/// Routes the user's question: a billing question is handed off to the finance domain,
/// whose tools take over until `gateway_return_to_triage`.
#[tool_action(name = "triage.route")]
async fn route(input: Question, cx: Context) -> Result<ToolResponse, ToolError> {
    let q = input.question.to_lowercase();
    let billing = ["invoice", "charge", "refund", "bill", "pay"];
    if billing.iter().any(|w| q.contains(w)) {
        return Ok(cx.handoff(
            "finance",
            "a billing question",
            json!({"question": input.question}),
        ));
    }
    Ok(ToolResponse::text(
        "Not a billing question: answer it yourself.",
    ))
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
        .instructions("Route the user's question with triage_route; billing questions are handed off to finance.")
        .action::<RouteAction>()
        .handoff_domain("finance", Upstream::stdio(billing))
        // The gateway's own guards reach the mounted tools by their prefixed names.
        .rate_limit(
            "finance_billing_charge",
            RateLimit::per_minute(10).per_client(),
        )
        .build();
    match server {
        Ok(server) => cli::run_command(server, cli.command).await,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
