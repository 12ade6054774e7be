//! `cargo run --example billing` with no arguments: starts this same binary as an MCP server
//! over stdio, connects an `rmcp` client to it, and prints each call and the answer the model
//! would read.

use std::fmt::Write as _;
use std::path::Path;
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
            "billing_charge",
            json!({"invoice_id": "inv_2026_0003", "amount_cents": 100}),
            "a real charge: the third this minute (the limit is 3 a minute per client)",
        ),
        (
            "billing_charge",
            json!({"invoice_id": "inv_2026_0003", "amount_cents": 100}),
            "a fourth charge within the minute: RATE_LIMITED, retry_after from the limiter",
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

/// Runs the demo against this binary, printing the transcript.
pub async fn run() -> ExitCode {
    let transcript = match std::env::current_exe() {
        Ok(exe) => transcript(&exe).await,
        Err(e) => Err(e.into()),
    };
    match transcript {
        Ok(t) => {
            print!("{t}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("demo failed: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Starts `exe serve` (a billing server binary), drives it through an `rmcp` client over
/// stdio, and returns what it printed: each call and the answer.
pub async fn transcript(exe: &Path) -> anyhow::Result<String> {
    let mut out = String::new();
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
    writeln!(
        out,
        "Connected to the '{info}' MCP server over stdio. tools/list:"
    )?;
    for t in &tools {
        let summary = t.description.as_deref().unwrap_or("");
        let summary = summary.lines().next().unwrap_or("");
        writeln!(out, "  {:<28} {summary}", t.name)?;
    }
    writeln!(out)?;
    for (tool, args, shows) in script() {
        let arguments = args.as_object().cloned().unwrap_or_default();
        writeln!(out, "── {shows}")?;
        writeln!(out, "→ tools/call {tool} {args}")?;
        let result = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
            .await?;
        write_result(&mut out, &result)?;
        writeln!(out)?;
    }
    busy(&client, &mut out).await?;
    writeln!(
        out,
        "Try it yourself: cargo run --example billing -- call billing_get_invoice '{{\"id\":\"inv_2026_9999\"}}'"
    )?;
    client.cancel().await?;
    Ok(out)
}

/// Two reconciliations at once against `max_active = 1, max_queue = 0`: the second, sent while
/// the first runs, is refused at once with `SERVER_BUSY`; the first completes.
async fn busy(
    client: &fusion_runtime::rmcp::service::RunningService<fusion_runtime::rmcp::RoleClient, ()>,
    out: &mut String,
) -> anyhow::Result<()> {
    writeln!(
        out,
        "── two reconciliations at once (max_active 1, max_queue 0): the second gets SERVER_BUSY"
    )?;
    writeln!(
        out,
        "→ tools/call billing_reconcile {{}}   (1st: runs about 2 s)"
    )?;
    writeln!(
        out,
        "→ tools/call billing_reconcile {{}}   (2nd: sent 300 ms later, while the 1st runs)"
    )?;
    let call = || client.call_tool(CallToolRequestParams::new("billing_reconcile"));
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        call().await
    };
    let (first, second) = tokio::join!(call(), second);
    let (first, second) = (first?, second?);
    write!(out, "2nd ")?;
    write_result(out, &second)?;
    write!(out, "1st ")?;
    write_result(out, &first)?;
    writeln!(out)?;
    Ok(())
}

/// How many calls the demo makes besides [`script`]: the two concurrent reconciliations.
pub const BUSY_CALLS: usize = 2;

fn write_result(out: &mut String, result: &CallToolResult) -> std::fmt::Result {
    writeln!(out, "← isError: {}", result.is_error.unwrap_or(false))?;
    for block in &result.content {
        match block.as_text() {
            Some(t) => writeln!(out, "{}", t.text)?,
            None => writeln!(out, "{block:?}")?,
        }
    }
    Ok(())
}
