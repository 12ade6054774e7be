//! The typed client against the billing example over stdio (the spawned `billing-server`)
//! and streamable HTTP: every envelope kind read back field for field, typed calls with the
//! server's own types, and warnings returned with the value.

use std::time::Duration;

use examples::billing::{
    Charge, ChargeAction, GetInvoice, GetInvoiceAction, ListInvoices, ListInvoicesAction,
    SendReminder, SendReminderAction, Status,
};
use fusion_runtime::client::{Envelope, FusionClient, FusionClientError};
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::server::Exposure;
use fusion_runtime::{ErrorCode, Severity};
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(30);

async fn stdio() -> FusionClient {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_billing-server"));
    command
        .arg("serve")
        .env("RUST_LOG", "off")
        .env_remove("BILLING_OPERATOR_TOKEN");
    tokio::time::timeout(LIMIT, FusionClient::spawn(command))
        .await
        .expect("handshake in time")
        .expect("spawns and connects")
}

/// Serves `server` over streamable HTTP on an ephemeral loopback port and connects a client.
async fn serve_http(server: fusion_runtime::Server) -> (HttpServer, FusionClient) {
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
    (running, client)
}

async fn every_envelope_kind(client: FusionClient) {
    // Typed success with the server's types.
    let list = client
        .call::<ListInvoicesAction>(&ListInvoices {
            status: Some(Status::Open),
            limit: Some(2),
        })
        .await
        .expect("typed list");
    assert!(list.warnings.is_empty());
    assert!(!list.value.invoices.is_empty() && list.value.invoices.len() <= 2);
    let first = list.value.invoices[0].id.clone();
    let invoice = client
        .call::<GetInvoiceAction>(&GetInvoice { id: first.clone() })
        .await
        .expect("typed get");
    assert_eq!(invoice.value.id, first);

    // NOT_FOUND, field for field, from a typed call.
    let err = client
        .call::<GetInvoiceAction>(&GetInvoice {
            id: "inv_2026_9999".into(),
        })
        .await
        .expect_err("unknown invoice");
    let e = err.as_tool_error().expect("a tool error");
    assert_eq!(e.code, ErrorCode::NotFound);
    assert_eq!(e.severity, Severity::Error);
    assert_eq!(e.message, "No invoice with that ID");
    assert_eq!(
        e.recovery.as_deref(),
        Some("List invoices first, then retry with a real ID")
    );
    assert_eq!(e.available_actions, ["billing_list_invoices"]);
    assert_eq!(
        e.details,
        [("requestedId".to_owned(), "inv_2026_9999".to_owned())]
    );
    assert!(matches!(e.envelope, Some(Envelope::Tool(_))));

    // A validation error from a typed input the server rejects.
    let err = client
        .call::<SendReminderAction>(&SendReminder {
            invoice_id: first.clone(),
            email: "not-an-email".into(),
            days_overdue: 3,
        })
        .await
        .expect_err("bad email");
    let e = err.as_tool_error().expect("a tool error");
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert_eq!(e.fields.len(), 1);
    assert_eq!(e.fields[0].name, "email");
    assert_eq!(
        e.fields[0].text,
        "Invalid email format. You sent: 'not-an-email'. Expected a valid email address."
    );

    // Untyped: wrong types the typed API cannot even express.
    let out = client
        .call_tool(
            "billing_send_reminder",
            json!({"invoice_id": 7, "emial": "a@b.co"}),
        )
        .await
        .expect("answered");
    assert!(out.is_error);
    let e = out.error().expect("error");
    assert!(
        e.fields
            .iter()
            .any(|f| f.name == "(root)" && f.text.contains("did you mean 'email'?"))
    );
    assert!(
        e.fields
            .iter()
            .any(|f| f.name == "invoice_id" && f.text.starts_with("Invalid type. You sent: 7."))
    );

    // INTERNAL_ERROR from a plain io::Error.
    let out = client
        .call_tool("billing_export_ledger", json!({}))
        .await
        .expect("answered");
    let e = out.error().expect("error");
    assert_eq!(e.code, ErrorCode::InternalError);
    assert!(
        e.recovery
            .as_deref()
            .is_some_and(|r| r.contains("not retry")),
        "{:?}",
        e.recovery
    );

    // An unknown tool is an envelope naming the closest one, not a JSON-RPC error.
    let out = client
        .call_tool("billing_get_invoices", json!({}))
        .await
        .expect("answered");
    let e = out.error().expect("error");
    assert_eq!(e.code, ErrorCode::UnknownAction);
    assert!(e.message.contains("billing_get_invoice"), "{}", e.message);

    // Warnings on a successful result are not lost.
    let paid = client
        .call::<ListInvoicesAction>(&ListInvoices {
            status: Some(Status::Paid),
            limit: Some(1),
        })
        .await
        .expect("paid invoices");
    let paid_id = paid.value.invoices[0].id.clone();
    let charged = client
        .call::<ChargeAction>(&Charge {
            invoice_id: paid_id,
            amount_cents: 100,
        })
        .await
        .expect("a warning, not an error");
    assert_eq!(charged.warnings.len(), 1);
    assert_eq!(charged.warnings[0].severity, Severity::Warning);

    // A deprecated action answers with its result plus a DEPRECATED warning.
    let out = client
        .call_tool("billing_find_invoice", json!({"id": first}))
        .await
        .expect("answered");
    assert!(!out.is_error);
    let warnings = out.warnings();
    assert!(warnings.iter().any(|w| w.code == ErrorCode::Deprecated));

    // throw_on_error turns error results into Err.
    let client = client.throw_on_error(true);
    let err = client
        .call_tool("billing_get_invoice", json!({"id": "inv_2026_9999"}))
        .await;
    assert!(matches!(err, Err(FusionClientError::Tool(_))));
    let _ = client.close().await;
}

