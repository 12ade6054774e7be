//! `cargo run --example billing` with no arguments: starts this same binary as an MCP server
//! over stdio, connects an `rmcp` client to it, and prints each call and the answer the model
//! would read.

use std::process::{ExitCode, Stdio};

use fusion_runtime::rmcp::ServiceExt;
use fusion_runtime::rmcp::model::{CallToolRequestParams, CallToolResult};
use fusion_runtime::rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// The calls the demo makes: (tool, arguments, what it shows).
pub fn script() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "billing_list_invoices",
            json!({"status": "open", "limit": 2}),
            "a success, with structured content",
        ),
        (
            "billing_get_invoice",
            json!({"id": "inv_2026_9999"}),
            "NOT_FOUND: the envelope names the action to call instead",
        ),
        (
            "billing_send_reminder",
            json!({"invoice_id": "inv_2026_0001", "email": "not-an-email", "days_overdue": 0}),
            "a validation error, field by field",
        ),
        (
            "billing_charge",
            json!({"invoice_id": "inv_2026_0002", "amount_cents": 100}),
            "already paid: a warning on a successful result",
        ),
        (
            "billing_charge",
            json!({"invoice_id": "inv_2026_0001", "amount_cents": 999999}),
            "too much: an error with details",
        ),
        (
            "billing_find_invoice",
            json!({"id": "inv_2026_0003"}),
            "a deprecated action: the result plus a DEPRECATED warning",
        ),
        (
            "billing_export_ledger",
            json!({}),
            "a plain io::Error from the handler: INTERNAL_ERROR",
        ),
        (
            "billing_recalculate_totals",
            json!({"invoice_id": "inv_2026_0004"}),
            "a handler that panics: INTERNAL_ERROR, and the server keeps serving",
        ),
        (
            "billing_get_invoice",
            json!({"id": "inv_2026_0001"}),
            "the next call after the panic",
        ),
        (
            "billing_void_invoice",
            json!({"invoice_id": "inv_2026_0005", "reason": "duplicate"}),
            "middleware short-circuits: UNAUTHORIZED",
        ),
        (
            "billing_get_invoce",
            json!({"id": "inv_2026_0001"}),
            "a tool name that does not exist: UNKNOWN_ACTION, naming the closest",
        ),
    ]
}

/// Runs the demo.
pub async fn run() -> ExitCode {
    match drive().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("demo failed: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn drive() -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let mut command = tokio::process::Command::new(exe);
    command
        .arg("serve")
        .env("RUST_LOG", "off")
        .env_remove("BILLING_OPERATOR_TOKEN");
    // The server's stderr (its logs, the panic message) stays out of the demo's output.
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()?;
    let client = ().serve(transport).await?;
    let info = client
        .peer_info()
        .and_then(|i| i.server_info.clone())
        .map(|s| s.name)
        .unwrap_or_default();
    let tools = client.list_all_tools().await?;
    println!("Connected to the '{info}' MCP server over stdio. tools/list:");
    for t in &tools {
        println!(
            "  {:<28} {}",
            t.name,
            t.description
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("")
        );
    }
    println!();
    for (tool, args, shows) in script() {
        let arguments = args.as_object().cloned().unwrap_or_default();
        println!("── {shows}");
        println!("→ tools/call {tool} {args}");
        let result = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
            .await?;
        print_result(&result);
        println!();
    }
    println!(
        "Try it yourself: cargo run --example billing -- call billing_get_invoice '{{\"id\":\"inv_2026_9999\"}}'"
    );
    client.cancel().await?;
    Ok(())
}

fn print_result(result: &CallToolResult) {
    println!("← isError: {}", result.is_error.unwrap_or(false));
    for block in &result.content {
        match block.as_text() {
            Some(t) => println!("{}", t.text),
            None => println!("{block:?}"),
        }
    }
}
