//! A client that goes away gives its slot back at once: the billing example's server on
//! 127.0.0.1 (ephemeral port), served in-process with `spawn_http` so the test reads its
//! guard state, spoken to in raw HTTP/1.1 over TCP so the test controls every connection.
//!
//! `billing.reconcile` runs one call at a time and queues none: while a call holds its slot
//! the next one answers `SERVER_BUSY`. Each test starts a long reconcile, makes its client go
//! away (closes the socket, deletes the session, sends `notifications/cancelled` in another
//! POST) and measures how long the slot takes to come free. Figures print with
//! `--nocapture`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fusion_runtime::Server;
use fusion_runtime::mcp::{HttpOptions, HttpServer, MAX_TRACKED_PER_CLIENT, spawn_http};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const RECONCILE: &str = "billing.reconcile";

/// Long enough that only a cancellation frees the slot within the bounds below.
const LONG_MS: u64 = 4000;

/// The asserted bound from the client going away to the free slot; the target is 100 ms,
/// the margin is for a loaded 2-core CI machine.
const FREED_WITHIN: Duration = Duration::from_secs(1);

/// Any single wait of the tests.
const DEADLINE: Duration = Duration::from_secs(10);

struct Fixture {
    server: Server,
    http: HttpServer,
}

impl Fixture {
    async fn start(stateless: bool) -> Fixture {
        let server = examples::billing::server().unwrap_or_else(|e| panic!("build: {e}"));
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
        let http = spawn_http(
            server.clone(),
            addr,
            HttpOptions::default().stateless(stateless),
        )
        .await
        .unwrap_or_else(|e| panic!("bind: {e}"));
        Fixture { server, http }
    }

    fn addr(&self) -> SocketAddr {
        self.http.local_addr
    }

    fn active(&self) -> usize {
        self.server
            .guard_state(RECONCILE)
            .unwrap_or_else(|| panic!("{RECONCILE} has a concurrency guard"))
            .active
    }

    /// Polls the guard until `active` calls run; how long that took.
    async fn wait_active(&self, active: usize) -> Duration {
        let start = Instant::now();
        while self.active() != active {
            assert!(
                start.elapsed() < DEADLINE,
                "{RECONCILE} still has {} running calls, expected {active}",
                self.active()
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        start.elapsed()
    }

    async fn stop(self) {
        self.http
            .shutdown()
            .await
            .unwrap_or_else(|e| panic!("shutdown: {e}"));
    }
}

/// One HTTP/1.1 connection, written and read by hand.
struct Conn {
    stream: TcpStream,
    read: Vec<u8>,
    version: &'static str,
}

struct Head {
    status: u16,
    session: Option<String>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("connect: {e}"));
        Conn {
            stream,
            read: Vec::new(),
            version: "2025-06-18",
        }
    }

    /// A connection from another loopback address: another client, as the server sees it.
    async fn open_from(local: &str, addr: SocketAddr) -> Conn {
        let socket = TcpSocket::new_v4().unwrap_or_else(|e| panic!("socket: {e}"));
        let local: SocketAddr = local.parse().unwrap_or_else(|e| panic!("{e}"));
        socket
            .bind(local)
            .unwrap_or_else(|e| panic!("bind {local}: {e}"));
        let stream = socket
            .connect(addr)
            .await
            .unwrap_or_else(|e| panic!("connect: {e}"));
        Conn {
            stream,
            read: Vec::new(),
            version: "2025-06-18",
        }
    }