#[tokio::test]
async fn over_stdio() {
    tokio::time::timeout(LIMIT * 2, every_envelope_kind(stdio().await))
        .await
        .expect("in time");
}

#[tokio::test]
async fn over_streamable_http() {
    let server = examples::billing::server().expect("builds");
    let (running, client) = serve_http(server).await;
    tokio::time::timeout(LIMIT * 2, every_envelope_kind(client))
        .await
        .expect("in time");
    running.shutdown().await.expect("stops");
}

#[tokio::test]
async fn typed_calls_through_a_grouped_server() {
    let server = examples::billing::builder()
        .grouped()
        .build()
        .expect("builds");
    let (running, client) = serve_http(server).await;
    let client = client.exposure(Exposure::Grouped {
        discriminator: "action".into(),
    });
    let got = client
        .call::<GetInvoiceAction>(&GetInvoice {
            id: "inv_2026_0001".into(),
        })
        .await
        .expect("typed call through the billing group");
    assert_eq!(got.value.id, "inv_2026_0001");
    let _ = client.close().await;
    running.shutdown().await.expect("stops");
}

#[tokio::test]
async fn retries_a_rate_limited_charge_after_retry_after() {
    use fusion_runtime::client::RetryPolicy;
    use fusion_runtime::guard::RateLimit;

    // The billing server, with billing.charge limited to one call per 4 s: the window is wide
    // enough that a loaded machine's slow round trip cannot outlast it between two calls.
    let server = examples::billing::builder()
        .rate_limit("billing.charge", RateLimit::new(1, Duration::from_secs(4)))
        .build()
        .expect("builds");
    let (running, client) = serve_http(server).await;
    let charge = Charge {
        invoice_id: "inv_2026_0001".into(),
        amount_cents: 1,
    };
    client
        .call::<ChargeAction>(&charge)
        .await
        .expect("first charge passes");

    // Without retry: RATE_LIMITED, read back with its retry_after.
    let err = client
        .call::<ChargeAction>(&charge)
        .await
        .expect_err("limited");
    let e = err.as_tool_error().expect("a tool error");
    assert_eq!(e.code, ErrorCode::RateLimited);
    assert!(
        e.retry_after
            .is_some_and(|d| d >= Duration::from_secs(1) && d <= Duration::from_secs(4)),
        "the limiter's wait in whole seconds: {:?}",
        e.retry_after
    );
    assert!(e.is_retryable());

    // With retry: waits retry_after, then the charge goes through.
    let started = std::time::Instant::now();
    let done = tokio::time::timeout(
        LIMIT,
        client.call_with_retry::<ChargeAction>(&charge, RetryPolicy::default()),
    )
    .await
    .expect("in time")
    .expect("charged after waiting");
    assert!(done.value.charged);
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "it waited before retrying"
    );

    // A policy that may not wait that long gives up with the error instead.
    let impatient = RetryPolicy {
        max_wait: Duration::from_millis(10),
        ..RetryPolicy::default()
    };
    let err = client
        .call_with_retry::<ChargeAction>(&charge, impatient)
        .await
        .expect_err("gives up");
    assert_eq!(
        err.as_tool_error().map(|e| e.code.clone()),
        Some(ErrorCode::RateLimited)
    );
    let _ = client.close().await;
    running.shutdown().await.expect("stops");
}

