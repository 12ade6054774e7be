//! Handoff in a 2025 session: a triage handler hands the session to the `finance` domain (a
//! real upstream behind delegation), the session's tools change and `tools/list_changed` is
//! sent, a tool of the wrong domain is answered `HANDOFF_NAMESPACE_MISMATCH`, the carry-over
//! state reaches the upstream in the delegation token, and returning restores the tools.

use std::time::Duration;

use fusion_runtime::Server;
use fusion_runtime::auth::DelegationKey;
use fusion_runtime::client::{Envelope, parse_envelope};
use fusion_runtime::mcp::HttpOptions;
use fusion_runtime::rmcp::model::{CallToolRequestParams, CallToolResult};
use fusion_runtime::rmcp::service::RunningService;
use fusion_runtime::rmcp::{RoleClient, ServiceExt};
use fusion_tests::clients::{ListWatcher, list_watcher, over_http_with};
use fusion_tests::triage;
use serde_json::json;
use tokio::sync::mpsc;

const LIMIT: Duration = Duration::from_secs(30);
const SECRET: &str = "gateway-handoff-key-0123456789-abcdefghijklm";

/// The triage gateway in front of a real `delegated-server` over stdio, sharing its key.
fn triage_gateway() -> Server {
    let mut upstream = tokio::process::Command::new(env!("CARGO_BIN_EXE_delegated-server"));
    upstream
        .arg("serve")
        .env("RUST_LOG", "off")
        .env("FUSION_DELEGATION_KEY", SECRET);
    let key = DelegationKey::new(SECRET).expect("key");
    triage::gateway(upstream, key).expect("builds")
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

/// The session's way through the finance domain: handed off by `triage_escalate` (the
/// domain's tools listed, `tools/list_changed` sent), a triage tool called from inside it, a
/// delegated call carrying the carry-over state, and the return (the triage tools again).
/// Returns the answer to the wrong-domain call.
async fn hand_off_and_return(
    client: &RunningService<RoleClient, ListWatcher>,
    changed: &mut mpsc::UnboundedReceiver<()>,
) -> String {
    let (handed, is_error) = call(
        client,
        "triage_escalate",
        json!({"invoice": "inv_2026_0001"}),
    )
    .await;
    assert!(!is_error, "{handed}");
    assert!(handed.starts_with("Handed off to finance"), "{handed}");
    tokio::time::timeout(LIMIT, changed.recv())
        .await
        .expect("list_changed in time")
        .expect("list_changed");
    assert_eq!(
        names(client).await,
        ["finance_billing_lookup", "gateway_return_to_triage"]
    );

    let (wrong, is_error) = call(client, "triage_escalate", json!({"invoice": "x"})).await;
    assert!(is_error, "{wrong}");

    let (looked_up, is_error) = call(
        client,
        "finance_billing_lookup",
        json!({"invoice": "inv_1"}),
    )
    .await;
    assert!(!is_error, "{looked_up}");
    let got: serde_json::Value = serde_json::from_str(&looked_up).expect("JSON");
    assert_eq!(got["carry"], json!({"invoice": "inv_2026_0001"}));
    assert_eq!(got["issuer"], "triage");

    let (back, is_error) = call(client, "gateway_return_to_triage", json!({})).await;
    assert!(!is_error, "{back}");
    tokio::time::timeout(LIMIT, changed.recv())
        .await
        .expect("list_changed in time")
        .expect("list_changed");
    assert_eq!(names(client).await, ["triage_escalate"]);
    wrong
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_session_hands_off_to_finance_and_returns() {
    let (watcher, mut changed) = list_watcher();
    let (client, http) = over_http_with(triage_gateway(), HttpOptions::default(), watcher).await;

    assert_eq!(names(&client).await, ["triage_escalate"]);
    let (wrong, is_error) = call(&client, "finance_billing_lookup", json!({"invoice": "x"})).await;
    assert!(is_error);
    insta::assert_snapshot!("mismatch_before_handoff", wrong);

    let wrong = hand_off_and_return(&client, &mut changed).await;
    insta::assert_snapshot!("mismatch_in_finance", wrong);
    assert!(
        matches!(parse_envelope(&wrong), Ok(Envelope::Tool(e)) if e.code().as_str() == "HANDOFF_NAMESPACE_MISMATCH")
    );
    let _ = client.cancel().await;
    let _ = http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_stdio_session_hands_off_to_finance_and_returns() {
    use fusion_runtime::rmcp::transport::TokioChildProcess;

    // A real gateway process over stdio, itself spawning the real upstream over stdio.
    let mut gateway = tokio::process::Command::new(env!("CARGO_BIN_EXE_handoff-gateway"));
    gateway
        .arg("serve")
        .env("RUST_LOG", "off")
        .env("FUSION_DELEGATION_KEY", SECRET)
        .env(
            "FUSION_UPSTREAM_BIN",
            env!("CARGO_BIN_EXE_delegated-server"),
        );
    let (transport, _) = TokioChildProcess::builder(gateway)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the gateway spawns");
    let (watcher, mut changed) = list_watcher();
    let client = tokio::time::timeout(LIMIT, watcher.serve(transport))
        .await
        .expect("in time")
        .expect("a 2025 stdio session");

    assert_eq!(names(&client).await, ["triage_escalate"]);
    let wrong = hand_off_and_return(&client, &mut changed).await;
    assert_eq!(
        wrong,
        include_str!("snapshots/gateway_handoff__mismatch_in_finance.snap")
            .split("---\n")
            .nth(2)
            .unwrap_or_default()
            .trim_end(),
        "the same answer as over HTTP"
    );
    let _ = client.cancel().await;
}

/// Stateless streamable HTTP has no session for a 2025 client either: a handoff cannot
/// change what the caller's next `tools/list` shows, so it takes the 2026-07-28 form — one
/// list for everyone, the domain's tools taking the handle the handoff answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_2025_client_is_handed_a_handle() {
    let (watcher, _changed) = list_watcher();
    let stateless = HttpOptions::default().stateless(true);
    let (client, http) = over_http_with(triage_gateway(), stateless, watcher).await;
    assert_eq!(
        names(&client).await,
        ["finance_billing_lookup", "triage_escalate"]
    );
    let (without, is_error) = call(
        &client,
        "finance_billing_lookup",
        json!({"invoice": "inv_1"}),
    )
    .await;
    assert!(is_error);
    assert!(without.contains("HANDOFF_NAMESPACE_MISMATCH"), "{without}");

    let mut params = CallToolRequestParams::new("triage_escalate");
    if let serde_json::Value::Object(map) = json!({"invoice": "inv_2026_0001"}) {
        params = params.with_arguments(map);
    }
    let handed: CallToolResult = client.call_tool(params).await.expect("tools/call");
    assert_ne!(handed.is_error, Some(true), "{handed:?}");
    let handle = handed
        .structured_content
        .as_ref()
        .and_then(|s| s["handoff"].as_str())
        .expect("a handle")
        .to_owned();
    let (looked_up, is_error) = call(
        &client,
        "finance_billing_lookup",
        json!({"invoice": "inv_1", "handoff": handle}),
    )
    .await;
    assert!(!is_error, "{looked_up}");
    let got: serde_json::Value = serde_json::from_str(&looked_up).expect("JSON");
    assert_eq!(got["carry"], json!({"invoice": "inv_2026_0001"}));
    let _ = client.cancel().await;
    let _ = http.shutdown().await;
}

/// Raw JSON-RPC lines over an in-memory stdio connection, for 2026-07-28 requests.
struct Raw {
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    next: u64,
}

impl Raw {
    fn connect(server: Server) -> Raw {
        use tokio::io::AsyncBufReadExt;
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(server_io);
        tokio::spawn(async move {
            let options = fusion_runtime::mcp::StdioOptions::default();
            let _ = fusion_runtime::mcp::serve_io(server, read, write, options).await;
        });
        let (reader, writer) = tokio::io::split(client_io);
        Raw {
            lines: tokio::io::BufReader::new(reader).lines(),
            writer,
            next: 0,
        }
    }

    /// A 2026-07-28 request's result.
    async fn request(&mut self, method: &str, mut params: serde_json::Value) -> serde_json::Value {
        use tokio::io::AsyncWriteExt;
        self.next += 1;
        let id = self.next;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        });
        let mut line =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.expect("write");
        loop {
            let line = tokio::time::timeout(LIMIT, self.lines.next_line())
                .await
                .expect("an answer in time")
                .expect("reads")
                .expect("open");
            let message: serde_json::Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] == json!(id) {
                return message["result"].clone();
            }
        }
    }

    async fn call(
        &mut self,
        tool: &str,
        arguments: serde_json::Value,
    ) -> (String, bool, serde_json::Value) {
        let r = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        let text = r["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (
            text,
            r["isError"] == json!(true),
            r["structuredContent"].clone(),
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_handoff_answers_a_handle_the_domains_tools_take() {
    let gateway = triage_gateway();
    let mut raw = Raw::connect(gateway);

    // One list for everyone: the domain's tools are there, taking the handle.
    let listed = raw.request("tools/list", json!({})).await;
    let tools = listed["tools"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["triage_escalate", "finance_billing_lookup"]);
    let lookup = &tools[1]["inputSchema"];
    assert_eq!(lookup["properties"]["handoff"]["type"], "string");
    assert!(
        lookup["required"]
            .as_array()
            .is_some_and(|r| r.contains(&json!("handoff")))
    );

    let (without, is_error, _) = raw
        .call("finance_billing_lookup", json!({"invoice": "inv_1"}))
        .await;
    assert!(is_error);
    insta::assert_snapshot!("stateless_without_handle", without);

    let (handed, is_error, structured) = raw
        .call("triage_escalate", json!({"invoice": "inv_2026_0001"}))
        .await;
    assert!(!is_error, "{handed}");
    let handle = structured["handoff"].as_str().expect("a handle").to_owned();
    assert!(handle.starts_with("hd1."), "{handle}");

    let (looked_up, is_error, _) = raw
        .call(
            "finance_billing_lookup",
            json!({"invoice": "inv_1", "handoff": handle}),
        )
        .await;
    assert!(!is_error, "{looked_up}");
    let got: serde_json::Value = serde_json::from_str(&looked_up).expect("JSON");
    assert_eq!(got["carry"], json!({"invoice": "inv_2026_0001"}));

    let mut forged = handle.clone();
    forged.push('x');
    let (refused, is_error, _) = raw
        .call(
            "finance_billing_lookup",
            json!({"invoice": "inv_1", "handoff": forged}),
        )
        .await;
    assert!(is_error);
    insta::assert_snapshot!("stateless_forged_handle", refused);
}
