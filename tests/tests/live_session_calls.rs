//! A plain 2025 `tools/call` in a live session — its client declared neither `elicitation` nor
//! `sampling` — is answered without rmcp's session worker, on 127.0.0.1:
//! - its answer is the message rmcp's worker answers for the same call (sent with an empty
//!   `_meta`, which keeps it on rmcp's path), in an SSE stream as the worker's, without the
//!   worker's event ids (nothing here to resume) — at the log level the session set;
//! - a client that may be asked something keeps every call on rmcp's path; any other's first
//!   call, straight after `initialize`, skips it;
//! - a closed session's call gets `404` at once; a busy session is never closed as idle, and
//!   an idle one is, as before;
//! - a call answered so is cancelled by its session's `notifications/cancelled`, and by the
//!   session's `DELETE`;
//! - a live session answers only to its owner: another principal's, or no token's, plain
//!   call on it gets the unknown session's `404` and moves no money (the billing example, real
//!   tokens, the money counted before and after).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use fusion_runtime::Server;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_tests::echo::{
    AskAction, DROPPED, SayAction, WAITING, WaitAction, cancelled_in_all, events, open_call, within,
};
use fusion_tests::raw_http::{RawResponse, request};
use serde_json::{Value, json};

async fn start(idle: Duration) -> HttpServer {
    let server = Server::builder()
        .name("live")
        .action::<SayAction>()
        .action::<AskAction>()
        .action::<WaitAction>()
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"));
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
    spawn_http(
        server,
        addr,
        HttpOptions::default().session_idle_timeout(idle),
    )
    .await
    .unwrap_or_else(|e| panic!("bind: {e}"))
}

const VERSION: &str = "2025-06-18";

async fn post(addr: SocketAddr, session: Option<&str>, body: &str) -> RawResponse {
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", VERSION),
    ];
    if let Some(session) = session {
        headers.push(("mcp-session-id", session));
    }
    request(addr, "POST", "/mcp", &headers, body)
        .await
        .unwrap_or_else(|e| panic!("{body}: {e}"))
}

/// A session of a client declaring `capabilities`, initialized.
async fn session(addr: SocketAddr, capabilities: Value) -> String {
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": capabilities,
        "clientInfo": { "name": "live", "version": "1" } } });
    let answer = post(addr, None, &init.to_string()).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let id = answer
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session: {answer:?}"))
        .to_owned();
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let answer = post(addr, Some(&id), &initialized.to_string()).await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    id
}

fn call(id: Value, params: &Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params })
}

/// The call `params` as a plain body, and with an empty `_meta` (rmcp's).
fn bodies(id: Value, params: &Value) -> (String, String) {
    let plain = call(id, params);
    let mut by_rmcp = plain.clone();
    by_rmcp["params"]["_meta"] = json!({});
    (plain.to_string(), by_rmcp.to_string())
}

/// Whether a session's answer came without rmcp's worker: an SSE stream without the
/// worker's event ids (its priming event, `id: 0/…`, and one per message).
fn skipped_worker(r: &RawResponse) -> bool {
    r.header("content-type") == Some("text/event-stream")
        && !r.body.lines().any(|l| l.starts_with("id:"))
}

/// The messages of a response: its JSON body, or its SSE events.
fn messages(r: &RawResponse) -> Vec<Value> {
    match r.header("content-type") {
        Some("application/json") => vec![r.message()],
        _ => events(r),
    }
}

