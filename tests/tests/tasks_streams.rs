//! 2025-11-25 `tasks/result` streams a crowd cannot hold (issue 56), over real HTTP with a
//! real trusted-proxy hop (each client named by `X-Forwarded-For`):
//!
//! - 2,000 streams attempted from two addresses on one long task: each address holds at most
//!   its per-client cap open, every other attempt is answered at once with a JSON-RPC error
//!   that says what to do, and a third client is served (a task, its stream, a call).
//!   (Before the cap, 512 streams took every connection and the third got `503`.)
//! - A stream's place is given back when its client goes: the same address opens as many
//!   again once the first ones closed.
//! - A stream silent past the endpoint's SSE keep-alive interval receives an SSE comment,
//!   so a proxy's idle timeout does not cut it: at the interval rmcp keeps its own streams
//!   alive at on the same endpoint (a differential test against the session's GET stream).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::store::DEFAULT_TASKS_PER_OWNER;
use fusion_tests::fixtures::HangAction;
use fusion_tests::raw_http::Streaming;
use fusion_tests::tasks;
use serde_json::{Value, json};

/// The billing example and `hang`, with sessions, no auth, loopback as a trusted proxy.
async fn serve() -> HttpServer {
    let server = examples::billing::builder()
        .action::<HangAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let options = HttpOptions::default()
        .stateless(false)
        .trust_proxy(IpAddr::from([127, 0, 0, 1]));
    spawn_http(server, SocketAddr::from(([127, 0, 0, 1], 0)), options)
        .await
        .unwrap_or_else(|e| panic!("spawn: {e}"))
}

/// A session of the client at `forwarded` and an hour-long `hang` task of it: the session
/// and the task's id.
async fn hanging(addr: SocketAddr, forwarded: &str) -> (String, String) {
    let session = tasks::forwarded_session(addr, forwarded).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "hang", "arguments": {}, "task": {"ttl": 3_600_000}}});
    let created = tasks::forwarded_post(addr, forwarded, Some(&session), &call)
        .await
        .message();
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned();
    (session, id)
}

/// What a `tasks/result` request was answered.
enum Opened {
    /// An SSE stream, held open while this lives.
    Stream(Streaming),
    /// A JSON answer (a refusal: its JSON-RPC message).
    Refused(Value),
    /// Anything else: the status line and head.
    Other(String),
}

/// Sends `tasks/result` of `task` as the client at `forwarded` and reads the response's head.
async fn open(addr: SocketAddr, forwarded: &str, session: &str, task: &str) -> Opened {
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/result",
        "params": {"taskId": task}});
    let headers = [
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", session),
        ("x-forwarded-for", forwarded),
    ];
    let mut stream = Streaming::open(addr, "POST", &headers, Some(&body)).await;
    let so_far = stream.until("\r\n\r\n").await;
    let head_end = so_far.find("\r\n\r\n").map_or(0, |at| at + 4);
    let head = so_far[..head_end].to_owned();
    let status = head.lines().next().unwrap_or_default().to_owned();
    if status.contains(" 200 ") && head.contains("text/event-stream") {
        return Opened::Stream(stream);
    }
    if status.contains(" 200 ") && head.contains("application/json") {
        let length: usize = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().to_owned())
            })
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no content-length: {head}"));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while stream.text.len() < head.len() + length {
            if stream.read_until(deadline).await.is_none() {
                panic!("no whole body: {:?}", stream.text);
            }
        }
        let json = &stream.text[head.len()..];
        return Opened::Refused(serde_json::from_str(json).unwrap_or(Value::Null));
    }
    Opened::Other(head)
}

/// The refusal of a stream past the client's cap: a JSON-RPC error that says what to do.
fn refused_past_the_cap(refusal: &Value) {
    assert_eq!(refusal["id"], 9, "{refusal}");
    assert_eq!(refusal["error"]["code"], -32000, "{refusal}");
    let message = refusal["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!(
            "already has {DEFAULT_TASKS_PER_OWNER} tasks/result streams open"
        )) && message.contains("poll tasks/get"),
        "{refusal}"
    );
}

