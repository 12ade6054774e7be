//! `cargo run --example billing` with no arguments: starts this same binary as an MCP server
//! over stdio, connects the typed [`FusionClient`] to it, and prints each call, the answer the
//! model would read, and what the client reads back.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{ExitCode, Stdio};

use fusion_runtime::client::{CallOutcome, FusionClient, TaskState};
use serde_json::{Value, json};

use super::{
    FindInvoice, FindInvoiceAction, GetInvoice, GetInvoiceAction, ListInvoices, ListInvoicesAction,
    Reconcile, ReconcileAction, Status,
};

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

/// Starts `exe serve` (a billing server binary), drives it through the typed
/// [`FusionClient`] over stdio, and returns what it printed: each call, the answer the model
/// reads, and what the client reads back from it.
pub async fn transcript(exe: &Path) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut command = tokio::process::Command::new(exe);
    command
        .arg("serve")
        .env("RUST_LOG", "off")
        .env_remove("BILLING_OPERATOR_TOKEN");
    // The server's stderr (its logs, the panic message) stays out of the demo's output.
    let client = FusionClient::spawn_with_stderr(command, Stdio::null()).await?;
    let info = client
        .service()
        .peer_info()
        .and_then(|i| i.server_info.clone())
        .map(|s| s.name)
        .unwrap_or_default();
    let version = client
        .service()
        .peer_info()
        .map(|i| i.protocol_version.to_string())
        .unwrap_or_default();
    let tools = client.list_tools().await?;
    writeln!(
        out,
        "Connected to the '{info}' MCP server over stdio (protocol {version}). tools/list:"
    )?;
    for t in &tools {
        let summary = t.description.as_deref().unwrap_or("");
        let summary = summary.lines().next().unwrap_or("");
        writeln!(out, "  {:<28} {summary}", t.name)?;
    }
    writeln!(out)?;
    typed(&client, &mut out).await?;
    for (tool, args, shows) in script() {
        writeln!(out, "── {shows}")?;
        writeln!(out, "→ tools/call {tool} {args}")?;
        let outcome = client.call_tool(tool, args).await?;
        write_outcome(&mut out, &outcome)?;
        writeln!(out)?;
    }
    busy(&client, &mut out).await?;
    long(&client, &mut out).await?;
    writeln!(
        out,
        "Try it yourself: cargo run --example billing -- call billing_get_invoice '{{\"id\":\"inv_2026_9999\"}}'"
    )?;
    client.close().await?;
    Ok(out)
}

/// Typed calls with the server's own types: the input and output structs of the actions.
async fn typed(client: &FusionClient, out: &mut String) -> anyhow::Result<()> {
    writeln!(
        out,
        "── typed calls with the server's own types (client.call::<Action>(&input))"
    )?;
    writeln!(
        out,
        "→ client.call::<ListInvoicesAction>(&ListInvoices {{ status: Some(Status::Open), limit: Some(2) }})"
    )?;
    let list = client
        .call::<ListInvoicesAction>(&ListInvoices {
            status: Some(Status::Open),
            limit: Some(2),
        })
        .await?;
    let ids: Vec<String> = list
        .value
        .invoices
        .iter()
        .map(|i| format!("{} ({}, {} cents)", i.id, i.customer, i.total_cents))
        .collect();
    writeln!(
        out,
        "← Ok: {} of {} open: {}",
        ids.len(),
        list.value.matching,
        ids.join(", ")
    )?;
    writeln!(
        out,
        "→ client.call::<GetInvoiceAction>(&GetInvoice {{ id: \"inv_2026_9999\".into() }})"
    )?;
    match client
        .call::<GetInvoiceAction>(&GetInvoice {
            id: "inv_2026_9999".into(),
        })
        .await
    {
        Ok(found) => writeln!(out, "← Ok: {}", found.value.id)?,
        Err(e) => match e.as_tool_error() {
            Some(t) => writeln!(
                out,
                "← Err(FusionClientError::Tool): code {}, message {:?}, recovery {:?}, available_actions {:?}, details {:?}",
                t.code, t.message, t.recovery, t.available_actions, t.details
            )?,
            None => return Err(e.into()),
        },
    }
    writeln!(
        out,
        "→ client.call::<FindInvoiceAction>(&FindInvoice {{ id: \"inv_2026_0003\".into() }})   (deprecated)"
    )?;
    let found = client
        .call::<FindInvoiceAction>(&FindInvoice {
            id: "inv_2026_0003".into(),
        })
        .await?;
    let warnings: Vec<String> = found
        .warnings
        .iter()
        .map(|w| format!("{} ({})", w.code, w.message))
        .collect();
    writeln!(
        out,
        "← Ok: {} for {}, with warnings: {}",
        found.value.id,
        found.value.customer,
        warnings.join("; ")
    )?;
    writeln!(out)?;
    Ok(())
}