fn text_of(answer: &Value) -> Value {
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    serde_json::from_str(text).unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_live_sessions_plain_calls_are_answered_as_rmcps_worker_answers_them() {
    let http = start(Duration::from_secs(300)).await;
    let addr = http.local_addr;
    let id = session(addr, json!({})).await;
    let calls = [
        json!({ "name": "echo_say", "arguments": { "text": "hello" } }),
        json!({ "name": "echo_say", "arguments": { "text": "far too many words for it" } }),
        json!({ "name": "echo_say", "arguments": { "text": 5, "extra": [1, { "b": null }] } }),
        json!({ "name": "echo_say" }),
        json!({ "name": "echo_say", "arguments": { "text": "é\u{1F600}\"\\" } }),
        json!({ "name": "echo_ask", "arguments": { "question": "Go on?" } }),
    ];
    for (n, params) in calls.iter().enumerate() {
        for rid in [json!(n), json!(format!("call-{n}"))] {
            let (plain, by_rmcp) = bodies(rid, params);
            let ours = post(addr, Some(&id), &plain).await;
            let rmcps = post(addr, Some(&id), &by_rmcp).await;
            assert_eq!(ours.status, 200, "{plain}: {}", ours.body);
            assert!(skipped_worker(&ours), "{plain}: {}", ours.body);
            assert!(!skipped_worker(&rmcps), "{by_rmcp}: {}", rmcps.body);
            assert_eq!(messages(&ours), messages(&rmcps), "{plain}");
        }
    }
    // The answers are the tool's: the words, the envelope, the elicitation refused as the
    // worker's path refuses it for this client.
    let (plain, _) = bodies(json!(1), &calls[0]);
    let answer = post(addr, Some(&id), &plain).await.message();
    assert_eq!(
        text_of(&answer),
        json!({ "said": "hello", "logged": false })
    );
    let (plain, _) = bodies(json!(2), &calls[1]);
    let answer = post(addr, Some(&id), &plain).await.message();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let (plain, _) = bodies(json!(3), &calls[5]);
    let answer = post(addr, Some(&id), &plain).await.message();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("did not declare the elicitation capability"),
        "{text}"
    );
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}

#[tokio::test]
async fn a_live_sessions_call_logs_at_the_level_the_session_set() {
    let http = start(Duration::from_secs(300)).await;
    let addr = http.local_addr;
    let id = session(addr, json!({})).await;
    let loud = json!({ "name": "echo_say", "arguments": { "text": "hi", "loud": true } });
    let set = |level: &str| {
        json!({ "jsonrpc": "2.0", "id": 50, "method": "logging/setLevel",
                "params": { "level": level } })
        .to_string()
    };
    for (level, logs) in [("error", false), ("debug", true), ("warning", true)] {
        let answer = post(addr, Some(&id), &set(level)).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        let (plain, by_rmcp) = bodies(json!(9), &loud);
        let ours = post(addr, Some(&id), &plain).await;
        let rmcps = post(addr, Some(&id), &by_rmcp).await;
        let (ours_said, rmcps_said) = (messages(&ours), messages(&rmcps));
        assert_eq!(ours_said, rmcps_said, "{level}");
        assert!(skipped_worker(&ours), "{level}: {}", ours.body);
        match logs {
            true => {
                assert_eq!(ours_said.len(), 2, "{level}: {ours_said:?}");
                assert_eq!(ours_said[0]["method"], "notifications/message");
                assert_eq!(ours_said[0]["params"]["data"], json!({ "said": "hi" }));
                assert_eq!(text_of(&ours_said[1])["logged"], true);
            }
            false => {
                assert_eq!(ours_said.len(), 1, "{level}: {ours_said:?}");
                assert_eq!(text_of(&ours_said[0])["logged"], false, "{level}");
            }
        }
    }
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}

#[tokio::test]
async fn a_client_that_may_be_asked_keeps_its_calls_on_rmcps_path_and_no_other_does() {
    let http = start(Duration::from_secs(300)).await;
    let addr = http.local_addr;
    let params = json!({ "name": "echo_say", "arguments": { "text": "hello" } });
    for capabilities in [
        json!({ "elicitation": {} }),
        json!({ "sampling": {} }),
        json!({ "elicitation": { "form": {} }, "sampling": {}, "roots": {} }),
    ] {
        let id = session(addr, capabilities.clone()).await;
        let answer = post(addr, Some(&id), &call(json!(1), &params).to_string()).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(!skipped_worker(&answer), "{capabilities}: {}", answer.body);
        assert_eq!(text_of(&answer.message())["said"], "hello");
    }
    // A session is listed as its `initialize` is answered: its first call, even before its
    // `notifications/initialized` (rmcp does not wait for it either), skips the worker.
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": { "name": "live", "version": "1" } } });
    let answer = post(addr, None, &init.to_string()).await;
    let id = answer
        .header("mcp-session-id")
        .unwrap_or_default()
        .to_owned();
    let (plain, by_rmcp) = bodies(json!(1), &params);
    let ours = post(addr, Some(&id), &plain).await;
    assert!(skipped_worker(&ours), "{}", ours.body);
    assert_eq!(
        messages(&ours),
        messages(&post(addr, Some(&id), &by_rmcp).await)
    );
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}

