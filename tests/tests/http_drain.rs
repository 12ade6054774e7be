//! A drain that cuts nothing (issue 48), on a real `spawn_http` server over loopback:
//!
//! - Under keep-alive load — 8 clients each looping `tools/call` POSTs on one keep-alive
//!   connection, raw HTTP/1.1 — the server's shutdown answers every request a client wrote,
//!   or its connection was closed before the request was written (the client sees the
//!   close before it writes): no request is written and then met by a closed connection. The
//!   answers after the drain began say `Connection: close`. Three drains in a row.
//! - A 2025 session's GET stream ends when the drain starts: the shutdown (grace 10 s) is
//!   over well before the grace, and the stream ended before it was.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fusion_runtime::context::CancellationToken;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_tests::raw_http::Streaming;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The grace the drains are given: far longer than any of them may take.
const GRACE: Duration = Duration::from_secs(10);

async fn serve(stateless: bool, shutdown: &CancellationToken) -> HttpServer {
    let server = examples::billing::builder()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let options = HttpOptions::default()
        .stateless(stateless)
        .drain_grace(GRACE)
        .shutdown(shutdown.clone());
    spawn_http(server, SocketAddr::from(([127, 0, 0, 1], 0)), options)
        .await
        .unwrap_or_else(|e| panic!("spawn: {e}"))
}

/// How one client's loop ended.
#[derive(Debug, Default)]
struct Ended {
    /// Requests answered `200`.
    answered: usize,
    /// Answers that said `Connection: close` (the client then stops, as it would go to
    /// another instance).
    told_to_close: usize,
    /// The connection was closed before a request was written (seen before writing, or the
    /// write itself failed).
    closed_before_writing: usize,
    /// Requests written and met by a closed connection, unanswered: what must not happen.
    cut: Vec<String>,
}

/// One HTTP response read from `stream`: its head (lowercased) and body, or why none came.
async fn response(stream: &mut TcpStream) -> Result<(String, String), String> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await {
            Ok(Ok(0)) => return Err(format!("closed after {} bytes", raw.len())),
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => return Err(format!("{e} after {} bytes", raw.len())),
            Err(_) => return Err("no answer within 10 s".to_owned()),
        }
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no content-length: {head}"))?;
    while raw.len() < head_end + length {
        match stream.read(&mut buf).await {
            Ok(0) => return Err("closed within the body".to_owned()),
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) => return Err(format!("{e} within the body")),
        }
    }
    let body = String::from_utf8_lossy(&raw[head_end..head_end + length]).to_string();
    Ok((head, body))
}

/// Whether the server closed `stream` (read without waiting: an end of stream or a reset).
fn closed(stream: &TcpStream) -> Result<bool, String> {
    let mut byte = [0u8; 1];
    match stream.try_read(&mut byte) {
        Ok(0) => Ok(true),
        Ok(_) => Err("bytes nobody asked for".to_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
        Err(_) => Ok(true),
    }
}

/// Loops `tools/call` POSTs on one keep-alive connection until told to close, the
/// connection closes, or `stop` (a bound of its own) is set.
async fn client(addr: SocketAddr, n: usize, stop: Arc<AtomicBool>) -> Ended {
    let mut ended = Ended::default();
    let Ok(mut stream) = TcpStream::connect(addr).await else {
        ended.closed_before_writing += 1;
        return ended;
    };
    let _ = stream.set_nodelay(true);
    let mut id = 0u64;
    while !stop.load(Ordering::Relaxed) {
        id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "billing_list_invoices", "arguments": {}}})
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        );
        match closed(&stream) {
            Ok(true) => {
                ended.closed_before_writing += 1;
                return ended;
            }
            Ok(false) => {}
            Err(e) => {
                ended.cut.push(format!("client {n} request {id}: {e}"));
                return ended;
            }
        }
        if stream.write_all(request.as_bytes()).await.is_err() {
            ended.closed_before_writing += 1;
            return ended;
        }
        match response(&mut stream).await {
            Ok((head, body)) => {
                assert!(head.starts_with("http/1.1 200"), "{head}{body}");
                assert!(body.contains("\"result\""), "{body}");
                ended.answered += 1;
                if head.contains("\r\nconnection: close\r\n") {
                    ended.told_to_close += 1;
                    return ended;
                }
            }
            Err(why) => {
                ended.cut.push(format!("client {n} request {id}: {why}"));
                return ended;
            }
        }
    }
    ended
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_under_keep_alive_load_answers_every_request_written() {
    for round in 0..3 {
        let shutdown = CancellationToken::new();
        let server = serve(true, &shutdown).await;
        let addr = server.local_addr;
        let stop = Arc::new(AtomicBool::new(false));
        let clients: Vec<_> = (0..8)
            .map(|n| tokio::spawn(client(addr, n, Arc::clone(&stop))))
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let started = Instant::now();
        server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
        let drained = started.elapsed();
        // Bounded: whatever still loops stops now.
        stop.store(true, Ordering::Relaxed);
        let mut all = Ended::default();
        for c in clients {
            let ended = c.await.unwrap_or_else(|e| panic!("{e}"));
            all.answered += ended.answered;
            all.told_to_close += ended.told_to_close;
            all.closed_before_writing += ended.closed_before_writing;
            all.cut.extend(ended.cut);
        }
        assert!(
            all.cut.is_empty(),
            "round {round}: requests written and cut: {:?} ({all:?})",
            all.cut
        );
        assert!(all.answered > 8, "round {round}: no load: {all:?}");
        assert_eq!(
            all.told_to_close + all.closed_before_writing,
            8,
            "round {round}: every client was told to close or saw the close: {all:?}"
        );
        // The clients were busy when the drain began: answers after it said `Connection:
        // close` (without it, every client would only have seen its connection close).
        assert!(
            all.told_to_close > 0,
            "round {round}: no answer said Connection: close: {all:?}"
        );
        assert!(
            drained < GRACE / 2,
            "round {round}: the drain took {drained:?}"
        );
    }
}

