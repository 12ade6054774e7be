//! End to end through real transports: an `rmcp` client talking to the billing example over
//! stdio (the spawned `billing-server` binary) and over streamable HTTP on 127.0.0.1
//! (stateful and stateless), covering every path of the pipeline.

use std::time::Duration;

use fusion_runtime::Server;
use fusion_runtime::client::{Envelope, ToolCallError, parse_envelope, parse_tool_error};
use fusion_runtime::mcp::HttpOptions;
use fusion_tests::clients::{self, Client, billing_command, over_http, over_stdio};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(20);

async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    clients::bounded(what, LIMIT, f).await
}

fn billing() -> Server {
    examples::billing::server().unwrap_or_else(|e| panic!("{e}"))
}

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let arguments = args.as_object().cloned().unwrap_or_default();
    bounded(
        tool,
        client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)),
    )
    .await
    .unwrap_or_else(|e| panic!("{tool}: a JSON-RPC error instead of a result: {e}"))
}

fn texts(r: &CallToolResult) -> Vec<String> {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn is_error(r: &CallToolResult) -> bool {
    r.is_error.unwrap_or(false)
}

fn tool_error(r: &CallToolResult, i: usize) -> ToolCallError {
    let t = texts(r);
    let text = t.get(i).map(String::as_str).unwrap_or_default();
    let e = parse_tool_error(text).unwrap_or_else(|e| panic!("not a tool_error ({e}): {text}"));
    ToolCallError::from_error("", &e)
}

const NOT_FOUND: &str = "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n  <message>No invoice with that ID</message>\n  <recovery>List invoices first, then retry with a real ID</recovery>\n  <available_actions>\n    <action>billing_list_invoices</action>\n  </available_actions>\n  <details>\n    <detail key=\"requestedId\">inv_2026_9999</detail>\n  </details>\n</tool_error>";

/// Every path of the pipeline, through whatever transport `client` uses.
async fn every_path(client: &Client) {
    // tools/list: every action, described, with its schema and hints.
    let tools = bounded("tools/list", client.list_all_tools())
        .await
        .unwrap_or_else(|e| panic!("tools/list: {e}"));
    assert_eq!(
        tools.len(),
        10,
        "{:?}",
        tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    for t in &tools {
        assert!(
            t.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{}",
            t.name
        );
        assert_eq!(
            t.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            t.name
        );
    }
    let get = tools
        .iter()
        .find(|t| t.name == "billing_get_invoice")
        .expect("get_invoice listed");
    assert_eq!(
        get.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );
    assert!(get.output_schema.is_some());

    // Success, with structured content.
    let ok = call(
        client,
        "billing_get_invoice",
        json!({"id": "inv_2026_0001"}),
    )
    .await;
    assert!(!is_error(&ok));
    assert_eq!(
        ok.structured_content.as_ref().and_then(|v| v.get("id")),
        Some(&json!("inv_2026_0001"))
    );
    let listed = call(client, "billing_list_invoices", json!({"status": "paid"})).await;
    assert!(!is_error(&listed));
    assert_eq!(
        listed
            .structured_content
            .as_ref()
            .and_then(|v| v.get("matching")),
        Some(&json!(1))
    );

    // NOT_FOUND, byte for byte.
    let nf = call(
        client,
        "billing_get_invoice",
        json!({"id": "inv_2026_9999"}),
    )
    .await;
    assert!(is_error(&nf));
    assert_eq!(texts(&nf), vec![NOT_FOUND.to_owned()]);

    // Validation error: every problem, in one envelope.
    let bad = call(
        client,
        "billing_send_reminder",
        json!({"invoice_id": "inv_2026_0001", "email": "not-an-email", "days_overdue": 0}),
    )
    .await;
    assert!(is_error(&bad));
    match parse_envelope(&texts(&bad)[0]) {
        Ok(Envelope::Validation(v)) => {
            assert_eq!(v.action, "billing_send_reminder");
            let names: Vec<&str> = v.fields.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(names, ["email", "days_overdue"]);
        }
        other => panic!("{other:?}"),
    }
    let wrong_type = call(client, "billing_list_invoices", json!({"limit": "two"})).await;
    assert!(is_error(&wrong_type));
    assert!(texts(&wrong_type)[0].contains("You sent: 'two'"));

    // A warning on a successful result.
    let paid = call(
        client,
        "billing_charge",
        json!({"invoice_id": "inv_2026_0002", "amount_cents": 100}),
    )
    .await;
    assert!(!is_error(&paid));
    assert_eq!(texts(&paid).len(), 2);
    let w = tool_error(&paid, 1);
    assert_eq!(w.code.as_str(), "CONFLICT");
    assert!(!w.severity.is_error());

    // An error with details.
    let too_much = call(
        client,
        "billing_charge",
        json!({"invoice_id": "inv_2026_0003", "amount_cents": 999_999}),
    )
    .await;
    assert!(is_error(&too_much));
    let e = tool_error(&too_much, 0);
    assert_eq!(e.code.as_str(), "AMOUNT_EXCEEDS_BALANCE");
    assert_eq!(e.detail_value("balanceCents"), Some("20000"));

    // Deprecated: the result and a DEPRECATED warning.
    let dep = call(
        client,
        "billing_find_invoice",
        json!({"id": "inv_2026_0001"}),
    )
    .await;
    assert!(!is_error(&dep));
    assert_eq!(tool_error(&dep, 1).code.as_str(), "DEPRECATED");

    // A non-ToolError error: INTERNAL_ERROR with its message and "do not retry blindly".
    let internal = call(client, "billing_export_ledger", json!({})).await;
    assert!(is_error(&internal));
    let e = tool_error(&internal, 0);
    assert_eq!(e.code.as_str(), "INTERNAL_ERROR");
    assert!(e.message.contains("BILLING_LEDGER_DIR is unset"));
    assert!(
        e.recovery
            .as_deref()
            .is_some_and(|s| s.contains("Do not retry this call blindly"))
    );

    // A panic: INTERNAL_ERROR for that call, no payload, and the server keeps serving.
    let panicked = call(
        client,
        "billing_recalculate_totals",
        json!({"invoice_id": "inv_2026_0004"}),
    )
    .await;
    assert!(is_error(&panicked));
    let e = tool_error(&panicked, 0);
    assert_eq!(e.code.as_str(), "INTERNAL_ERROR");
    assert!(e.message.contains("panicked"));
    assert!(!texts(&panicked)[0].contains("index out of bounds"));
    let after = call(
        client,
        "billing_get_invoice",
        json!({"id": "inv_2026_0005"}),
    )
    .await;
    assert!(
        !is_error(&after),
        "the server stopped serving after a panic"
    );

    // Middleware short-circuit.
    let denied = call(
        client,
        "billing_void_invoice",
        json!({"invoice_id": "inv_2026_0005", "reason": "duplicate"}),
    )
    .await;
    assert!(is_error(&denied));
    assert_eq!(tool_error(&denied, 0).code.as_str(), "UNAUTHORIZED");

    // Unknown tool: an envelope, not JSON-RPC -32602.
    let unknown = call(client, "billing_get_invoce", json!({"id": "inv_2026_0001"})).await;
    assert!(is_error(&unknown));
    let e = tool_error(&unknown, 0);
    assert_eq!(e.code.as_str(), "UNKNOWN_ACTION");
    assert_eq!(e.detail_value("closest"), Some("billing_get_invoice"));
}

#[tokio::test]
async fn stdio_every_path() {
    let client = over_stdio(billing_command(env!("CARGO_BIN_EXE_billing-server"))).await;
    every_path(&client).await;
    let _ = client.cancel().await;
}

#[tokio::test]
async fn http_every_path() {
    let (client, running) = over_http(billing(), HttpOptions::default()).await;
    every_path(&client).await;
    let _ = client.cancel().await;
    bounded("shutdown", running.shutdown())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn http_stateless_every_path() {
    let (client, running) = over_http(billing(), HttpOptions::default().stateless(true)).await;
    every_path(&client).await;
    let _ = client.cancel().await;
    bounded("shutdown", running.shutdown())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn http_grouped_exposure_and_its_discriminator_errors() {
    let server = examples::billing::builder()
        .grouped()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (client, running) = over_http(server, HttpOptions::default()).await;
    let tools = client
        .list_all_tools()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "billing");

    let ok = call(
        &client,
        "billing",
        json!({"action": "get_invoice", "id": "inv_2026_0001"}),
    )
    .await;
    assert!(!is_error(&ok));

    let nf = call(
        &client,
        "billing",
        json!({"action": "get_invoice", "id": "inv_2026_9999"}),
    )
    .await;
    // Grouped: `tool.action`, the seed's spelling.
    let grouped = NOT_FOUND.replace("billing_list_invoices", "billing.list_invoices");
    assert_eq!(texts(&nf), vec![grouped]);

    let missing = call(&client, "billing", json!({"id": "inv_2026_0001"})).await;
    assert!(is_error(&missing));
    let e = tool_error(&missing, 0);
    assert_eq!(e.code.as_str(), "MISSING_DISCRIMINATOR");
    assert!(e.available_actions.iter().any(|a| a == "list_invoices"));
    assert!(e.detail_value("closest").is_some());

    let unknown = call(
        &client,
        "billing",
        json!({"action": "get_invoices", "id": "inv_2026_0001"}),
    )
    .await;
    let e = tool_error(&unknown, 0);
    assert_eq!(e.code.as_str(), "UNKNOWN_ACTION");
    assert_eq!(e.detail_value("closest"), Some("get_invoice"));
    assert_eq!(e.available_actions.len(), 10);

    let invalid = call(&client, "billing", json!({"action": "send_reminder", "invoice_id": "inv_2026_0001", "email": "x", "days_overdue": 3})).await;
    assert!(texts(&invalid)[0].starts_with("<validation_error action=\"billing.send_reminder\">"));

    let _ = client.cancel().await;
    bounded("shutdown", running.shutdown())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

/// README's main command: the demo drives a spawned server over stdio and shows each envelope.
#[tokio::test]
async fn the_demo_shows_every_envelope_over_a_real_connection() {
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_billing-server"));
    let transcript = bounded("demo", examples::billing::demo::transcript(exe))
        .await
        .unwrap_or_else(|e| panic!("demo: {e:#}"));
    assert!(transcript.contains(NOT_FOUND), "{transcript}");
    for needle in [
        "<validation_error action=\"billing_send_reminder\">",
        "<tool_error code=\"CONFLICT\" severity=\"warning\">",
        "<tool_error code=\"AMOUNT_EXCEEDS_BALANCE\" severity=\"error\">",
        "<tool_error code=\"DEPRECATED\" severity=\"warning\">",
        "<tool_error code=\"UNAUTHORIZED\" severity=\"error\">",
        "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">",
        "panicked; the server is still running",
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">",
        "<tool_error code=\"SERVER_BUSY\" severity=\"error\">",
        // The 6 s reconciliation: TIMEOUT synchronously, completed as a task.
        "<tool_error code=\"TIMEOUT\" severity=\"error\">",
        "← task started (resultType \"task\")",
        "→ tasks/get   ← working",
        "completed ← isError: false",
        "\"took_ms\":6000",
    ] {
        assert!(
            transcript.contains(needle),
            "missing {needle}:\n{transcript}"
        );
    }
    assert_eq!(
        transcript.matches("← isError: ").count(),
        examples::billing::demo::script().len() + examples::billing::demo::BUSY_CALLS
    );
}
