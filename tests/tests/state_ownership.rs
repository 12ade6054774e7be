//! State that outlives a request, held to its owner and used once (issue 29), over real
//! HTTP with real tokens against the billing example, money counted before and after:
//!
//! - 2026-07-28: an answered `requestState` is taken once (a replay is asked afresh and moves
//!   no money); answers count only for the question the state asked; a state is bound to the
//!   principal it was minted for; a state issued in the future is refused; a non-string
//!   state is `-32602`.
//! - 2025 sessions: a session answers only to the client that opened it — another
//!   principal, no token, or (without auth) another address gets exactly the `404` of an
//!   unknown session, for a call, an answer to the server's question, and a `DELETE`.

use std::net::SocketAddr;
use std::time::Duration;

use fusion_runtime::auth::AuthMode;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_tests::mrtr::{accept, first_round, modern_call, paid, post, refund, retry};
use fusion_tests::raw_http::{self, RawResponse, Streaming};
use fusion_tests::services::now;
use rmcp::model::{RequestStateCodec, SealOptions};
use serde_json::{Value, json};

const SECRET: &str = "state-secret-of-at-least-32-bytes-hs256";
const ISSUER: &str = "https://auth.example.com";
const RESOURCE: &str = "http://127.0.0.1/mcp";
const STATE_KEY: &[u8] = b"the request-state key, 32 bytes or more";

fn token(sub: &str) -> String {
    fusion_tests::services::hs256_token(SECRET, RESOURCE, ISSUER, sub)
}

/// The billing example over HTTP, optional bearer auth.
async fn serve(options: HttpOptions) -> HttpServer {
    let server = examples::billing::builder()
        .request_state_key(STATE_KEY)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let auth = fusion_tests::services::hs256_auth(SECRET, RESOURCE, ISSUER, AuthMode::Optional);
    spawn_http(
        server,
        SocketAddr::from(([127, 0, 0, 1], 0)),
        options.auth(auth),
    )
    .await
    .unwrap_or_else(|e| panic!("spawn: {e}"))
}

#[tokio::test]
async fn an_answered_confirmation_moves_money_once_however_often_it_is_replayed() {
    let server = serve(HttpOptions::default().stateless(true)).await;
    let addr = server.local_addr;
    let alice = token("alice");
    let before = paid(addr, Some(&alice)).await;
    let state = first_round(addr, Some(&alice)).await;
    let again = retry(json!(state), accept());
    let done = post(addr, Some(&alice), None, true, &again).await.message();
    assert_eq!(
        done["result"]["structuredContent"]["amount_cents"], 500,
        "{done}"
    );
    assert_eq!(paid(addr, Some(&alice)).await, before - 500);
    // The same retry, three more times (a client retrying after a timeout, a proxy
    // re-sending): each is asked afresh, none moves money.
    for _ in 0..3 {
        let replay = post(addr, Some(&alice), None, true, &again).await.message();
        assert_eq!(replay["result"]["resultType"], "input_required", "{replay}");
        assert_ne!(
            replay["result"]["requestState"],
            json!(state),
            "a new state"
        );
    }
    assert_eq!(paid(addr, Some(&alice)).await, before - 500, "one refund");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn answers_count_only_for_the_question_asked_of_the_principal_asked_and_never_early() {
    let server = serve(HttpOptions::default().stateless(true)).await;
    let addr = server.local_addr;
    let (alice, bob) = (token("alice"), token("bob"));
    let before = paid(addr, Some(&alice)).await;

    // An answer to a question never asked: a first call carrying `inputResponses`.
    let mut early = modern_call(3, "billing_refund", refund());
    early["params"]["inputResponses"] = accept();
    let m = post(addr, Some(&alice), None, true, &early).await.message();
    assert_eq!(
        m["result"]["resultType"], "input_required",
        "the form is shown: {m}"
    );

    // Alice's state, presented by bob, or with no token: refused.
    let state = first_round(addr, Some(&alice)).await;
    for who in [Some(bob.as_str()), None] {
        let m = post(addr, who, None, true, &retry(json!(state), accept()))
            .await
            .message();
        assert_eq!(m["error"]["code"], -32602, "{m}");
    }
    // An answer under a key the state did not ask: not taken, the form comes back.
    let wrong_key = json!({"e5": accept()["e0"].clone()});
    let m = post(
        addr,
        Some(&alice),
        None,
        true,
        &retry(json!(state), wrong_key),
    )
    .await
    .message();
    assert_eq!(m["result"]["resultType"], "input_required", "{m}");

    // A state issued a minute in the future (re-sealed with the server's key, by rmcp's
    // codec as the server seals it): refused.
    let codec = RequestStateCodec::try_new(STATE_KEY).unwrap_or_else(|e| panic!("{e}"));
    let mut inner: Value = codec.open_json(&state).unwrap_or_else(|e| panic!("{e}"));
    inner["iat"] = json!(now() + 60);
    let ahead = codec
        .seal_json_with(&inner, &SealOptions::new().ttl(Duration::from_secs(600)))
        .unwrap_or_else(|e| panic!("{e}"));
    // The same state re-sealed unchanged opens (an answer to a key it did not ask: the form
    // comes back, nothing runs): only the issue time refuses the one above.
    let same: Value = codec.open_json(&state).unwrap_or_else(|e| panic!("{e}"));
    let resealed = codec
        .seal_json_with(&same, &SealOptions::new().ttl(Duration::from_secs(600)))
        .unwrap_or_else(|e| panic!("{e}"));
    let m = post(
        addr,
        Some(&alice),
        None,
        true,
        &retry(json!(resealed), json!({"e5": accept()["e0"].clone()})),
    )
    .await
    .message();
    assert_eq!(m["result"]["resultType"], "input_required", "{m}");
    let m = post(
        addr,
        Some(&alice),
        None,
        true,
        &retry(json!(ahead), accept()),
    )
    .await
    .message();
    assert_eq!(m["error"]["code"], -32602, "{m}");

    // Not a string: invalid params, not "method not found".
    let r = post(
        addr,
        Some(&alice),
        None,
        true,
        &retry(json!(12345), accept()),
    )
    .await;
    assert_eq!(r.message()["error"]["code"], -32602, "{r:?}");
    let r = post(
        addr,
        Some(&alice),
        None,
        true,
        &retry(json!(state), json!([1])),
    )
    .await;
    assert_eq!(r.message()["error"]["code"], -32602, "{r:?}");

    assert_eq!(paid(addr, Some(&alice)).await, before, "no money moved");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// A 2025 session: `initialize` then `notifications/initialized`; its id.
async fn open_session(addr: SocketAddr, token: Option<&str>, xff: Option<&str>) -> String {
    let init = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                   "clientInfo": {"name": "raw", "version": "1"}},
    });
    let r = send(addr, "POST", token, None, xff, &init.to_string()).await;
    let session = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session: {r:?}"))
        .to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = send(addr, "POST", token, Some(&session), xff, &note.to_string()).await;
    assert_eq!(r.status, 202, "{r:?}");
    session
}