#[tokio::test]
async fn a_2025_get_stream_ends_when_the_drain_starts() {
    let shutdown = CancellationToken::new();
    let server = serve(false, &shutdown).await;
    let addr = server.local_addr;
    let session = Streaming::initialize(addr).await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut with_close = headers.to_vec();
    with_close.push(("connection", "close"));
    let mut ack = Streaming::open(addr, "POST", &with_close, Some(&initialized)).await;
    ack.until("HTTP/1.1 202").await;
    let mut stream = Streaming::open(addr, "GET", &headers, None).await;
    let head = stream.until("\r\n\r\n").await.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("text/event-stream"), "{head}");

    let started = Instant::now();
    let drain = tokio::spawn(server.shutdown());
    // The stream's body ends (its last chunk, or the connection's end) well within the grace.
    let mut rest = Vec::new();
    let mut buf = [0u8; 4096];
    let ended = loop {
        match tokio::time::timeout(GRACE / 2, stream.stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break started.elapsed(),
            Ok(Ok(n)) => {
                rest.extend_from_slice(&buf[..n]);
                if rest.ends_with(b"0\r\n\r\n") {
                    break started.elapsed();
                }
            }
            Err(_) => panic!(
                "the GET stream is still open {:?} into the drain",
                started.elapsed()
            ),
        }
    };
    let done = tokio::time::timeout(GRACE / 2, drain)
        .await
        .unwrap_or_else(|_| panic!("the drain still runs {:?} in", started.elapsed()))
        .unwrap_or_else(|e| panic!("{e}"));
    done.unwrap_or_else(|e| panic!("{e}"));
    let drained = started.elapsed();
    assert!(
        ended <= drained,
        "the stream ended ({ended:?}) after the drain did ({drained:?})"
    );
    assert!(drained < GRACE / 2, "the drain took {drained:?}");
}

/// A call still open when the drain's grace is over — a refund waiting for the user's
/// answer to its question, in a 2025 session — gets its answer on its own stream before the
/// stream ends: `SERVER_BUSY`, the server is shutting down (a client that reads it can tell
/// it from a lost answer and send the call elsewhere), not a silent end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_still_waiting_when_the_grace_is_over_is_answered() {
    let shutdown = CancellationToken::new();
    let server = examples::billing::builder()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let options = HttpOptions::default()
        .drain_grace(Duration::from_millis(500))
        .shutdown(shutdown.clone());
    let server = spawn_http(server, SocketAddr::from(([127, 0, 0, 1], 0)), options)
        .await
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let addr = server.local_addr;
    // A session whose client can answer questions.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "drain", "version": "1"}}});
    let mut post = Streaming::open(addr, "POST", &[("connection", "close")], Some(&init)).await;
    let head = post.until("\"result\"").await.to_owned();
    let session = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("mcp-session-id:")
                .map(|v| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session in {head}"));
    let with = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
        ("connection", "close"),
    ];
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut ack = Streaming::open(addr, "POST", &with, Some(&initialized)).await;
    ack.until("202").await;
    let refund = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "billing_refund",
        "arguments": {"invoice_id": "inv_2026_0003", "amount_cents": 500}}});
    let mut call = Streaming::open(addr, "POST", &with, Some(&refund)).await;
    call.until("elicitation/create").await;
    // The question stays unanswered; the server shuts down.
    let started = Instant::now();
    shutdown.cancel();
    call.read_to_end().await;
    let answer = call
        .messages()
        .into_iter()
        .find(|m| m["id"] == 5)
        .unwrap_or_else(|| {
            panic!(
                "no answer to the call before its stream ended: {}",
                call.text
            )
        });
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("code=\"SERVER_BUSY\"") && text.contains("shutting down"),
        "{text}"
    );
    server.wait().await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the shutdown took {:?}",
        started.elapsed()
    );
}
