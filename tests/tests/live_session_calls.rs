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

#![allow(deprecated)] // MCP logging is deprecated by SEP-2577, still what clients speak.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::{Context, LogLevel, Server, ToolError, ToolInput, tool_action};
use fusion_tests::raw_http::{RawResponse, request};
use serde::Deserialize;
use serde_json::{Value, json};

/// What to say.
#[derive(Deserialize, ToolInput)]
struct Say {
    /// The words, 1 to 20 characters.
    #[fusion(length(min = 1, max = 20))]
    text: String,
    /// Log a warning before answering.
    loud: Option<bool>,
}

/// Says the words back; a loud call logs them first.
#[tool_action(name = "echo.say")]
async fn say(input: Say, cx: Context) -> Result<Value, ToolError> {
    let logged = input.loud == Some(true)
        && cx
            .log(LogLevel::Warning, json!({ "said": input.text }))
            .await;
    Ok(json!({ "said": input.text, "logged": logged }))
}

/// A question for the user.
#[derive(Deserialize, ToolInput)]
struct Ask {
    /// What to ask.
    #[fusion(length(min = 1, max = 50))]
    question: String,
}

/// Asks the user (a client that cannot be asked gets the error that says why).
#[tool_action(name = "echo.ask")]
async fn ask(input: Ask, cx: Context) -> Result<Value, ToolError> {
    let schema = json!({ "type": "object", "properties": { "ok": { "type": "boolean" } } });
    let schema = schema.as_object().cloned().unwrap_or_default();
    let answer = cx.elicit_with_schema(input.question, schema).await?;
    Ok(json!({ "answer": format!("{answer:?}") }))
}

/// Which call to wait in.
#[derive(Deserialize, ToolInput)]
struct Wait {
    /// A tag the test finds the call by.
    #[fusion(range(min = 0, max = 1000))]
    tag: u32,
}

/// Calls of `echo.wait` running now, and ended without finishing (dropped: cancelled).
static WAITING: AtomicUsize = AtomicUsize::new(0);
static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// Counts the call as dropped unless it finished.
struct Running(bool);