    async fn send(&mut self, method: &str, session: Option<&str>, body: Option<&Value>) {
        // SEP-2243 standard headers, required from 2026-07-28 on.
        let mut standard = String::new();
        if self.version >= "2026-07-28"
            && let Some(body) = body
        {
            if let Some(m) = body["method"].as_str() {
                standard.push_str(&format!("mcp-method: {m}\r\n"));
            }
            if let Some(name) = body["params"]["name"].as_str() {
                standard.push_str(&format!("mcp-name: {name}\r\n"));
            }
        }
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n\
             accept: application/json, text/event-stream\r\n\
             content-type: application/json\r\nmcp-protocol-version: {}\r\n\
             content-length: {}\r\n",
            self.version,
            body.len()
        );
        if let Some(session) = session {
            request.push_str(&format!("mcp-session-id: {session}\r\n"));
        }
        request.push_str(&standard);
        request.push_str("\r\n");
        request.push_str(&body);
        self.stream
            .write_all(request.as_bytes())
            .await
            .unwrap_or_else(|e| panic!("write: {e}"));
    }

    async fn post(&mut self, session: Option<&str>, body: &Value) {
        self.send("POST", session, Some(body)).await;
    }

    /// Reads until `done` holds for what was read, within the deadline.
    async fn read_until(&mut self, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        let mut chunk = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&self.read).into_owned();
            if done(&text) {
                return text;
            }
            let left = DEADLINE.saturating_sub(start.elapsed());
            let n = tokio::time::timeout(left, self.stream.read(&mut chunk))
                .await
                .unwrap_or_else(|_| panic!("no answer within {DEADLINE:?}; read so far: {text}"))
                .unwrap_or_else(|e| panic!("read: {e}"));
            assert!(
                n > 0,
                "the server closed the connection; read so far: {text}"
            );
            self.read.extend_from_slice(&chunk[..n]);
        }
    }

    async fn head(&mut self) -> Head {
        let text = self.read_until(|t| t.contains("\r\n\r\n")).await;
        let head = text.split("\r\n\r\n").next().unwrap_or_default();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {head}"));
        let session = head.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        });
        Head { status, session }
    }

    /// The JSON-RPC answer to request `id`: a JSON body (by its length) or an SSE event (a
    /// whole `data:` line).
    async fn answer(&mut self, id: u64) -> Value {
        let key = format!("\"id\":{id}");
        let text = self.read_until(|t| t.contains("\r\n\r\n")).await;
        let (head, _) = text.split_once("\r\n\r\n").unwrap_or_default();
        let length = head.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        });
        let json = match length {
            Some(length) => {
                let text = self
                    .read_until(|t| {
                        t.split_once("\r\n\r\n")
                            .is_some_and(|(_, b)| b.len() >= length)
                    })
                    .await;
                let (_, body) = text.split_once("\r\n\r\n").unwrap_or_default();
                body.to_owned()
            }
            None => {
                let event = |t: &str| {
                    t.split('\n')
                        .rev()
                        .skip(1) // what follows the last newline may be incomplete
                        .find(|l| l.starts_with("data: ") && l.contains(&key))
                        .map(|l| l["data: ".len()..].to_owned())
                };
                let text = self.read_until(|t| event(t).is_some()).await;
                event(&text).unwrap_or_default()
            }
        };
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("answer {json}: {e}"))
    }
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

fn reconcile(id: u64, duration_ms: u64) -> Value {
    call(
        id,
        "billing_reconcile",
        json!({ "duration_ms": duration_ms }),
    )
}

fn cancelled(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "the user gave up"}})
}

/// The tool result's text, and whether it is an error.
fn outcome(answer: &Value) -> (String, bool) {
    let result = &answer["result"];
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {answer}"))
        .to_owned();
    (text, result["isError"].as_bool().unwrap_or(false))
}

/// A finished reconcile: a success that took `took_ms`.
fn assert_reconciled(answer: &Value, took_ms: u64) {
    let (text, is_error) = outcome(answer);
    assert!(!is_error, "expected a success, got {text}");
    assert_eq!(
        answer["result"]["structuredContent"]["took_ms"],
        json!(took_ms),
        "{answer}"
    );
}

