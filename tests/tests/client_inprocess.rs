//! The typed client against a hand-written `rmcp` server over an in-memory duplex pipe:
//! every envelope kind read back field for field, `throw_on_error`, warnings, retries.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fusion_runtime::client::{Envelope, FusionClient, FusionClientError, RetryPolicy};
use fusion_runtime::rmcp::ServiceExt;
use fusion_runtime::rmcp::handler::server::ServerHandler;
use fusion_runtime::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use fusion_runtime::rmcp::service::{RequestContext, RoleServer};
use fusion_runtime::{ErrorCode, Issue, IssueKind, Severity, ValidationReport, error};
use serde_json::json;

#[derive(Clone, Default)]
struct Scripted {
    flaky_calls: Arc<AtomicUsize>,
}

fn text(s: impl Into<String>) -> ContentBlock {
    ContentBlock::text(s.into())
}

impl ServerHandler for Scripted {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("scripted", "0.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::default())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = match request.name.as_ref() {
            "ok_with_warning" => CallToolResult::success(vec![
                text(r#"{"charged":false}"#),
                text(
                    error(ErrorCode::Conflict, "Invoice already paid")
                        .recovery("Do not charge again")
                        .warning()
                        .into_rendered(),
                ),
            ]),
            "not_found" => CallToolResult::error(vec![text(
                error(ErrorCode::NotFound, "No invoice with that ID")
                    .recovery("List invoices first, then retry with a real ID")
                    .available_actions(["billing.list_invoices"])
                    .details([("requestedId", "inv_2026_9999")])
                    .into_rendered(),
            )]),
            "invalid" => CallToolResult::error(vec![text(
                ValidationReport::new(vec![Issue::new(
                    "email",
                    IssueKind::InvalidFormat {
                        format: fusion_runtime::validation::Format::Email,
                    },
                    Some(json!("not-an-email")),
                )])
                .render("billing.send_reminder"),
            )]),
            "bare" => CallToolResult::error(vec![text("boom <not an envelope>")]),
            "empty_error" => CallToolResult::error(vec![]),
            "flaky" => {
                if self.flaky_calls.fetch_add(1, Ordering::SeqCst) < 2 {
                    CallToolResult::error(vec![text(
                        error(ErrorCode::RateLimited, "Slow down")
                            .retry_after(1)
                            .into_rendered(),
                    )])
                } else {
                    CallToolResult::success(vec![text("done")])
                }
            }
            "critical_busy" => {
                self.flaky_calls.fetch_add(1, Ordering::SeqCst);
                CallToolResult::error(vec![text(
                    error(ErrorCode::ServerBusy, "Busy")
                        .critical()
                        .retry_after(1)
                        .into_rendered(),
                )])
            }
            "internal" => {
                self.flaky_calls.fetch_add(1, Ordering::SeqCst);
                CallToolResult::error(vec![text(
                    error(ErrorCode::InternalError, "db down").into_rendered(),
                )])
            }
            other => CallToolResult::error(vec![text(format!("unknown {other}"))]),
        };
        Ok(result.into())
    }
}

async fn connect(handler: Scripted) -> FusionClient {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    FusionClient::connect(client_io)
        .await
        .expect("client connects")
}

#[tokio::test]
async fn warnings_travel_with_success() {
    let client = connect(Scripted::default()).await.throw_on_error(true);
    let out = client
        .call_tool("ok_with_warning", json!({}))
        .await
        .expect("success");
    assert!(!out.is_error);
    assert_eq!(out.text(), r#"{"charged":false}"#);
    assert_eq!(out.json(), Some(json!({"charged": false})));
    let warnings = out.warnings();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].code, ErrorCode::Conflict);
    let read = &warnings[0];
    assert_eq!(read.severity, Severity::Warning);
    assert_eq!(read.recovery.as_deref(), Some("Do not charge again"));
    assert_eq!(read.tool, "ok_with_warning");
}