#[tokio::test]
async fn a_closed_session_is_gone_a_busy_one_stays_and_an_idle_one_expires() {
    let idle = Duration::from_millis(800);
    let http = start(idle).await;
    let addr = http.local_addr;
    let params = json!({ "name": "echo_say", "arguments": { "text": "hello" } });
    let body = call(json!(1), &params).to_string();

    // Closed: its next call is the unknown session's 404 at once.
    let id = session(addr, json!({})).await;
    let answer = post(addr, Some(&id), &body).await;
    assert!(skipped_worker(&answer), "{}", answer.body);
    let headers = [("mcp-session-id", id.as_str())];
    let closed = request(addr, "DELETE", "/mcp", &headers, "")
        .await
        .unwrap_or_else(|e| panic!("delete: {e}"));
    assert_eq!(closed.status, 200, "{}", closed.body);
    assert_eq!(post(addr, Some(&id), &body).await.status, 404);

    // Busy for three idle timeouts with calls every 100 ms, most of them answered without
    // rmcp's worker: it stays open.
    let id = session(addr, json!({})).await;
    let busy = Instant::now();
    let (mut fast, mut total) = (0, 0);
    while busy.elapsed() < idle * 3 {
        let answer = post(addr, Some(&id), &body).await;
        assert_eq!(
            answer.status,
            200,
            "after {:?}: {}",
            busy.elapsed(),
            answer.body
        );
        assert_eq!(text_of(&answer.message())["said"], "hello");
        total += 1;
        fast += usize::from(skipped_worker(&answer));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        fast > total / 2 && fast < total,
        "{fast} of {total} calls skipped the worker"
    );

    // Idle past its timeout: gone, as before.
    tokio::time::sleep(idle + Duration::from_millis(400)).await;
    let answer = post(addr, Some(&id), &body).await;
    assert_ne!(answer.status, 200, "{}", answer.body);
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}

/// Both ways share the counters, so they run one after the other here.
#[tokio::test]
async fn a_live_sessions_call_is_cancelled_by_its_session() {
    let http = start(Duration::from_secs(300)).await;
    let addr = http.local_addr;
    let id = session(addr, json!({})).await;
    let before = DROPPED.load(Ordering::SeqCst);

    // `notifications/cancelled` in the session.
    let _stream = open_call(addr, Some(&id), 2).await;
    within("the call starts", || WAITING.load(Ordering::SeqCst) == 1).await;
    // Another session's cancellation of the same request id reaches nothing.
    let other = session(addr, json!({})).await;
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": { "requestId": 2, "reason": "the user gave up" } })
    .to_string();
    assert_eq!(post(addr, Some(&other), &cancel).await.status, 202);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        WAITING.load(Ordering::SeqCst),
        1,
        "another session's cancel"
    );
    assert_eq!(post(addr, Some(&id), &cancel).await.status, 202);
    cancelled_in_all(before + 1).await;

    // The session's `DELETE`.
    let _stream = open_call(addr, Some(&id), 3).await;
    within("the call starts", || WAITING.load(Ordering::SeqCst) == 1).await;
    let headers = [("mcp-session-id", id.as_str())];
    let closed = request(addr, "DELETE", "/mcp", &headers, "")
        .await
        .unwrap_or_else(|e| panic!("delete: {e}"));
    assert_eq!(closed.status, 200, "{}", closed.body);
    cancelled_in_all(before + 2).await;
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}

mod owner {
    use fusion_runtime::auth::AuthMode;
    use fusion_tests::hs256::Issuer;
    use fusion_tests::mrtr::{modern_call, post as modern_post};

    use super::*;

    const ISSUER: Issuer = Issuer {
        secret: "live-secret-of-at-least-32-bytes-hs256",
        issuer: "https://auth.example.com",
        resource: "http://127.0.0.1/mcp",
    };