/// Two reconciliations at once against `max_active = 1, max_queue = 0`: the second, sent while
/// the first runs, is refused at once with `SERVER_BUSY`; the first completes.
async fn busy(client: &FusionClient, out: &mut String) -> anyhow::Result<()> {
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
    let call = || client.call_tool("billing_reconcile", json!({}));
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        call().await
    };
    let (first, second) = tokio::join!(call(), second);
    let (first, second) = (first?, second?);
    write!(out, "2nd ")?;
    write_outcome(out, &second)?;
    write!(out, "1st ")?;
    write_outcome(out, &first)?;
    writeln!(out)?;
    Ok(())
}

/// How many results the demo prints besides [`script`]'s: the two concurrent
/// reconciliations, the long one called synchronously, and the same one run as a task.
pub const BUSY_CALLS: usize = 4;

/// The reconciliation the synchronous call cannot finish: 6 s against the action's 5 s
/// `timeout`.
const LONG_RUN: &str = r#"{"duration_ms":6000}"#;

/// A reconciliation of 6 s: called synchronously it answers `TIMEOUT` after 5 s; called as
/// an MCP task with the typed task call (the client declares the tasks extension on the
/// request) it is answered at once with a task, which the client polls (`tasks/get`) until
/// it completes, its output decoded as `Reconciled`.
async fn long(client: &FusionClient, out: &mut String) -> anyhow::Result<()> {
    let args: Value = serde_json::from_str(LONG_RUN)?;
    writeln!(
        out,
        "── a reconciliation of 6 s, past the action's 5 s timeout: synchronously, then as a task"
    )?;
    writeln!(out, "→ tools/call billing_reconcile {LONG_RUN}")?;
    let sync = client.call_tool("billing_reconcile", args.clone()).await?;
    write_outcome(out, &sync)?;
    writeln!(
        out,
        "→ client.call_as_task::<ReconcileAction>(&Reconcile {{ duration_ms: Some(6000) }})   (tools/call declaring io.modelcontextprotocol/tasks)"
    )?;
    let input = Reconcile {
        duration_ms: Some(6000),
    };
    let handle = client.call_as_task::<ReconcileAction>(&input).await?;
    let Some(task) = handle.task() else {
        anyhow::bail!("the server answered at once instead of starting a task");
    };
    writeln!(
        out,
        "← task started (resultType \"task\"), ttl {} s, poll every {} ms",
        task.ttl.map(|t| t.as_secs()).unwrap_or_default(),
        task.poll_interval
            .map(|p| p.as_millis())
            .unwrap_or_default()
    )?;
    let state = client.task_state(task).await?;
    writeln!(
        out,
        "→ tasks/get   ← {}",
        match &state {
            TaskState::Working { .. } => "working",
            TaskState::InputRequired { .. } => "input_required",
            TaskState::Completed(_) => "completed",
            TaskState::Failed(_) => "failed",
            TaskState::Cancelled => "cancelled",
            _ => "another status",
        }
    )?;
    writeln!(
        out,
        "→ handle.wait(&client)   (tasks/get at the poll interval until the task ends; its output typed as call::<ReconcileAction> types it)"
    )?;
    let done = handle.wait(client).await?;
    let r = &done.value;
    writeln!(out, "completed ← isError: false")?;
    writeln!(out, "{}", serde_json::to_string(r)?)?;
    writeln!(
        out,
        "  (client reads: Reconciled {{ invoices_checked: {}, open_balance_cents: {}, took_ms: {} }})",
        r.invoices_checked, r.open_balance_cents, r.took_ms
    )?;
    writeln!(out)?;
    Ok(())
}

/// What the model reads (every block), then what the client read back from it.
fn write_outcome(out: &mut String, outcome: &CallOutcome) -> std::fmt::Result {
    writeln!(out, "← isError: {}", outcome.is_error)?;
    for block in &outcome.content {
        match block.as_text() {
            Some(t) => writeln!(out, "{}", t.text)?,
            None => writeln!(out, "{block:?}")?,
        }
    }
    if let Some(e) = outcome.error() {
        writeln!(
            out,
            "  (client reads: {} {}, recovery {:?}{})",
            e.severity,
            e.code,
            e.recovery.as_deref().unwrap_or("none"),
            e.retry_after
                .map(|d| format!(", retry after {} s", d.as_secs()))
                .unwrap_or_default()
        )?;
    } else {
        let warnings: Vec<String> = outcome
            .warnings()
            .iter()
            .map(|w| w.code.to_string())
            .collect();
        if !warnings.is_empty() {
            writeln!(
                out,
                "  (client reads: success with warnings {})",
                warnings.join(", ")
            )?;
        }
    }
    Ok(())
}
