//! The billing example's refund over raw HTTP, as a 2026-07-28 client sends it (MRTR:
//! `input_required`, then a retry with `requestState` and `inputResponses`), and the money
//! it moved, read back from the server.

use std::net::SocketAddr;

use serde_json::{Value, json};

use crate::raw_http::{self, RawResponse};

/// A POST of `body` with the bearer `token`, the 2026-07-28 headers when `modern`, and the
/// session id when given.
pub async fn post(
    addr: SocketAddr,
    token: Option<&str>,
    session: Option<&str>,
    modern: bool,
    body: &Value,
) -> RawResponse {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        (
            "mcp-protocol-version",
            if modern { "2026-07-28" } else { "2025-11-25" },
        ),
    ];
    let method = body["method"].as_str().unwrap_or_default().to_owned();
    let name = body["params"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if modern {
        headers.push(("mcp-method", &method));
        if !name.is_empty() {
            headers.push(("mcp-name", &name));
        }
    }
    if let Some(b) = &bearer {
        headers.push(("authorization", b));
    }
    if let Some(s) = session {
        headers.push(("mcp-session-id", s));
    }
    raw_http::request(addr, "POST", "/mcp", &headers, &body.to_string())
        .await
        .unwrap_or_else(|e| panic!("POST: {e}"))
}

/// A 2026-07-28 `tools/call` of `tool` (its `_meta`: version, elicitation, client info).
pub fn modern_call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": tool, "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            },
        },
    })
}

/// The refund every test makes: 500 cents on inv_2026_0002 (paid in full).
pub fn refund() -> Value {
    json!({"invoice_id": "inv_2026_0002", "amount_cents": 500})
}

/// The answer that confirms [`refund`].
pub fn accept() -> Value {
    json!({"e0": {"action": "accept", "content": {"invoice_id": "inv_2026_0002", "reason": "fraud"}}})
}

/// What inv_2026_0002's payer has paid, in cents, as the server says.
pub async fn paid(addr: SocketAddr, token: Option<&str>) -> u64 {
    let call = modern_call(90, "billing_get_invoice", json!({"id": "inv_2026_0002"}));
    let r = post(addr, token, None, true, &call).await;
    let m = r.message();
    m["result"]["structuredContent"]["paid_cents"]
        .as_u64()
        .unwrap_or_else(|| panic!("no paid_cents: {m}"))
}

/// The first round of a modern refund: its `requestState`.
pub async fn first_round(addr: SocketAddr, token: Option<&str>) -> String {
    let r = post(
        addr,
        token,
        None,
        true,
        &modern_call(1, "billing_refund", refund()),
    )
    .await;
    let m = r.message();
    assert_eq!(m["result"]["resultType"], "input_required", "{m}");
    m["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState: {m}"))
        .to_owned()
}

/// The retry of [`refund`] with `state` and `responses`.
pub fn retry(state: Value, responses: Value) -> Value {
    let mut call = modern_call(2, "billing_refund", refund());
    call["params"]["requestState"] = state;
    call["params"]["inputResponses"] = responses;
    call
}