#[tokio::test]
async fn tool_errors_read_back_field_for_field() {
    let client = connect(Scripted::default()).await;
    let out = client
        .call_tool("not_found", json!({"id": "inv_2026_9999"}))
        .await
        .expect("ok without throw");
    assert!(out.is_error);
    let client = client.throw_on_error(true);
    let err = client
        .call_tool("not_found", json!({}))
        .await
        .expect_err("raised");
    let e = err.as_tool_error().expect("a tool error");
    assert_eq!(e.code, ErrorCode::NotFound);
    assert_eq!(e.message, "No invoice with that ID");
    assert_eq!(
        e.recovery.as_deref(),
        Some("List invoices first, then retry with a real ID")
    );
    assert_eq!(
        e.available_actions,
        vec!["billing.list_invoices".to_owned()]
    );
    assert_eq!(
        e.details,
        vec![("requestedId".to_owned(), "inv_2026_9999".to_owned())]
    );
    assert_eq!(e.severity, Severity::Error);
    assert!(matches!(e.envelope, Some(Envelope::Tool(_))));
    assert!(!e.is_retryable());
}

#[tokio::test]
async fn validation_errors_become_validation_error_with_fields() {
    let client = connect(Scripted::default()).await;
    let err = client
        .call_tool_checked("invalid", json!({}))
        .await
        .expect_err("raised");
    let e = err.as_tool_error().expect("a tool error");
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert_eq!(e.fields.len(), 1);
    assert_eq!(e.fields[0].name, "email");
    assert_eq!(
        e.fields[0].text,
        "Invalid email format. You sent: 'not-an-email'. Expected a valid email address."
    );
    assert_eq!(
        e.recovery.as_deref(),
        Some("Fix the fields above and call the tool again. Do not explain the error.")
    );
}

#[tokio::test]
async fn errors_without_an_envelope_keep_their_text() {
    let client = connect(Scripted::default()).await;
    let err = client
        .call_tool_checked("bare", json!({}))
        .await
        .expect_err("raised");
    let e = err.as_tool_error().expect("a tool error");
    assert_eq!(e.code.as_str(), fusion_runtime::codes::UNKNOWN.as_str());
    assert_eq!(e.text, "boom <not an envelope>");
    assert_eq!(e.message, "boom <not an envelope>");
    let err = client
        .call_tool_checked("empty_error", json!({}))
        .await
        .expect_err("raised");
    assert!(
        err.as_tool_error()
            .is_some_and(|e| e.message.contains("without any text"))
    );
}

#[tokio::test]
async fn arguments_must_be_an_object() {
    let client = connect(Scripted::default()).await;
    let err = client
        .call_tool("not_found", json!([1, 2]))
        .await
        .expect_err("refused locally");
    assert!(matches!(err, FusionClientError::Json(_)));
}

#[tokio::test]
async fn retries_rate_limited_after_retry_after_and_stops_at_the_bound() {
    let handler = Scripted::default();
    let calls = Arc::clone(&handler.flaky_calls);
    let client = connect(handler).await;
    let started = std::time::Instant::now();
    let out = client
        .call_tool_with_retry("flaky", json!({}), RetryPolicy::default())
        .await
        .expect("third call succeeds");
    assert_eq!(out.text(), "done");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "waited retry_after twice"
    );

    calls.store(0, Ordering::SeqCst);
    let policy = RetryPolicy {
        max_attempts: 2,
        ..RetryPolicy::default()
    };
    let err = client
        .call_tool_with_retry("flaky", json!({}), policy)
        .await
        .expect_err("bounded");
    assert_eq!(
        err.as_tool_error().map(|e| e.code.clone()),
        Some(ErrorCode::RateLimited)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn never_retries_critical_or_internal() {
    let handler = Scripted::default();
    let calls = Arc::clone(&handler.flaky_calls);
    let client = connect(handler).await;
    assert!(
        client
            .call_tool_with_retry("critical_busy", json!({}), RetryPolicy::default())
            .await
            .is_err()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(
        client
            .call_tool_with_retry("internal", json!({}), RetryPolicy::default())
            .await
            .is_err()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
