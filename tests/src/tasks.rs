//! MCP tasks (`io.modelcontextprotocol/tasks`) over raw HTTP, as a 2026-07-28 client speaks
//! them: a `tools/call` that declares the extension, `tasks/get` polled until the task ends,
//! `tasks/cancel`; every request with its `Mcp-Method` and `Mcp-Name` headers and a bearer
//! token.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::raw_http;

/// A 2026-07-28 request's `_meta`, the tasks extension declared when `tasks`.
pub fn meta(tasks: bool) -> Value {
    let extensions = if tasks {
        json!({"io.modelcontextprotocol/tasks": {}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    })
}

/// POSTs `method` with `params` (and [`meta`]) to `addr` with the bearer `token`; the
/// JSON-RPC message answered. `Mcp-Name` is the tool's name or the task's id.
pub async fn rpc(
    addr: SocketAddr,
    token: &str,
    method: &str,
    mut params: Value,
    tasks: bool,
) -> Value {
    params["_meta"] = meta(tasks);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let name = params["name"]
        .as_str()
        .or(params["taskId"].as_str())
        .unwrap_or_default()
        .to_owned();
    let bearer = format!("Bearer {token}");
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
        ("authorization", bearer.as_str()),
    ];
    if !name.is_empty() {
        headers.push(("mcp-name", &name));
    }
    raw_http::request(addr, "POST", "/mcp", &headers, &body.to_string())
        .await
        .unwrap_or_else(|e| panic!("POST {method}: {e}"))
        .message()
}

/// A `tools/call` of `tool`, declaring the tasks extension when `tasks`.
pub async fn call(
    addr: SocketAddr,
    token: &str,
    tool: &str,
    arguments: Value,
    tasks: bool,
) -> Value {
    let params = json!({"name": tool, "arguments": arguments});
    rpc(addr, token, "tools/call", params, tasks).await
}

/// Starts `tool` as a task: its id (the answer must be `resultType: "task"`, `working`).
pub async fn start(addr: SocketAddr, token: &str, tool: &str, arguments: Value) -> String {
    let m = call(addr, token, tool, arguments, true).await;
    assert_eq!(m["result"]["resultType"], "task", "{m}");
    assert_eq!(m["result"]["status"], "working", "{m}");
    m["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no taskId: {m}"))
        .to_owned()
}

/// `tasks/get` of `id`: the message answered.
pub async fn get(addr: SocketAddr, token: &str, id: &str) -> Value {
    rpc(addr, token, "tasks/get", json!({"taskId": id}), true).await
}

/// `tasks/cancel` of `id`: the message answered.
pub async fn cancel(addr: SocketAddr, token: &str, id: &str) -> Value {
    rpc(addr, token, "tasks/cancel", json!({"taskId": id}), true).await
}

/// Polls task `id` every 100 ms until it ends (at most `limit`; it must stay `working`
/// meanwhile): the last `tasks/get` result.
pub async fn poll(addr: SocketAddr, token: &str, id: &str, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let m = get(addr, token, id).await;
        let status = m["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if ["completed", "failed", "cancelled"].contains(&status.as_str()) {
            return m["result"].clone();
        }
        assert_eq!(status, "working", "{m}");
        assert!(
            Instant::now() < deadline,
            "still working after {limit:?}: {m}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A 2025-11-25 session on `addr` (its client declares task cancellation), as the bearer
/// `token` when given: its id, and the `initialize` answer. `notifications/initialized` is
/// sent.
pub async fn legacy_session(addr: SocketAddr, token: Option<&str>) -> (String, Value) {
    legacy_session_with(addr, token, json!({"tasks": {"cancel": {}}})).await
}

/// [`legacy_session`] whose client declares `capabilities` at `initialize`.
pub async fn legacy_session_with(
    addr: SocketAddr,
    token: Option<&str>,
    capabilities: Value,
) -> (String, Value) {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    if let Some(b) = &bearer {
        headers.push(("authorization", b));
    }
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "raw", "version": "1"}}});
    let r = raw_http::request(addr, "POST", "/mcp", &headers, &init.to_string())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let id = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session: {r:?}"))
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    legacy_post(addr, token, &id, &initialized).await;
    (id, r.message())
}

/// POSTs `body` on 2025-11-25 session `session`, as the bearer `token` when given: the
/// message answered.
pub async fn legacy_post(
    addr: SocketAddr,
    token: Option<&str>,
    session: &str,
    body: &Value,
) -> Value {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", session),
    ];
    if let Some(b) = &bearer {
        headers.push(("authorization", b));
    }
    raw_http::request(addr, "POST", "/mcp", &headers, &body.to_string())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .message()
}

/// The HS256 secret of the `tasks-server` bin's bearer tokens.
pub const SERVER_SECRET: &str = "tasks-server-secret-of-at-least-32-bytes";
/// The issuer of the `tasks-server` bin's bearer tokens.
pub const SERVER_ISSUER: &str = "https://auth.example.com";
/// The resource (audience) of the `tasks-server` bin's bearer tokens.
pub const SERVER_RESOURCE: &str = "http://127.0.0.1/mcp";

/// A bearer token of `who` for the `tasks-server` bin.
pub fn server_token(who: &str) -> String {
    crate::services::hs256_token(SERVER_SECRET, SERVER_RESOURCE, SERVER_ISSUER, who)
}

/// POSTs `body` as the client at `forwarded` (an address a trusted proxy on loopback names in
/// `X-Forwarded-For`), on 2025-11-25 session `session` when given: the response.
pub async fn forwarded_post(
    addr: SocketAddr,
    forwarded: &str,
    session: Option<&str>,
    body: &Value,
) -> raw_http::RawResponse {
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("x-forwarded-for", forwarded),
    ];
    if let Some(session) = session {
        headers.push(("mcp-protocol-version", "2025-11-25"));
        headers.push(("mcp-session-id", session));
    }
    raw_http::request(addr, "POST", "/mcp", &headers, &body.to_string())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A 2025-11-25 session of the client at `forwarded` (see [`forwarded_post`]): its id.
/// `notifications/initialized` is sent.
pub async fn forwarded_session(addr: SocketAddr, forwarded: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let r = forwarded_post(addr, forwarded, None, &init).await;
    let id = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session: {r:?}"))
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    forwarded_post(addr, forwarded, Some(&id), &initialized).await;
    id
}
