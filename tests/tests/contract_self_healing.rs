//! Self-healing end to end: the billing example's committed lockfile, a server whose
//! `billing.get_invoice` renamed its `id` field, and a call with the old shape over MCP.

use examples::billing::{self, ListInvoicesAction, Store};
use fusion_runtime::client::{Envelope, FusionClient};
use fusion_runtime::contract::Lockfile;
use fusion_runtime::mcp::{HttpOptions, spawn_http};
use fusion_runtime::{Context, Server, ToolError, ToolInput, tool_action};
use serde::Deserialize;
use serde_json::json;

/// Get one invoice.
#[derive(Debug, Deserialize, ToolInput)]
pub struct GetInvoiceV2 {
    /// The invoice ID, e.g. `inv_2026_0001`.
    #[fusion(pattern = "^inv_[0-9]{4}_[0-9]{4}$")]
    pub invoice_id: String,
}

/// Get one invoice by its ID: customer, status, total, what is paid, lines.
#[tool_action(name = "billing.get_invoice", read_only, idempotent)]
pub async fn get_invoice_v2(
    input: GetInvoiceV2,
    store: Context<Store>,
) -> Result<billing::Invoice, ToolError> {
    store.state().get(&input.invoice_id).ok_or_else(|| {
        fusion_runtime::error(fusion_runtime::codes::NOT_FOUND, "No invoice with that ID")
    })
}

fn v2_server(lockfile: &str) -> Server {
    Server::builder()
        .name("billing")
        .state(Store::seeded())
        .action::<ListInvoicesAction>()
        .action::<GetInvoiceV2Action>()
        .self_healing(lockfile)
        .build()
        .expect("server builds")
}

#[test]
fn the_committed_billing_lockfile_is_current() {
    let server = billing::server().expect("billing builds");
    let committed = Lockfile::read(billing::LOCKFILE).expect("billing/fusion.lock is committed");
    let deltas = committed.check(server.contracts());
    assert!(deltas.is_empty(), "stale lockfile: {deltas:#?}");
    let current = Lockfile::from_contracts(server.contracts()).expect("contracts lock");
    let bytes = std::fs::read_to_string(billing::LOCKFILE).expect("readable");
    assert_eq!(
        bytes,
        current.to_string(),
        "run `cargo run --example billing -- lock`"
    );
    // No deltas: self-healing costs nothing per call.
    assert!(server.contract_awareness().is_none());
}

#[test]
fn lockfile_bytes_do_not_depend_on_registration_order() {
    let forward = billing::builder().build().expect("builds");
    let reversed = Server::builder()
        .state(Store::seeded())
        .state(billing::Operator::default())
        .action::<billing::RefundAction>()
        .action::<billing::ReconcileAction>()
        .action::<billing::VoidInvoiceAction>()
        .action::<billing::RecalculateTotalsAction>()
        .action::<billing::ExportLedgerAction>()
        .action::<billing::FindInvoiceAction>()
        .action::<billing::ChargeAction>()
        .action::<billing::SendReminderAction>()
        .action::<billing::GetInvoiceAction>()
        .action::<ListInvoicesAction>()
        .build()
        .expect("builds");
    assert_eq!(forward.contracts().len(), reversed.contracts().len());
    let a = Lockfile::from_contracts(forward.contracts())
        .expect("lock")
        .to_string();
    let b = Lockfile::from_contracts(reversed.contracts())
        .expect("lock")
        .to_string();
    assert_eq!(a, b);
}

#[tokio::test]
async fn old_shape_gets_contract_awareness_over_mcp() {
    let server = v2_server(billing::LOCKFILE);
    let awareness = server.contract_awareness().expect("the rename is a delta");
    assert!(awareness.section_for("billing.get_invoice").is_some());
    assert!(awareness.section_for("billing.list_invoices").is_none());

    let running = spawn_http(
        server,
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default(),
    )
    .await
    .expect("binds loopback");
    let client = FusionClient::connect_http(&running.url)
        .await
        .expect("connects");

    let out = client
        .call_tool("billing_get_invoice", json!({"id": "inv_2026_0001"}))
        .await
        .expect("answered");
    assert!(out.is_error);
    let err = out.error().expect("an error");
    let Some(Envelope::Validation(v)) = &err.envelope else {
        panic!("expected a validation error, got {:?}", err.envelope);
    };
    assert_eq!(v.action, "billing_get_invoice");
    assert!(
        v.fields
            .iter()
            .any(|f| f.name == "(root)" && f.text.contains("'id'"))
    );
    assert_eq!(v.sections.len(), 1, "{:?}", v.sections);
    let section = &v.sections[0];
    assert_eq!(section.name, "contract_awareness");
    assert!(
        section.xml.contains("severity=\"BREAKING\""),
        "{}",
        section.xml
    );
    assert!(
        section.xml.contains("'id'") && section.xml.contains("'invoice_id'"),
        "{}",
        section.xml
    );
    assert!(section.xml.contains("renamed"), "{}", section.xml);
    let text = out.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    assert!(
        text.ends_with("</contract_awareness>\n</validation_error>"),
        "{text}"
    );

    // An action without changes carries no section.
    let out = client
        .call_tool("billing_list_invoices", json!({"limit": 0}))
        .await
        .expect("answered");
    let err = out.error().expect("limit 0 is invalid");
    let Some(Envelope::Validation(v)) = &err.envelope else {
        panic!("expected a validation error");
    };
    assert!(v.sections.is_empty(), "{:?}", v.sections);

    // The new shape works.
    let out = client
        .call_tool(
            "billing_get_invoice",
            json!({"invoice_id": "inv_2026_0001"}),
        )
        .await
        .expect("answered");
    assert!(!out.is_error, "{:?}", out.content);
    let _ = client.close().await;
    running.shutdown().await.expect("stops");
}

#[tokio::test]
async fn a_missing_lockfile_turns_self_healing_off_and_the_server_runs() {
    let server = v2_server("/nonexistent/fusion.lock");
    assert!(server.contract_awareness().is_none());
    let r = server
        .call_json("billing_get_invoice", json!({"id": "x"}))
        .await;
    assert!(r.is_error);
    let text: Vec<&str> = r.texts().collect();
    assert!(!text[0].contains("contract_awareness"));
}
