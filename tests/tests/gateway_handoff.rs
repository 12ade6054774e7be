//! Handoff in a 2025 session: a triage handler hands the session to the `finance` domain (a
//! real upstream behind delegation), the session's tools change and `tools/list_changed` is
//! sent, a tool of the wrong domain is answered `HANDOFF_NAMESPACE_MISMATCH`, the carry-over
//! state reaches the upstream in the delegation token, and returning restores the tools.

use std::net::SocketAddr;
use std::time::Duration;

use fusion_runtime::auth::DelegationKey;
use fusion_runtime::client::{Envelope, parse_envelope};
use fusion_runtime::envelope::ToolResponse;
use fusion_runtime::gateway::{MountDelegation, MountOptions, Upstream};
use fusion_runtime::mcp::{HttpOptions, spawn_http};
use fusion_runtime::rmcp::model::{CallToolRequestParams, CallToolResult};
use fusion_runtime::rmcp::service::{NotificationContext, RunningService};
use fusion_runtime::rmcp::transport::StreamableHttpClientTransport;
use fusion_runtime::rmcp::{ClientHandler, RoleClient, ServiceExt};
use fusion_runtime::{Context, Server, ToolError, ToolInput, tool_action};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;

const LIMIT: Duration = Duration::from_secs(30);
const SECRET: &str = "gateway-handoff-key-0123456789-abcdefghijklm";

/// Why the user needs billing.
#[derive(Deserialize, ToolInput)]
struct Escalate {
    /// The invoice the user asks about.
    invoice: String,
}

/// Hands the conversation to the finance domain.
#[tool_action(name = "triage.escalate")]
async fn escalate(input: Escalate, cx: Context) -> Result<ToolResponse, ToolError> {
    Ok(cx.call().handoff(
        "finance",
        "a billing question",
        json!({"invoice": input.invoice}),
    ))
}

struct ListWatcher(mpsc::UnboundedSender<()>);

impl ClientHandler for ListWatcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

async fn names(client: &RunningService<RoleClient, ListWatcher>) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    names
}

async fn call(
    client: &RunningService<RoleClient, ListWatcher>,
    tool: &str,
    args: serde_json::Value,
) -> (String, bool) {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let serde_json::Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let r: CallToolResult = client.call_tool(params).await.expect("tools/call");
    let text = r
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect::<Vec<_>>()
        .join("\n");
    (text, r.is_error.unwrap_or(false))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_session_hands_off_to_finance_and_returns() {
    let mut upstream = tokio::process::Command::new(env!("CARGO_BIN_EXE_delegated-server"));
    upstream
        .arg("serve")
        .env("RUST_LOG", "off")
        .env("FUSION_DELEGATION_KEY", SECRET);
    let key = DelegationKey::new(SECRET).expect("key");
    let gateway = Server::builder()
        .name("triage")
        .action::<EscalateAction>()
        .mount_with(
            "finance",
            Upstream::stdio(upstream),
            MountOptions {
                handoff_only: true,
                delegation: Some(MountDelegation::new(key, "triage", "billing")),
                ..MountOptions::default()
            },
        )
        .build()
        .expect("builds");
    let http = spawn_http(
        gateway,
        SocketAddr::from(([127, 0, 0, 1], 0)),
        HttpOptions::default(),
    )
    .await
    .expect("serves");
    let (tx, mut changed) = mpsc::unbounded_channel();
    let client = ListWatcher(tx)
        .serve(StreamableHttpClientTransport::from_uri(http.url.clone()))
        .await
        .expect("a 2025 session");

    assert_eq!(names(&client).await, ["triage_escalate"]);
    let (wrong, is_error) = call(&client, "finance_billing_lookup", json!({"invoice": "x"})).await;
    assert!(is_error);
    insta::assert_snapshot!("mismatch_before_handoff", wrong);

    let (handed, is_error) = call(
        &client,
        "triage_escalate",
        json!({"invoice": "inv_2026_0001"}),
    )
    .await;
    assert!(!is_error, "{handed}");
    tokio::time::timeout(LIMIT, changed.recv())
        .await
        .expect("list_changed in time")
        .expect("list_changed");
    assert_eq!(
        names(&client).await,
        ["finance_billing_lookup", "gateway_return_to_triage"]
    );

    let (wrong, is_error) = call(&client, "triage_escalate", json!({"invoice": "x"})).await;
    assert!(is_error);
    insta::assert_snapshot!("mismatch_in_finance", wrong);
    assert!(
        matches!(parse_envelope(&wrong), Ok(Envelope::Tool(e)) if e.code().as_str() == "HANDOFF_NAMESPACE_MISMATCH")
    );

    let (looked_up, is_error) = call(
        &client,
        "finance_billing_lookup",
        json!({"invoice": "inv_1"}),
    )
    .await;
    assert!(!is_error, "{looked_up}");
    let got: serde_json::Value = serde_json::from_str(&looked_up).expect("JSON");
    assert_eq!(got["carry"], json!({"invoice": "inv_2026_0001"}));
    assert_eq!(got["issuer"], "triage");

    let (back, is_error) = call(&client, "gateway_return_to_triage", json!({})).await;
    assert!(!is_error, "{back}");
    tokio::time::timeout(LIMIT, changed.recv())
        .await
        .expect("list_changed in time")
        .expect("list_changed");
    assert_eq!(names(&client).await, ["triage_escalate"]);
    let _ = client.cancel().await;
    let _ = http.shutdown().await;
}