    /// What inv_2026_0003 (open) has been paid, in cents, as the server says.
    async fn paid(addr: SocketAddr, token: Option<&str>) -> u64 {
        let call = modern_call(90, "billing_get_invoice", json!({"id": "inv_2026_0003"}));
        let m = modern_post(addr, token, None, true, &call).await.message();
        m["result"]["structuredContent"]["paid_cents"]
            .as_u64()
            .unwrap_or_else(|| panic!("no paid_cents: {m}"))
    }

    async fn billing() -> HttpServer {
        let server = examples::billing::builder()
            .request_state_key(b"the request-state key, 32 bytes or more")
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let auth = ISSUER.auth(AuthMode::Optional);
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
        spawn_http(server, addr, HttpOptions::default().auth(auth))
            .await
            .unwrap_or_else(|e| panic!("spawn: {e}"))
    }

    /// A 2025-11-25 POST of `body` (with alice's or bob's token, in `session`); with no body,
    /// the session's `DELETE`.
    async fn send(
        addr: SocketAddr,
        token: Option<&str>,
        session: Option<&str>,
        body: Option<&Value>,
    ) -> RawResponse {
        if let Some(body) = body {
            return modern_post(addr, token, session, false, body).await;
        }
        let bearer = format!("Bearer {}", token.unwrap_or_default());
        let headers = [
            ("authorization", bearer.as_str()),
            ("mcp-session-id", session.unwrap_or_default()),
        ];
        request(addr, "DELETE", "/mcp", &headers, "")
            .await
            .unwrap_or_else(|e| panic!("DELETE: {e}"))
    }

    #[tokio::test]
    async fn a_live_session_answers_only_to_its_owner_and_moves_money_only_for_them() {
        let server = billing().await;
        let addr = server.local_addr;
        let (alice, bob) = (ISSUER.token("alice"), ISSUER.token("bob"));
        let before = paid(addr, Some(&alice)).await;
        let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "live", "version": "1" } } });
        let r = send(addr, Some(&alice), None, Some(&init)).await;
        let session = r
            .header("mcp-session-id")
            .unwrap_or_else(|| panic!("no session: {r:?}"))
            .to_owned();
        let charge = |id: u32| {
            call(
                json!(id),
                &json!({ "name": "billing_charge",
                         "arguments": { "invoice_id": "inv_2026_0003", "amount_cents": 100 } }),
            )
        };

        // Bob, or nobody, on alice's live session: the unknown session's answer, byte for
        // byte, and no money moved.
        for who in [Some(bob.as_str()), None] {
            let r = send(addr, who, Some(&session), Some(&charge(1))).await;
            let unknown = send(addr, who, Some("0f0f-unknown"), Some(&charge(1))).await;
            assert_eq!((r.status, &r.body), (404, &unknown.body), "{r:?}");
        }
        assert_eq!(paid(addr, Some(&alice)).await, before, "no money moved");

        // Alice's plain call skips the worker and moves her money once.
        let r = send(addr, Some(&alice), Some(&session), Some(&charge(2))).await;
        assert_eq!(r.status, 200, "{r:?}");
        assert!(skipped_worker(&r), "{}", r.body);
        assert_eq!(r.message()["result"]["isError"], false, "{}", r.body);
        assert_eq!(
            r.message()["result"]["structuredContent"]["charged"],
            true,
            "{}",
            r.body
        );
        assert_eq!(paid(addr, Some(&alice)).await, before + 100);

        // A refund asks the user: this client cannot be asked, so no money moves.
        let refund = call(
            json!(3),
            &json!({ "name": "billing_refund",
                     "arguments": { "invoice_id": "inv_2026_0003", "amount_cents": 100 } }),
        );
        let r = send(addr, Some(&alice), Some(&session), Some(&refund)).await;
        assert!(skipped_worker(&r), "{}", r.body);
        assert_eq!(r.message()["result"]["isError"], true, "{}", r.body);
        assert_eq!(paid(addr, Some(&alice)).await, before + 100);

        // Closed by alice: gone for her too.
        let r = send(addr, Some(&alice), Some(&session), None).await;
        assert_eq!(r.status, 200, "{r:?}");
        let r = send(addr, Some(&alice), Some(&session), Some(&charge(4))).await;
        assert_eq!(r.status, 404, "{r:?}");
        assert_eq!(paid(addr, Some(&alice)).await, before + 100);
        server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}