/// An initialized session (2025-06-18 handshake); its id.
async fn open_session(addr: SocketAddr) -> String {
    let mut conn = Conn::open(addr).await;
    conn.post(
        None,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "hostile-cancel", "version": "0"}}}),
    )
    .await;
    let head = conn.head().await;
    assert_eq!(head.status, 200);
    let session = head
        .session
        .unwrap_or_else(|| panic!("no mcp-session-id header"));
    conn.answer(0).await;
    let mut conn = Conn::open(addr).await;
    conn.post(
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(conn.head().await.status, 202);
    session
}

/// Starts a long reconcile on a connection of its own; returns once it holds the slot (a
/// session's SSE answer has begun; a stateless JSON answer has no head before the call ends).
async fn start_long(f: &Fixture, conn: &mut Conn, session: Option<&str>, id: u64) {
    conn.post(session, &reconcile(id, LONG_MS)).await;
    if session.is_some() {
        assert_eq!(conn.head().await.status, 200);
    }
    f.wait_active(1).await;
}

/// Polls the slot free after the client went away at `gone`; asserts the bound and prints
/// the figure.
async fn assert_freed_since(f: &Fixture, gone: Instant, what: &str) {
    f.wait_active(0).await;
    let took = gone.elapsed();
    println!(
        "{what}: slot free {:.1} ms after the client went away",
        took.as_secs_f64() * 1e3
    );
    assert!(
        took <= FREED_WITHIN,
        "{what}: the slot took {took:?} to come free (bound {FREED_WITHIN:?})"
    );
}

/// The slot is usable again: a short reconcile succeeds instead of `SERVER_BUSY`.
async fn assert_next_call_runs(f: &Fixture, session: Option<&str>, id: u64) {
    let mut conn = Conn::open(f.addr()).await;
    conn.post(session, &reconcile(id, 10)).await;
    assert_reconciled(&conn.answer(id).await, 10);
}

#[tokio::test]
async fn stateful_closing_the_stream_mid_call_frees_the_slot() {
    let f = Fixture::start(false).await;
    let session = open_session(f.addr()).await;
    let mut conn = Conn::open(f.addr()).await;
    start_long(&f, &mut conn, Some(&session), 1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        f.active(),
        1,
        "the call still runs before the client goes away"
    );
    let gone = Instant::now();
    drop(conn);
    assert_freed_since(&f, gone, "stateful, socket closed").await;
    assert_next_call_runs(&f, Some(&session), 2).await;
    f.stop().await;
}

#[tokio::test]
async fn stateful_deleting_the_session_cancels_its_calls() {
    let f = Fixture::start(false).await;
    let session = open_session(f.addr()).await;
    // The call's connection stays open: only the DELETE can free the slot.
    let mut conn = Conn::open(f.addr()).await;
    start_long(&f, &mut conn, Some(&session), 1).await;
    let gone = Instant::now();
    let mut delete = Conn::open(f.addr()).await;
    delete.send("DELETE", Some(&session), None).await;
    let status = delete.head().await.status;
    assert!((200..300).contains(&status), "DELETE answered {status}");
    assert_freed_since(&f, gone, "stateful, session deleted").await;
    let other = open_session(f.addr()).await;
    assert_next_call_runs(&f, Some(&other), 2).await;
    drop(conn);
    f.stop().await;
}

#[tokio::test]
async fn stateless_cancelled_notification_from_the_same_client_cancels_the_call() {
    let f = Fixture::start(true).await;
    let mut conn = Conn::open(f.addr()).await;
    start_long(&f, &mut conn, None, 41).await;
    let gone = Instant::now();
    let mut cancel = Conn::open(f.addr()).await;
    cancel.post(None, &cancelled(41)).await;
    assert_eq!(cancel.head().await.status, 202);
    assert_freed_since(&f, gone, "stateless, notifications/cancelled").await;
    let (text, is_error) = outcome(&conn.answer(41).await);
    assert!(is_error && text.contains("CANCELLED"), "{text}");
    assert_next_call_runs(&f, None, 42).await;
    f.stop().await;
}