async fn send(
    addr: SocketAddr,
    method: &str,
    token: Option<&str>,
    session: Option<&str>,
    xff: Option<&str>,
    body: &str,
) -> RawResponse {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    if let Some(b) = &bearer {
        headers.push(("authorization", b));
    }
    if let Some(s) = session {
        headers.push(("mcp-session-id", s));
    }
    if let Some(x) = xff {
        headers.push(("x-forwarded-for", x));
    }
    raw_http::request(addr, method, "/mcp", &headers, body)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"))
}

#[tokio::test]
async fn a_session_answers_only_to_its_owner() {
    let server = serve(HttpOptions::default()).await;
    let addr = server.local_addr;
    let (alice, bob) = (token("alice"), token("bob"));
    let before = paid(addr, Some(&alice)).await;
    let session = open_session(addr, Some(&alice), None).await;
    let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}).to_string();
    let unknown = send(addr, "POST", Some(&bob), Some("0f0f-unknown"), None, &ping).await;
    assert_eq!(unknown.status, 404, "{unknown:?}");
    let unknown_delete = send(addr, "DELETE", Some(&bob), Some("0f0f-unknown"), None, "").await;
    assert_eq!(unknown_delete.status, 404, "{unknown_delete:?}");

    // Alice's refund waits for her answer.
    let call = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "billing_refund", "arguments": refund()},
    });
    let bearer = format!("Bearer {alice}");
    let headers = [
        ("mcp-protocol-version", "2025-11-25"),
        ("authorization", bearer.as_str()),
        ("mcp-session-id", session.as_str()),
    ];
    let mut open = Streaming::open(addr, "POST", &headers, Some(&call)).await;
    open.until("elicitation/create").await;
    let asked = open.messages().remove(0);
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"].clone(),
        "result": {"action": "accept", "content": {"invoice_id": "inv_2026_0002", "reason": "fraud"}}});

    // Bob, or nobody, on alice's session: the unknown session's answer, byte for byte.
    for (who, body) in [
        (Some(bob.as_str()), answer.to_string()),
        (None, answer.to_string()),
        (Some(bob.as_str()), ping.clone()),
    ] {
        let r = send(addr, "POST", who, Some(&session), None, &body).await;
        let unknown = send(addr, "POST", who, Some("0f0f-unknown"), None, &body).await;
        assert_eq!((r.status, &r.body), (404, &unknown.body), "{r:?}");
    }
    let r = send(addr, "DELETE", Some(&bob), Some(&session), None, "").await;
    assert_eq!((r.status, &r.body), (404, &unknown_delete.body), "{r:?}");

    // Alice's session is whole: she declines, and no money moved.
    let r = send(
        addr,
        "POST",
        Some(&alice),
        Some(&session),
        None,
        &json!({
        "jsonrpc": "2.0", "id": asked["id"].clone(), "result": {"action": "decline"}})
        .to_string(),
    )
    .await;
    assert_eq!(r.status, 202, "{r:?}");
    open.until("REFUND_NOT_CONFIRMED").await;
    let result = open.messages().pop().unwrap_or_default();
    assert!(
        result.to_string().contains("REFUND_NOT_CONFIRMED"),
        "{result}"
    );
    assert_eq!(paid(addr, Some(&alice)).await, before);
    let r = send(addr, "DELETE", Some(&alice), Some(&session), None, "").await;
    assert_eq!(r.status, 200, "{r:?}");
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn without_auth_a_session_is_its_addresss() {
    let options =
        HttpOptions::default().trust_proxy("127.0.0.1".parse().unwrap_or_else(|e| panic!("{e}")));
    let server = serve(options).await;
    let addr = server.local_addr;
    let session = open_session(addr, None, Some("203.0.113.1")).await;
    let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}).to_string();
    for (xff, method, body, status) in [
        ("203.0.113.1", "POST", ping.as_str(), 200),
        ("203.0.113.2", "POST", &ping, 404),
        ("203.0.113.2", "DELETE", "", 404),
        ("203.0.113.1", "POST", &ping, 200),
    ] {
        let r = send(addr, method, None, Some(&session), Some(xff), body).await;
        assert_eq!(r.status, status, "{xff} {method}: {r:?}");
    }
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