#[tokio::test]
async fn two_thousand_streams_from_two_addresses_leave_a_third_client_served() {
    let server = serve().await;
    let addr = server.local_addr;
    let crowd = ["203.0.113.1", "203.0.113.2"];
    let mut sessions = Vec::new();
    for forwarded in crowd {
        sessions.push(hanging(addr, forwarded).await);
    }
    // 2,000 attempts, 1,000 per address, 50 at a time; the streams that open stay open.
    let mut held = Vec::new();
    let mut refused = 0;
    for round in 0..40 {
        let attempts = (0..50).map(|k| {
            let n = (round * 50 + k) % 2;
            let (session, task) = &sessions[n];
            open(addr, crowd[n], session, task)
        });
        for opened in futures::future::join_all(attempts).await {
            match opened {
                Opened::Stream(stream) => held.push(stream),
                Opened::Refused(refusal) => {
                    refused_past_the_cap(&refusal);
                    refused += 1;
                }
                Opened::Other(head) => panic!("neither a stream nor a refusal: {head}"),
            }
        }
    }
    assert_eq!(held.len(), 2 * DEFAULT_TASKS_PER_OWNER, "streams held open");
    assert_eq!(refused, 2000 - held.len());
    // A third client: a session, a task, its stream, and a plain call.
    let (session, task) = hanging(addr, "198.51.100.3").await;
    match open(addr, "198.51.100.3", &session, &task).await {
        Opened::Stream(_) => {}
        Opened::Refused(refusal) => panic!("the third client's stream was refused: {refusal}"),
        Opened::Other(head) => panic!("the third client's stream: {head}"),
    }
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "billing_get_invoice", "arguments": {"id": "inv_2026_0001"}}});
    let answered = tasks::forwarded_post(addr, "198.51.100.3", Some(&session), &call).await;
    assert_eq!(answered.status, 200, "{answered:?}");
    assert_eq!(
        answered.message()["result"]["isError"],
        false,
        "{answered:?}"
    );
    drop(held);
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_closed_stream_gives_its_place_back() {
    let server = serve().await;
    let addr = server.local_addr;
    let (session, task) = hanging(addr, "203.0.113.9").await;
    for round in 0..3 {
        let mut held = Vec::new();
        // The server may not have seen the last round's streams close yet: it has a
        // moment (a closed connection is noticed at once; the keep-alive would find it
        // within an interval).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while held.len() < DEFAULT_TASKS_PER_OWNER {
            match open(addr, "203.0.113.9", &session, &task).await {
                Opened::Stream(stream) => held.push(stream),
                Opened::Refused(refusal) => {
                    assert!(
                        tokio::time::Instant::now() < deadline,
                        "round {round}: {} places given back: {refusal}",
                        held.len()
                    );
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Opened::Other(head) => panic!("{head}"),
            }
        }
        match open(addr, "203.0.113.9", &session, &task).await {
            Opened::Refused(refusal) => refused_past_the_cap(&refusal),
            _ => panic!("round {round}: a stream past the cap"),
        }
        // The client goes: every stream closed.
        drop(held);
    }
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

/// How long after `stream` was opened its first SSE comment (a keep-alive) came, if one
/// came within `within`.
async fn first_comment(stream: &mut Streaming, within: Duration) -> Option<Duration> {
    let opened = tokio::time::Instant::now();
    let deadline = opened + within;
    loop {
        let body = stream
            .text
            .split_once("\r\n\r\n")
            .map_or("", |(_, body)| body);
        if body.contains(":\n\n") {
            return Some(opened.elapsed());
        }
        stream.read_until(deadline).await?;
    }
}

/// A differential test: the interval the framework's `tasks/result` stream keeps itself
/// alive at (`mcp/http/keep_alive.rs` takes rmcp's default, which the endpoint keeps) is the
/// interval rmcp keeps its own streams alive at on the same endpoint (the session's GET
/// stream). Should the endpoint's rmcp configuration set another, the two part.
#[tokio::test]
async fn a_silent_stream_is_kept_alive_as_rmcp_keeps_its_own() {
    let server = serve().await;
    let addr = server.local_addr;
    let (session, task) = hanging(addr, "203.0.113.10").await;
    let get_headers = [
        ("accept", "text/event-stream"),
        ("mcp-protocol-version", "2025-11-25"),
        ("mcp-session-id", session.as_str()),
        ("x-forwarded-for", "203.0.113.10"),
    ];
    let mut rmcps = Streaming::open(addr, "GET", &get_headers, None).await;
    let Opened::Stream(mut ours) = open(addr, "203.0.113.10", &session, &task).await else {
        panic!("no stream")
    };
    // rmcp's default is 15 s; a minute bounds a longer one.
    let within = Duration::from_secs(60);
    let (rmcp_at, our_at) = tokio::join!(
        first_comment(&mut rmcps, within),
        first_comment(&mut ours, within)
    );
    let rmcp_at = rmcp_at.unwrap_or_else(|| panic!("rmcp's stream: {:?}", rmcps.text));
    let our_at = our_at.unwrap_or_else(|| panic!("ours: {:?}", ours.text));
    let apart = rmcp_at.abs_diff(our_at);
    assert!(
        apart < Duration::from_secs(2),
        "rmcp's stream's first keep-alive after {rmcp_at:?}, ours after {our_at:?}"
    );
    assert!(
        ours.messages().is_empty(),
        "no message yet: {:?}",
        ours.text
    );
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