/// The same server in process, with the test kit: what the demo shows over a connection
/// (typed calls, the charge warning, the middleware's refusal, the per-client rate limit),
/// asserted without a transport, and the limit's minute passed on tokio's paused clock. The
/// operator state is built here, not read from `BILLING_OPERATOR_TOKEN`.
#[tokio::test(start_paused = true)]
async fn in_process_with_the_test_kit() {
    use examples::billing::{
        ChargeResult, Invoice, InvoiceList, Operator, VoidInvoice, VoidInvoiceAction,
    };
    use fusion_runtime::testing::{TestServer, advance};

    let with_operator = |operator: Operator| {
        examples::billing::builder()
            .state(operator)
            .self_healing(examples::billing::LOCKFILE)
            .build()
            .expect("builds")
    };
    let kit = TestServer::new(with_operator(Operator { token: None }));
    let open: InvoiceList = kit
        .call::<ListInvoicesAction>(&ListInvoices {
            status: Some(Status::Open),
            limit: Some(1),
        })
        .await
        .output();
    let id = open.invoices[0].id.clone();
    let paid = |kit: TestServer, id: String| async move {
        kit.call::<GetInvoiceAction>(&GetInvoice { id })
            .await
            .output::<Invoice>()
            .paid_cents
    };
    let paid_before = paid(kit.clone(), id.clone()).await;
    let charge = Charge {
        invoice_id: id.clone(),
        amount_cents: 1,
    };

    for _ in 0..3 {
        let charged: ChargeResult = kit.call::<ChargeAction>(&charge).await.output();
        assert!(charged.charged && charged.invoice_id == id);
    }
    let limited = kit.call::<ChargeAction>(&charge).await;
    let e = limited.expect_error("RATE_LIMITED");
    assert!(e.retry_after.is_some_and(|d| d > Duration::ZERO));
    // Per client: another caller still has its three.
    let other = kit.with_scopes(Vec::<String>::new());
    assert!(!other.call::<ChargeAction>(&charge).await.is_error());
    // A third of the minute later, one more charge is allowed, and no more.
    advance(Duration::from_secs(21)).await;
    assert!(!kit.call::<ChargeAction>(&charge).await.is_error());
    kit.call::<ChargeAction>(&charge)
        .await
        .expect_error("RATE_LIMITED");
    // Five charges of one cent went through (3 + the other caller's + 1 after the wait); the
    // three refused ones moved nothing.
    assert_eq!(paid(kit.clone(), id.clone()).await, paid_before + 5);

    let paid: InvoiceList = kit
        .call::<ListInvoicesAction>(&ListInvoices {
            status: Some(Status::Paid),
            limit: Some(1),
        })
        .await
        .output();
    let warned = other
        .call::<ChargeAction>(&Charge {
            invoice_id: paid.invoices[0].id.clone(),
            amount_cents: 100,
        })
        .await;
    let settled = warned.output::<ChargeResult>();
    assert!(!settled.charged && settled.amount_cents == 0);
    let w = warned.warnings();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].code, ErrorCode::Conflict);
    assert_eq!(w[0].available_actions, ["billing_get_invoice"]);

    let void = VoidInvoice {
        invoice_id: id,
        reason: "Sent twice".into(),
    };
    let refused = kit.call::<VoidInvoiceAction>(&void).await;
    refused.expect_error("UNAUTHORIZED");
    // With a token the middleware lets the same call through.
    let operator = TestServer::new(with_operator(Operator {
        token: Some("operator-token".into()),
    }));
    let voided = operator.call::<VoidInvoiceAction>(&void).await;
    assert!(!voided.is_error(), "{voided:?}");
}
