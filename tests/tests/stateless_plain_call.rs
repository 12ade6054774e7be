//! A plain 2025 `tools/call` on a stateless server is answered without rmcp (the check's read
//! of the body is its only parse). The same call with an empty `_meta` is rmcp's to answer:
//! over a real socket, both answers are the same — status, type and bytes — for valid,
//! invalid, argument-less and unknown-tool calls on both 2025 versions, and for a call whose
//! log message comes before its result (an SSE stream, as rmcp streams it). Such a call runs
//! in a task of its own and is cancelled when its client goes away or cancels it.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use fusion_runtime::Server;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_tests::echo::{
    DROPPED, SayAction, WAITING, WaitAction, cancelled_in_all, events, open_call, within,
};
use fusion_tests::raw_http::{RawResponse, request};
use serde_json::{Value, json};

async fn start() -> HttpServer {
    let server = Server::builder()
        .name("plain")
        .action::<SayAction>()
        .action::<WaitAction>()
        .build()
        .unwrap_or_else(|e| panic!("build: {e}"));
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
    spawn_http(server, addr, HttpOptions::default().stateless(true))
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"))
}

async fn post(addr: SocketAddr, version: &str, body: &str) -> RawResponse {
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", version),
    ];
    request(addr, "POST", "/mcp", &headers, body)
        .await
        .unwrap_or_else(|e| panic!("{body}: {e}"))
}

/// The call `params` as a plain body, and with an empty `_meta` (rmcp's).
fn bodies(id: Value, params: &Value) -> (String, String) {
    let plain = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params });
    let mut by_rmcp = plain.clone();
    by_rmcp["params"]["_meta"] = json!({});
    (plain.to_string(), by_rmcp.to_string())
}

fn what(r: &RawResponse) -> (u16, Option<&str>, &str) {
    (r.status, r.header("content-type"), r.body.as_str())
}

#[tokio::test]
async fn plain_calls_are_answered_as_rmcp_answers_them() {
    let http = start().await;
    let calls = [
        json!({ "name": "echo_say", "arguments": { "text": "hello" } }),
        json!({ "name": "echo_say", "arguments": { "text": "far too many words for it" } }),
        json!({ "name": "echo_say", "arguments": { "text": 5, "extra": [1, { "b": null }] } }),
        json!({ "name": "echo_say" }),
        json!({ "name": "echo_sya", "arguments": { "text": "hello" } }),
        json!({ "name": "echo_say", "arguments": { "text": "é\u{1F600}\"\\" } }),
    ];
    for version in ["2025-06-18", "2025-11-25"] {
        for (n, params) in calls.iter().enumerate() {
            for id in [json!(n), json!(format!("call-{n}"))] {
                let (plain, by_rmcp) = bodies(id, params);
                let ours = post(http.local_addr, version, &plain).await;
                let rmcps = post(http.local_addr, version, &by_rmcp).await;
                assert_eq!(ours.status, 200, "{plain}: {}", ours.body);
                assert_eq!(ours.header("content-type"), Some("application/json"));
                assert_eq!(what(&ours), what(&rmcps), "{version} {plain}");
            }
        }
    }
    // The answers are the tool's: a valid call's words, an invalid one's envelope.
    let (plain, _) = bodies(json!(1), &calls[0]);
    let answer = post(http.local_addr, "2025-06-18", &plain).await.json();
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<Value>(text).ok(),
        Some(json!({ "said": "hello", "logged": false }))
    );
    let (plain, _) = bodies(json!(2), &calls[1]);
    let answer = post(http.local_addr, "2025-06-18", &plain).await.json();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("<validation_error"), "{text}");
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}

/// A call whose arguments `serde_json` refuses is not answered on the plain path: it gets the
/// framework's `Parse error`, as any body `serde_json` refuses, and the server still answers
/// plain calls after it.
#[tokio::test]
async fn a_plain_call_whose_arguments_do_not_parse_is_a_parse_error() {
    let http = start().await;
    let broken = [
        r#"{"text":tru}"#,
        r#"{"text":[1,]}"#,
        r#"{"text":"\x"}"#,
        r#"{"text":01}"#,
        r#"{"text" "hello"}"#,
    ];
    for arguments in broken {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo_say","arguments":{arguments}}}}}"#
        );
        let answer = post(http.local_addr, "2025-06-18", &body).await;
        assert_eq!(answer.status, 400, "{arguments}: {}", answer.body);
        assert_eq!(answer.header("content-type"), Some("application/json"));
        let json = answer.json();
        assert_eq!(json["error"]["code"], -32700, "{arguments}: {json}");
        assert_eq!(json["id"], Value::Null, "{arguments}");
        let message = json["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("Parse error: "), "{message}");
    }
    // The server still answers a plain call.
    let (plain, _) = bodies(
        json!(8),
        &json!({ "name": "echo_say", "arguments": { "text": "hi" } }),
    );
    let answer = post(http.local_addr, "2025-06-18", &plain).await;
    assert_eq!(answer.json()["result"]["isError"], false, "{}", answer.body);
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}

#[tokio::test]
async fn a_call_that_logs_before_its_result_is_streamed_as_rmcp_streams_it() {
    let http = start().await;
    let params = json!({ "name": "echo_say", "arguments": { "text": "hi", "loud": true } });
    let (plain, by_rmcp) = bodies(json!(9), &params);
    let ours = post(http.local_addr, "2025-06-18", &plain).await;
    let rmcps = post(http.local_addr, "2025-06-18", &by_rmcp).await;
    assert_eq!(ours.status, 200, "{}", ours.body);
    assert_eq!(ours.header("content-type"), Some("text/event-stream"));
    assert_eq!(
        (ours.header("content-type"), ours.header("cache-control")),
        (rmcps.header("content-type"), rmcps.header("cache-control"))
    );
    let (ours, rmcps) = (events(&ours), events(&rmcps));
    assert_eq!(ours, rmcps);
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert_eq!(ours[0]["method"], "notifications/message");
    assert_eq!(ours[0]["params"]["level"], "warning");
    assert_eq!(ours[0]["params"]["data"], json!({ "said": "hi" }));
    assert_eq!(ours[1]["id"], 9);
    let text = ours[1]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<Value>(text).ok(),
        Some(json!({ "said": "hi", "logged": true }))
    );
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}

/// A plain call runs in a task of its own, as rmcp runs a call: a client that goes away, or
/// sends `notifications/cancelled` for it from another request, cancels it. Both tests share
/// the counters, so they run one after the other here.
#[tokio::test]
async fn a_plain_call_is_cancelled_when_its_client_goes_or_says_so() {
    let http = start().await;
    let addr = http.local_addr;

    // The socket closes mid-call.
    let before = DROPPED.load(Ordering::SeqCst);
    let stream = open_call(addr, None, 1).await;
    within("the call starts", || WAITING.load(Ordering::SeqCst) == 1).await;
    drop(stream);
    let took = within("the call is cancelled", || {
        DROPPED.load(Ordering::SeqCst) == before + 1
    })
    .await;
    assert!(
        took < Duration::from_secs(1),
        "cancelled {took:?} after the socket closed"
    );
    assert_eq!(WAITING.load(Ordering::SeqCst), 0);

    // The same client cancels it from another request.
    let _stream = open_call(addr, None, 2).await;
    within("the call starts", || WAITING.load(Ordering::SeqCst) == 1).await;
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": { "requestId": 2, "reason": "the user gave up" } });
    let answer = post(addr, "2025-06-18", &cancel.to_string()).await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    cancelled_in_all(before + 2).await;
    http.shutdown()
        .await
        .unwrap_or_else(|e| panic!("shutdown: {e}"));
}
