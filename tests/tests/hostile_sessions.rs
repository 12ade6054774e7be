//! Sessions by what rmcp does, not by the version header: a request rmcp routes into the
//! session `mcp-session-id` names must be the session owner's, whatever
//! `MCP-Protocol-Version` it sends.
//!
//! The reproduction this guards: rmcp 3.11 sends every `initialize`, whatever version it
//! names, into the session the header names. The door skipped the session check for a
//! request whose header said 2026-07-28 ("that revision has no sessions"), so Bob — with his
//! own token, or from another address without one — re-initialized Alice's session with a
//! 2026-07-28 `initialize`: `200`, and Alice's session then held Bob's client info and
//! capabilities (her `tools/list` came back in 2026-07-28 shapes, her refund no longer asked
//! its question).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use fusion_runtime::auth::AuthMode;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_tests::raw_http::{self, RawResponse};
use serde_json::{Value, json};

const SECRET: &str = "sessions-secret-of-at-least-32-bytes-hs256";
const ISSUER: &str = "https://auth.example.com";
const RESOURCE: &str = "http://127.0.0.1/mcp";

/// Who sends: a token's subject (with auth), and the loopback address it sends from.
#[derive(Clone, Copy)]
struct Who {
    sub: &'static str,
    from: Ipv4Addr,
}

const ALICE: Who = Who {
    sub: "alice",
    from: Ipv4Addr::new(127, 0, 0, 1),
};
const BOB: Who = Who {
    sub: "bob",
    from: Ipv4Addr::new(127, 0, 0, 2),
};

async fn serve(auth: bool) -> HttpServer {
    let server = examples::billing::builder()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut options = HttpOptions::default();
    if auth {
        options = options.auth(fusion_tests::services::hs256_auth(
            SECRET,
            RESOURCE,
            ISSUER,
            AuthMode::Required,
        ));
    }
    spawn_http(server, SocketAddr::from(([127, 0, 0, 1], 0)), options)
        .await
        .unwrap_or_else(|e| panic!("spawn: {e}"))
}

async fn post(
    addr: SocketAddr,
    who: Who,
    auth: bool,
    extra: &[(&str, &str)],
    body: &Value,
) -> RawResponse {
    let bearer = format!(
        "Bearer {}",
        fusion_tests::services::hs256_token(SECRET, RESOURCE, ISSUER, who.sub)
    );
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    if auth {
        headers.push(("authorization", &bearer));
    }
    headers.extend_from_slice(extra);
    raw_http::request_from(
        Some(IpAddr::V4(who.from)),
        addr,
        "POST",
        "/mcp",
        &headers,
        &body.to_string(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

fn initialize(version: &str, capabilities: Value, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities,
        "clientInfo": {"name": name, "version": "1"}}})
}

/// Alice's 2025-11-25 session, declaring elicitation.
async fn alice_session(addr: SocketAddr, auth: bool) -> String {
    let init = initialize("2025-11-25", json!({"elicitation": {}}), "alice");
    let r = post(addr, ALICE, auth, &[], &init).await;
    let id = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session: {r:?}"))
        .to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let with = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let r = post(addr, ALICE, auth, &with, &note).await;
    assert_eq!(r.status, 202, "{r:?}");
    id
}

/// Alice's `tools/list` in her session: a 2025 result has no `resultType`.
async fn alice_lists(addr: SocketAddr, auth: bool, session: &str) -> Value {
    let with = [
        ("mcp-session-id", session),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let m = post(addr, ALICE, auth, &with, &list).await.message();
    assert!(m["result"]["tools"].is_array(), "{m}");
    m
}

async fn bob_cannot_reinitialize(auth: bool) {
    let server = serve(auth).await;
    let addr = server.local_addr;
    let session = alice_session(addr, auth).await;
    let before = alice_lists(addr, auth, &session).await;
    assert!(before["result"].get("resultType").is_none(), "{before}");

    for version in ["2026-07-28", "2025-11-25", "2025-06-18"] {
        let init = initialize(version, json!({}), "bob");
        let with = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", version),
        ];
        let r = post(addr, BOB, auth, &with, &init).await;
        assert_eq!(
            r.status, 404,
            "Bob's {version} initialize of Alice's session (auth: {auth}): {r:?}"
        );
        assert_eq!(
            r.message()["error"]["message"],
            "Not Found: Session not found",
            "{r:?}"
        );
    }

    let after = alice_lists(addr, auth, &session).await;
    assert_eq!(after, before, "Alice's session changed");
    // Alice herself may still send a 2026-07-28 request naming her session: it is hers.
    let init = initialize("2026-07-28", json!({"elicitation": {}}), "alice");
    let with = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2026-07-28"),
    ];
    let r = post(addr, ALICE, auth, &with, &init).await;
    assert_ne!(r.status, 404, "Alice's own session: {r:?}");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_address_cannot_reinitialize_a_session_with_a_2026_header() {
    bob_cannot_reinitialize(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_principal_cannot_reinitialize_a_session_with_a_2026_header() {
    bob_cannot_reinitialize(true).await;
}

/// A 2026-07-28 request that rmcp serves without a session (anything but `initialize`) goes
/// on whatever id it names: the id is ignored there, not honoured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_request_that_is_not_initialize_ignores_a_foreign_session_id() {
    let server = serve(true).await;
    let addr = server.local_addr;
    let session = alice_session(addr, true).await;
    let mut params = json!({});
    params["_meta"] = fusion_tests::tasks::meta(false);
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": params});
    let with = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/list"),
    ];
    let r = post(addr, BOB, true, &with, &list).await;
    let m = r.message();
    assert_eq!(m["result"]["resultType"], "complete", "{r:?}");
    assert!(r.header("mcp-session-id").is_none(), "{r:?}");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