impl Drop for Running {
    fn drop(&mut self) {
        WAITING.fetch_sub(1, Ordering::SeqCst);
        if !self.0 {
            DROPPED.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Waits ten seconds, unless cancelled.
#[tool_action(name = "echo.wait")]
async fn wait(input: Wait) -> Result<Value, ToolError> {
    WAITING.fetch_add(1, Ordering::SeqCst);
    let mut running = Running(false);
    tokio::time::sleep(Duration::from_secs(10)).await;
    running.0 = true;
    Ok(json!({ "tag": input.tag }))
}

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

/// The `data:` of each SSE event with data, as JSON, in order.
fn events(r: &RawResponse) -> Vec<Value> {
    r.body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
        .collect()
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

/// Polls `done` every 2 ms for up to 5 s.
async fn within(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{what}: not within 5 s"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// A session's plain `echo.wait` call on a raw connection, left open.
async fn open_call(addr: SocketAddr, session: &str, id: u32) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let body = call(
        json!(id),
        &json!({ "name": "echo_wait", "arguments": { "tag": id } }),
    )
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: {VERSION}\r\n\
         mcp-session-id: {session}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    stream
        .write_all(head.as_bytes())
        .await
        .unwrap_or_else(|e| panic!("write: {e}"));
    stream
}

/// Both ways share the counters, so they run one after the other here.
#[tokio::test]
async fn a_live_sessions_call_is_cancelled_by_its_session() {
    let http = start(Duration::from_secs(300)).await;
    let addr = http.local_addr;
    let id = session(addr, json!({})).await;
    let before = DROPPED.load(Ordering::SeqCst);

    // `notifications/cancelled` in the session.
    let _stream = open_call(addr, &id, 2).await;
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
    within("the call is cancelled", || {
        DROPPED.load(Ordering::SeqCst) == before + 1
    })
    .await;

    // The session's `DELETE`.
    let _stream = open_call(addr, &id, 3).await;
    within("the call starts", || WAITING.load(Ordering::SeqCst) == 1).await;
    let headers = [("mcp-session-id", id.as_str())];
    let closed = request(addr, "DELETE", "/mcp", &headers, "")
        .await
        .unwrap_or_else(|e| panic!("delete: {e}"));
    assert_eq!(closed.status, 200, "{}", closed.body);
    within("the call is cancelled", || {
        DROPPED.load(Ordering::SeqCst) == before + 2
    })
    .await;
    assert_eq!(WAITING.load(Ordering::SeqCst), 0);
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}

mod owner {
    use fusion_runtime::auth::{Auth, AuthMode, JwtVerifier};
    use fusion_tests::mrtr::{modern_call, post as modern_post};
    use fusion_tests::services::{mint, now};
    use jsonwebtoken::{Algorithm, EncodingKey};

    use super::*;

    const SECRET: &str = "live-secret-of-at-least-32-bytes-hs256";
    const ISSUER: &str = "https://auth.example.com";
    const RESOURCE: &str = "http://127.0.0.1/mcp";

    fn token(sub: &str) -> String {
        let key = EncodingKey::from_secret(SECRET.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        mint(
            Algorithm::HS256,
            &key,
            &json!({"sub": sub, "aud": RESOURCE, "iss": ISSUER, "exp": now() + 600}),
        )
    }

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
        let verifier = JwtVerifier::new(RESOURCE)
            .issuer(ISSUER)
            .hs256_secret(SECRET.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        let auth = Auth::new(verifier, RESOURCE)
            .authorization_server(ISSUER)
            .mode(AuthMode::Optional);
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
        spawn_http(server, addr, HttpOptions::default().auth(auth))
            .await
            .unwrap_or_else(|e| panic!("spawn: {e}"))
    }

    async fn send(
        addr: SocketAddr,
        method: &str,
        token: Option<&str>,
        session: Option<&str>,
        body: &str,
    ) -> RawResponse {
        let bearer = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", VERSION),
        ];
        if let Some(b) = &bearer {
            headers.push(("authorization", b));
        }
        if let Some(s) = session {
            headers.push(("mcp-session-id", s));
        }
        request(addr, method, "/mcp", &headers, body)
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"))
    }

    #[tokio::test]
    async fn a_live_session_answers_only_to_its_owner_and_moves_money_only_for_them() {
        let server = billing().await;
        let addr = server.local_addr;
        let (alice, bob) = (token("alice"), token("bob"));
        let before = paid(addr, Some(&alice)).await;
        let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {},
            "clientInfo": { "name": "live", "version": "1" } } });
        let r = send(addr, "POST", Some(&alice), None, &init.to_string()).await;
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
            .to_string()
        };

        // Bob, or nobody, on alice's live session: the unknown session's answer, byte for
        // byte, and no money moved.
        for who in [Some(bob.as_str()), None] {
            let r = send(addr, "POST", who, Some(&session), &charge(1)).await;
            let unknown = send(addr, "POST", who, Some("0f0f-unknown"), &charge(1)).await;
            assert_eq!((r.status, &r.body), (404, &unknown.body), "{r:?}");
        }
        assert_eq!(paid(addr, Some(&alice)).await, before, "no money moved");

        // Alice's plain call skips the worker and moves her money once.
        let r = send(addr, "POST", Some(&alice), Some(&session), &charge(2)).await;
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
        let r = send(
            addr,
            "POST",
            Some(&alice),
            Some(&session),
            &refund.to_string(),
        )
        .await;
        assert!(skipped_worker(&r), "{}", r.body);
        assert_eq!(r.message()["result"]["isError"], true, "{}", r.body);
        assert_eq!(paid(addr, Some(&alice)).await, before + 100);

        // Closed by alice: gone for her too.
        let r = send(addr, "DELETE", Some(&alice), Some(&session), "").await;
        assert_eq!(r.status, 200, "{r:?}");
        let r = send(addr, "POST", Some(&alice), Some(&session), &charge(4)).await;
        assert_eq!(r.status, 404, "{r:?}");
        assert_eq!(paid(addr, Some(&alice)).await, before + 100);
        server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
    }
}
