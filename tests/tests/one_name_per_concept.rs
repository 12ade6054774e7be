//! One name per concept (issue 49): the test kit and `FusionClient` hand back the same
//! `ToolCallError` for the same failing call, and every old name kept as a deprecated alias
//! still does what it did.

use std::time::Duration;

use examples::billing::{GetInvoice, GetInvoiceAction};
use fusion_runtime::client::{FusionClient, ToolCallError, parse_tool_error};
use fusion_runtime::codes::{self, NOT_FOUND};
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::testing::TestServer;
use fusion_runtime::{
    Context, ErrorCode, Server, Severity, ToolError, ToolInput, error, tool_action,
};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);

/// Failing calls of the billing example, by tool name with JSON: an unknown invoice (recovery,
/// actions, details), a near-miss tool name (the closest name, the tools to pick from), and a
/// name with nothing close.
fn failing_calls() -> [(&'static str, Value); 3] {
    [
        ("billing_get_invoice", json!({"id": "inv_2026_9999"})),
        ("billing_get_invoise", json!({"id": "inv_2026_0001"})),
        ("zzz", json!({})),
    ]
}

/// The kit's reading of each failing call, and the client's over `client`.
async fn both_readings(
    kit: &TestServer,
    client: &FusionClient,
) -> Vec<(Option<ToolCallError>, Option<ToolCallError>)> {
    let mut readings = Vec::new();
    for (tool, arguments) in failing_calls() {
        let in_process = kit
            .call_tool(tool, arguments.clone())
            .await
            .error()
            .cloned();
        let outcome = tokio::time::timeout(LIMIT, client.call_tool(tool, arguments))
            .await
            .unwrap_or_else(|e| panic!("{tool}: no answer in time: {e}"))
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        readings.push((in_process, outcome.error()));
    }
    readings
}

fn assert_same(readings: &[(Option<ToolCallError>, Option<ToolCallError>)]) {
    for (kit, client) in readings {
        let kit = kit
            .as_ref()
            .unwrap_or_else(|| panic!("the kit read no error"));
        let client = client
            .as_ref()
            .unwrap_or_else(|| panic!("the client read no error for {}", kit.tool));
        assert_eq!(kit, client, "{}", kit.tool);
    }
    let [(found, _), (near, _), (nothing, _)] = readings else {
        panic!("three readings")
    };
    // What the two agree on is the whole envelope, not an empty reading.
    let found = found.as_ref().unwrap_or_else(|| panic!("no error"));
    assert_eq!(found.code, NOT_FOUND);
    assert_eq!(
        found.recovery.as_deref(),
        Some("List invoices first, then retry with a real ID")
    );
    assert_eq!(found.available_actions, ["billing_list_invoices"]);
    assert_eq!(found.detail_value("requestedId"), Some("inv_2026_9999"));
    let near = near.as_ref().unwrap_or_else(|| panic!("no error"));
    assert_eq!(near.code, codes::UNKNOWN_ACTION);
    assert_eq!(near.detail_value("closest"), Some("billing_get_invoice"));
    assert!(!near.available_actions.is_empty());
    let nothing = nothing.as_ref().unwrap_or_else(|| panic!("no error"));
    assert_eq!(nothing.code, codes::UNKNOWN_ACTION);
}

/// The billing example in the test kit, and served over HTTP on loopback with a
/// `FusionClient` connected to it (the server runs while its handle is held).
async fn billing_in_process_and_over_http() -> (TestServer, HttpServer, FusionClient) {
    let kit = TestServer::new(examples::billing::server().unwrap_or_else(|e| panic!("{e}")));
    let running = spawn_http(
        examples::billing::server().unwrap_or_else(|e| panic!("{e}")),
        "127.0.0.1:0"
            .parse()
            .unwrap_or_else(|e| panic!("loopback: {e}")),
        HttpOptions::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("binds loopback: {e}"));
    let client = FusionClient::connect_http(&running.url)
        .await
        .unwrap_or_else(|e| panic!("connects: {e}"));
    (kit, running, client)
}

#[tokio::test]
async fn the_test_kit_and_fusion_client_read_the_same_error_over_http() {
    let (kit, _running, client) = billing_in_process_and_over_http().await;
    assert_same(&both_readings(&kit, &client).await);
}

/// The typed call is one call on both sides: the kit calls an action as a client does, by
/// the tool the exposure lists it as, so the error it reads names the tool the client's
/// `call::<A>` names.
#[tokio::test]
async fn the_typed_call_reads_the_same_error_in_the_kit_and_the_client() {
    let (kit, _running, client) = billing_in_process_and_over_http().await;
    let missing = GetInvoice {
        id: "inv_2026_9999".into(),
    };
    let in_process = kit.call::<GetInvoiceAction>(&missing).await;
    let kit_error = in_process
        .error()
        .cloned()
        .unwrap_or_else(|| panic!("the kit read no error"));
    let client_error = tokio::time::timeout(LIMIT, client.call::<GetInvoiceAction>(&missing))
        .await
        .unwrap_or_else(|e| panic!("no answer in time: {e}"))
        .err()
        .and_then(|e| e.as_tool_error().cloned())
        .unwrap_or_else(|| panic!("the client read no tool error"));
    assert_eq!(kit_error, client_error);
    assert_eq!(kit_error.tool, "billing_get_invoice");
    assert_eq!(kit_error.code, NOT_FOUND);
    // A typed call that succeeds reads the same value on both sides.
    let found = GetInvoice {
        id: "inv_2026_0001".into(),
    };
    let kit_value: Value = kit.call::<GetInvoiceAction>(&found).await.output();
    let client_value = tokio::time::timeout(LIMIT, client.call::<GetInvoiceAction>(&found))
        .await
        .unwrap_or_else(|e| panic!("no answer in time: {e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        kit_value,
        serde_json::to_value(&client_value.value).unwrap_or_else(|e| panic!("{e}"))
    );
}

#[tokio::test]
async fn the_test_kit_and_fusion_client_read_the_same_error_over_stdio() {
    let kit = TestServer::new(examples::billing::server().unwrap_or_else(|e| panic!("{e}")));
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_billing-server"));
    command
        .arg("serve")
        .env("RUST_LOG", "off")
        .env_remove("BILLING_OPERATOR_TOKEN");
    let client = tokio::time::timeout(LIMIT, FusionClient::spawn(command))
        .await
        .unwrap_or_else(|e| panic!("handshake in time: {e}"))
        .unwrap_or_else(|e| panic!("spawns and connects: {e}"));
    assert_same(&both_readings(&kit, &client).await);
}

#[test]
fn from_error_reads_a_handler_s_error_as_the_client_does() {
    let e = error(NOT_FOUND, "No invoice with that ID")
        .recovery("List invoices first")
        .available_actions(["billing.list_invoices"])
        .detail("requestedId", "inv_9")
        .retry_after(Duration::from_millis(1500));
    let read = ToolCallError::from_error("billing_get_invoice", &e);
    assert_eq!(read.tool, "billing_get_invoice");
    assert_eq!(read.code, NOT_FOUND);
    assert_eq!(read.message, "No invoice with that ID");
    assert_eq!(read.recovery.as_deref(), Some("List invoices first"));
    assert_eq!(read.available_actions, ["billing.list_invoices"]);
    assert_eq!(read.details, [("requestedId".into(), "inv_9".into())]);
    assert_eq!(read.severity, Severity::Error);
    // As the envelope says it: whole seconds, rounded up.
    assert_eq!(read.retry_after, Some(Duration::from_secs(2)));
    assert_eq!(read.text, e.render());
    // A warning is read too (a client reads one off a successful result).
    let warning = ToolCallError::from_error("t", &error("ZERO", "zero").warning());
    assert_eq!(warning.severity, Severity::Warning);
    assert_eq!(warning.code, ErrorCode::parse("ZERO"));
}

/// The deprecated builder names build the same envelope, byte for byte, and the deprecated
/// readers read what `ToolCallError` does.
#[test]
#[allow(deprecated)]
fn the_deprecated_error_names_do_what_they_did() {
    let old = error(NOT_FOUND, "No invoice with that ID")
        .suggest("List invoices first")
        .actions(["billing.list_invoices", "billing.search"])
        .details([("requestedId", "inv_9")])
        .critical();
    let new = error(NOT_FOUND, "No invoice with that ID")
        .recovery("List invoices first")
        .available_actions(["billing.list_invoices", "billing.search"])
        .details([("requestedId", "inv_9")])
        .critical();
    assert_eq!(old.render(), new.render());
    assert_eq!(old, new);
    assert!(
        old.render()
            .contains("<recovery>List invoices first</recovery>")
    );
    let read = ToolCallError::from_error("t", &old);
    assert_eq!(old.suggestion(), read.recovery.as_deref());
    assert_eq!(old.detail_pairs(), read.details.as_slice());
    assert_eq!(old.severity_level(), read.severity);
    assert_eq!(old.severity_level(), Severity::Critical);
    // An empty recovery is not one, as before.
    assert_eq!(error("X", "m").suggest("").suggestion(), None);
    // The parsed envelope reads the same through both.
    let parsed = parse_tool_error(old.render()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed.suggestion(), Some("List invoices first"));
}

#[test]
#[allow(deprecated)]
fn the_deprecated_code_paths_spell_the_codes_of_codes() {
    assert_eq!(
        fusion_runtime::server::RESULT_TRUNCATED,
        codes::RESULT_TRUNCATED.as_str()
    );
    assert_eq!(
        fusion_runtime::server::RESULT_TOO_LARGE,
        codes::RESULT_TOO_LARGE.as_str()
    );
    assert_eq!(
        fusion_runtime::context::ELICITATION_UNSUPPORTED,
        codes::ELICITATION_UNSUPPORTED.as_str()
    );
    assert_eq!(
        fusion_runtime::client::UNKNOWN_CODE,
        codes::UNKNOWN.as_str()
    );
}

#[tokio::test]
#[allow(deprecated)]
async fn the_deprecated_test_kit_names_call_as_the_new_ones() {
    let kit = TestServer::new(examples::billing::server().unwrap_or_else(|e| panic!("{e}")));
    for id in ["inv_2026_0001", "inv_2026_9999", "INV-1"] {
        let input = GetInvoice { id: id.into() };
        let old = kit.call_action::<GetInvoiceAction>(&input).await;
        let new = kit.call::<GetInvoiceAction>(&input).await;
        assert_eq!(old, new, "{id}");
        let old = kit.call_with("billing_get_invoice", &input).await;
        let new = kit.call_tool_with("billing_get_invoice", &input).await;
        assert_eq!(old, new, "{id}");
        assert_eq!(
            new.response(),
            kit.call_tool("billing_get_invoice", json!({"id": id}))
                .await
                .response(),
            "{id}"
        );
    }
}

/// What a context reads of its call.
#[derive(serde::Deserialize, ToolInput)]
struct Probe {
    /// Any text.
    text: String,
}

/// Reports what the handler's context sees, through the old and the new names.
#[tool_action(name = "lab.probe")]
async fn probe(input: Probe, cx: Context<String>) -> Result<Value, ToolError> {
    #[allow(deprecated)]
    let old = cx.call();
    Ok(json!({
        "same": std::ptr::eq(old, cx.untyped()),
        "tool": cx.tool(),
        "untyped_tool": cx.untyped().tool(),
        "action": cx.action(),
        "state": cx.state(),
        "text": input.text,
    }))
}

#[tokio::test]
async fn a_handler_reaches_its_state_and_its_call_without_the_untyped_context() {
    let kit = TestServer::build(
        Server::builder()
            .state("the state".to_owned())
            .action::<ProbeAction>(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let seen: Value = kit
        .call_tool("lab_probe", json!({"text": "hi"}))
        .await
        .output();
    assert_eq!(
        seen,
        json!({
            "same": true,
            "tool": "lab_probe",
            "untyped_tool": "lab_probe",
            "action": "lab.probe",
            "state": "the state",
            "text": "hi",
        })
    );
}