#[tokio::test]
async fn stateless_cancelled_notification_from_another_client_does_not_cancel() {
    let f = Fixture::start(true).await;
    let mut conn = Conn::open(f.addr()).await;
    let took_ms = 1500;
    conn.post(None, &reconcile(41, took_ms)).await;
    f.wait_active(1).await;
    // Same request id, another client (127.0.0.2 is loopback too).
    let mut other = Conn::open_from("127.0.0.2:0", f.addr()).await;
    other.post(None, &cancelled(41)).await;
    assert_eq!(other.head().await.status, 202);
    assert_reconciled(&conn.answer(41).await, took_ms);
    f.stop().await;
}

#[tokio::test]
async fn stateless_closing_the_connection_cancels_the_call() {
    let f = Fixture::start(true).await;
    let mut conn = Conn::open(f.addr()).await;
    start_long(&f, &mut conn, None, 1).await;
    let gone = Instant::now();
    drop(conn);
    assert_freed_since(&f, gone, "stateless, socket closed").await;
    assert_next_call_runs(&f, None, 2).await;
    f.stop().await;
}

#[tokio::test]
async fn stateless_finished_calls_leave_nothing_tracked() {
    let f = Fixture::start(true).await;
    // More finished calls than one client may have tracked: were any left behind, the list
    // would be full and the notification below would not reach the long call.
    for id in 0..(MAX_TRACKED_PER_CLIENT as u64 + 8) {
        let mut conn = Conn::open(f.addr()).await;
        conn.post(None, &call(id, "billing_list_invoices", json!({})))
            .await;
        let (text, is_error) = outcome(&conn.answer(id).await);
        assert!(!is_error, "{text}");
    }
    let id = 10_000;
    let mut conn = Conn::open(f.addr()).await;
    start_long(&f, &mut conn, None, id).await;
    let gone = Instant::now();
    let mut cancel = Conn::open(f.addr()).await;
    cancel.post(None, &cancelled(id)).await;
    assert_eq!(cancel.head().await.status, 202);
    assert_freed_since(&f, gone, "stateless, cancelled after many calls").await;
    f.stop().await;
}

#[tokio::test]
async fn a_finished_call_is_not_affected_by_its_stream_closing() {
    let f = Fixture::start(false).await;
    let session = open_session(f.addr()).await;
    let took_ms = 1000;
    let mut long = Conn::open(f.addr()).await;
    long.post(Some(&session), &reconcile(1, took_ms)).await;
    assert_eq!(long.head().await.status, 200);
    f.wait_active(1).await;
    // Another call of the session finishes, its answer is read, its socket closes.
    let mut short = Conn::open(f.addr()).await;
    short
        .post(Some(&session), &call(2, "billing_list_invoices", json!({})))
        .await;
    let (text, is_error) = outcome(&short.answer(2).await);
    assert!(!is_error, "{text}");
    drop(short);
    // The session's running call is untouched, and so is the finished call's own result.
    assert_reconciled(&long.answer(1).await, took_ms);
    // Its stream closing after the answer changes nothing either.
    drop(long);
    f.wait_active(0).await;
    assert_next_call_runs(&f, Some(&session), 3).await;
    f.stop().await;
}

#[tokio::test]
async fn sessionless_2026_07_28_call_is_cancelled_by_its_clients_notification() {
    // The default (stateful) server serves a 2026-07-28 request statelessly.
    let f = Fixture::start(false).await;
    let version = "2026-07-28";
    let mut call = reconcile(7, LONG_MS);
    call["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut conn = Conn::open(f.addr()).await;
    conn.version = version;
    conn.post(None, &call).await;
    f.wait_active(1).await;
    let gone = Instant::now();
    let mut cancel = Conn::open(f.addr()).await;
    cancel.version = version;
    cancel.post(None, &cancelled(7)).await;
    assert_eq!(cancel.head().await.status, 202);
    assert_freed_since(&f, gone, "2026-07-28, notifications/cancelled").await;
    let (text, is_error) = outcome(&conn.answer(7).await);
    assert!(is_error && text.contains("CANCELLED"), "{text}");
    f.stop().await;
}
